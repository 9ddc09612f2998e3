"""index.layers: where the layers live, the registry as the hooks read it, and merging hits across layers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lessonbank import config
from lessonbank.index import compiled_build, compiled_read, layers
from lessonbank.state import records, statedir
from tests.hook_support import lesson, make_bank


def test_same_meaning_is_the_duplicate_gates_default() -> None:
    default = config.DEFAULTS["gates"]["duplicate_threshold"].default
    assert default == layers.SAME_MEANING


@pytest.mark.parametrize(
    ("xdg", "home", "expected"),
    [
        ("/data", "/home/u", "/data/lessonbank"),
        ("/data/", "/home/u", "/data/lessonbank"),
        ("relative/data", "/home/u", "/home/u/.local/share/lessonbank"),  # XDG wants absolute paths
        ("", "/home/u", "/home/u/.local/share/lessonbank"),
        ("", "", None),
    ],
)
def test_data_dir(monkeypatch: pytest.MonkeyPatch, xdg: str, home: str, expected: str | None) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", xdg)
    monkeypatch.setenv("HOME", home)
    assert layers.data_dir() == expected


@pytest.mark.parametrize(
    ("name", "ok"),
    [("acme", True), ("web-team_2.x", True), ("", False), ("-x", False), (".x", False), ("A", False),
     ("a/b", False), ("a" * 64, True), ("a" * 65, False), ("é", False)],
)  # fmt: skip
def test_valid_name(name: str, ok: bool) -> None:
    assert layers.valid_name(name) is ok


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"teams": {"acme": {"url": "u", "branch": "main"}}}', {"acme": {"url": "u", "branch": "main"}}),
        ('{"teams": {"acme": {"url": "u"}, "Bad/Name": {"url": "v"}}}', {"acme": {"url": "u", "branch": ""}}),
        ('{"teams": []}', {}),
        ("not json", {}),
        ("[]", {}),
        ("", {}),
    ],
)
def test_read_registry(tmp_path: Path, text: str, expected: dict) -> None:
    (tmp_path / layers.REGISTRY).write_text(text)
    assert layers.read_registry(str(tmp_path)) == expected


def test_other_layers_are_the_personal_bank_then_registered_teams_that_exist(tmp_path: Path) -> None:
    data = tmp_path / "data"
    assert layers.other_layers(str(data)) == []
    make_bank(data / "personal", [])
    make_bank(data / "teams/zeta", [])
    make_bank(data / "teams/alpha", [])
    make_bank(data / "teams/stray", [])  # a folder nobody registered is not a layer
    (data / "remotes.json").write_text(json.dumps({"teams": {n: {"url": "u", "branch": "main"} for n in ("zeta", "alpha", "gone")}}))
    assert layers.other_layers(str(data)) == [
        ("personal", f"{data}/personal"),
        ("team:alpha", f"{data}/teams/alpha"),
        ("team:zeta", f"{data}/teams/zeta"),
    ]


def _layered(tmp_path: Path, banks: dict[str, list]) -> layers.Layered:
    out = []
    for name, lessons in banks.items():
        root = tmp_path / name.replace(":", "-")
        make_bank(root, lessons)
        out.append((name, layers.index(str(root), str(root / statedir.STATE))))
    return layers.Layered(out)


def _hits(index: layers.Layered, position: int, slugs: list[str], score: tuple = ()) -> list[tuple]:
    """Hits (number, slug, priority, score) of these slugs in layer `position`, in the order given."""
    found = {}
    _, layer_index = index.layers[position]
    for slug in slugs:  # a lesson's number comes from its slug (no two collide here)
        number = compiled_build.base_number(slug)
        try:
            record = layer_index.lesson(number)  # type: ignore[attr-defined]
        except (KeyError, EOFError):  # not in this layer
            continue
        if record[compiled_read.L_SLUG] == slug:
            found[slug] = (number, slug, record[compiled_read.L_PRIORITY], score)
    return [found[slug] for slug in slugs if slug in found]


def _merged(index: layers.Layered, lists: list[list[tuple]]) -> list[tuple]:
    return [(index.layer(n), slug, replaced) for n, slug, _, replaced in index.dedupe(index.ranked(lists))]


def test_merge_orders_by_priority_then_confidence_then_layer(tmp_path: Path) -> None:
    index = _layered(tmp_path, {
        "project": [lesson("p-low", do="alpha bravo", priority=2), lesson("p-tie", do="charlie delta", priority=5)],
        "team:a": [lesson("t-high", do="echo foxtrot", priority=8), lesson("t-tie", do="golf hotel", priority=5)],
    })  # fmt: skip
    assert _merged(index, [_hits(index, 0, ["p-tie", "p-low"]), _hits(index, 1, ["t-high", "t-tie"])]) == [
        ("team:a", "t-high", ()),
        ("project", "p-tie", ()),
        ("team:a", "t-tie", ()),
        ("project", "p-low", ()),
    ]


def test_merge_lets_the_earlier_layer_win_a_repeat(tmp_path: Path) -> None:
    index = _layered(tmp_path, {
        "project": [lesson("shared", do="use npm ci in the pipeline", priority=1)],
        "personal": [lesson("mine", when="working on shared", do="use npm ci in the pipeline", priority=9),
                     lesson("other", do="rebase before pushing", priority=3)],
        "team:a": [lesson("shared", do="something else entirely", priority=5)],
    })  # fmt: skip
    lists = [_hits(index, 0, ["shared"]), _hits(index, 1, ["mine", "other"]), _hits(index, 2, ["shared"])]
    merged = _merged(index, lists)
    # personal "mine" (same words) and the team's "shared" (same slug) give way to the project's lesson.
    assert merged == [("personal", "mine", ()), ("team:a", "shared", ()), ("personal", "other", ()),
                      ("project", "shared", ("mine", "shared"))]  # fmt: skip


def test_one_layer_is_never_deduplicated_against_itself(tmp_path: Path) -> None:
    index = _layered(tmp_path, {"project": [lesson("a-one", do="same words here"), lesson("a-two", do="same words here")]})
    assert [slug for _, slug, _ in _merged(index, [_hits(index, 0, ["a-one", "a-two"])])] == ["a-one", "a-two"]


def test_a_higher_score_ranks_first_whatever_the_priority(tmp_path: Path) -> None:
    index = _layered(tmp_path, {
        "project": [lesson("p-urgent", do="alpha bravo", priority=9)],
        "team:a": [lesson("t-on-topic", do="charlie delta", priority=1)],
    })  # fmt: skip
    lists = [_hits(index, 0, ["p-urgent"], (2, 1)), _hits(index, 1, ["t-on-topic"], (3, 1))]
    assert _merged(index, lists) == [("team:a", "t-on-topic", ()), ("project", "p-urgent", ())]


def test_ledger_rows_name_their_layer_and_old_rows_read_as_project(tmp_path: Path) -> None:
    folder = str(tmp_path)
    old = {"session": "s", "turn": "1", "lesson": "old", "event": "PreToolUse", "bytes": 3, "arm": "on", "injected": True}
    (tmp_path / statedir.LEDGER).write_text(json.dumps(old) + "\n")
    records.record_injection(folder, "s", "2", "new", "UserPromptSubmit", 5, "on", True, "", "team:acme")
    rows, skipped = records.read_ledger(folder)
    assert skipped == 0
    assert [(r["lesson"], r["tool_use_id"], r["layer"]) for r in rows] == [("old", "", "project"), ("new", "", "team:acme")]
    assert json.loads((tmp_path / statedir.LEDGER).read_text().splitlines()[1]) == {
        "session": "s", "turn": "2", "lesson": "new", "event": "UserPromptSubmit", "bytes": 5, "arm": "on",
        "injected": True, "tool_use_id": "", "layer": "team:acme",
    }  # fmt: skip


def test_a_broken_layer_is_left_out_and_logged_the_project_still_answers(tmp_path: Path, isolated_home: Path) -> None:
    project = tmp_path / "proj"
    make_bank(project, [lesson("mine")])
    data = isolated_home / ".local/share/lessonbank"
    team = data / "teams/acme"
    team.mkdir(parents=True)
    (team / "bank.toml").write_text("")
    (team / "INDEX.md").write_text("no table here\n")
    (data / "remotes.json").write_text(json.dumps({"teams": {"acme": {"url": "u", "branch": "main"}}}))
    state_dir = str(project / statedir.STATE)
    found = layers.indexes(str(project), state_dir)
    assert [name for name, _ in found] == ["project"]
    assert "layer team:acme" in (project / statedir.STATE / statedir.HOOK_LOG).read_text()
    assert "INDEX.md has no lesson table" in (project / statedir.STATE / statedir.HOOK_LOG).read_text()
