"""index.derived: incremental `bank index` gives the bytes of a build from nothing, on random edit sequences."""

from __future__ import annotations

import marshal
import os
import random
import re
import shutil
from pathlib import Path

import pytest

import lessonbank.bank.lesson
from lessonbank.bank import catalog, render
from lessonbank.bank.store import Bank
from lessonbank.index import compiled_read, compiled_update, derived, listing
from lessonbank.state import statedir
from tests.hook_support import lesson, make_bank

TOOLS = ("cargo", "npm", "pytest", "docker", "git")


def _random_lesson(rng: random.Random, slug: str) -> lessonbank.bank.lesson.Lesson:
    tool = rng.choice(TOOLS)
    shape = rng.random()
    return lesson(
        slug,
        when=f"running {tool} {rng.choice(['build', 'test', 'push'])} in {rng.choice(['ci', 'docker', 'a venv'])}",
        do=f"pass --{rng.choice(['locked', 'frozen', 'no-cache'])} to {tool}",
        commands=[rf"\b{tool}\s+(?:build|test)\b(?!.*--locked)"] if shape < 0.5 else [],
        paths=[f"src/**/*.{rng.choice(['py', 'rs', 'ts'])}"] if shape > 0.3 else [],
        keywords=[tool, rng.choice(["cache", "lock", "tty"])],
        tags=[f"tool:{tool}"],
        priority=rng.randint(1, 10),
        confidence=round(rng.random(), 2),
        status=rng.choice(["active", "active", "active", "needs-review", "disabled"]),
        body="\n".join(f"- line {i}" for i in range(rng.choice([0, 2, 12]))),
    )


def _edit(rng: random.Random, bank: Bank, step: int) -> str:
    """One random change to lessons/: a new, edited, deleted, broken or touched file (its name)."""
    paths = bank.lesson_paths()
    kinds = ["new", "edit", "edit", "seen", "delete", "broken", "touch", "bad value", "reword", "reword"]
    kind = rng.choice(kinds) if paths else "new"
    if kind == "new":
        new = _random_lesson(rng, f"new-{step}")
        (bank.lessons_dir / f"{new.slug}.md").write_text(lessonbank.bank.lesson.render(new), encoding="utf-8")
        return f"{new.slug}.md"
    path = rng.choice(paths)
    text = path.read_text(encoding="utf-8")
    if kind == "delete":
        path.unlink()
    elif kind == "broken":
        path.write_text("---\nslug: [unclosed\n---\n", encoding="utf-8")
    elif kind == "touch":
        os.utime(path)
    elif kind == "bad value":  # parses, but is left out of everything generated
        path.write_text(re.sub(r"(?m)^priority: \d+$", "priority: 99", text), encoding="utf-8")
    elif kind == "reword":  # only its wording: the compiled index is patched, not joined anew
        words = " ".join(rng.sample(["tests", "cache", "locked", "quartz", f"word{step}", "docker"], 2))
        path.write_text(text.replace("\ndo: ", f"\ndo: {words} ", 1), encoding="utf-8")
    elif kind == "seen":
        path.write_text(text.replace("seen: 1\n", "seen: 2\n", 1), encoding="utf-8")
    else:
        try:
            old = lessonbank.bank.lesson.parse(text)
        except Exception:
            old = lesson("fixed")
        replaced = _random_lesson(rng, path.stem)
        replaced.id = old.id if old.id.startswith("01") else replaced.id
        path.write_text(lessonbank.bank.lesson.render(replaced), encoding="utf-8")
    return path.name


def _without_key(blob: bytes) -> bytes:
    """The compiled file with its staleness key (stat of INDEX.md) left out of the meta."""
    size = int.from_bytes(blob[12:16], "little")
    meta = marshal.loads(blob[16 : 16 + size])
    meta.pop("key")
    return marshal.dumps(meta) + blob[16 + size :]


def _outputs(root: Path) -> tuple[str, str, bytes]:
    compiled = (root / statedir.STATE / compiled_read.NAME).read_bytes()
    return (
        (root / "INDEX.md").read_text(encoding="utf-8"),
        (root / "BANK.md").read_text(encoding="utf-8"),
        _without_key(compiled),
    )


def _full_build(bank: Bank, where: Path) -> tuple[str, str, bytes]:
    """The same lessons built from nothing in another folder: no cache, no generated file."""
    shutil.rmtree(where, ignore_errors=True)
    where.mkdir()
    shutil.copy(bank.root / "bank.toml", where / "bank.toml")
    shutil.copytree(bank.lessons_dir, where / "lessons")
    render.regenerate(Bank.open(where))
    return _outputs(where)


@pytest.mark.parametrize(("seed", "settled"), [(1, False), (2, True), (3, True)])
def test_incremental_index_equals_a_full_rebuild(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int, settled: bool
) -> None:
    """`settled`: every file counts as old enough for its stat key to be trusted (mtimes moved on
    by hand, so two writes within one clock tick cannot hide a change); else each run hashes."""
    if settled:
        monkeypatch.setattr(derived, "RACY_NS", -(10**18))
    rng = random.Random(seed)
    bank = make_bank(tmp_path / "b", [_random_lesson(rng, f"l-{i}") for i in range(12)])
    clock = 1_600_000_000
    for step in range(25):
        for _ in range(rng.randint(1, 3)):
            _edit(rng, bank, step)
        cache = opened = None
        if rng.random() < 0.3:  # as capture does: the cache read, one file written, then regenerate
            opened = Bank.open(bank.root)
            cache = render.open_cache(opened)
            written = _edit(rng, bank, 100 + step)
        if settled:
            clock += 10
            for path in bank.lesson_paths():
                if path.stat().st_mtime > clock - 5:
                    os.utime(path, (clock, clock))
        if rng.random() < 0.3:  # another command sees the change first (its cache save must not hide it)
            catalog.summaries(Bank.open(bank.root))
        if cache is not None and opened is not None:
            render.regenerate(opened, cache=cache, written=[written])
        else:
            render.regenerate(Bank.open(bank.root))
        assert _outputs(bank.root) == _full_build(bank, tmp_path / "full"), f"step {step}"
        problems, count = catalog.check(Bank.open(bank.root))
        assert count == len(bank.lesson_paths())


def test_nothing_is_parsed_or_written_when_nothing_changed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(derived, "RACY_NS", -(10**18))
    bank = make_bank(tmp_path / "b", [lesson(f"q-{i}", commands=[rf"\bq{i}\b"]) for i in range(4)])
    render.regenerate(Bank.open(bank.root))
    stamps = {p: p.stat().st_mtime_ns for p in [bank.root / "INDEX.md", bank.root / "BANK.md", *bank.state_dir.iterdir()]}
    monkeypatch.setattr(lessonbank.bank.lesson, "parse", lambda text: pytest.fail("nothing should be parsed"))
    assert [action for _, action in render.regenerate(Bank.open(bank.root))] == ["unchanged"] * 3
    assert {p: p.stat().st_mtime_ns for p in stamps} == stamps


def test_a_changed_file_is_parsed_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(derived, "RACY_NS", -(10**18))
    bank = make_bank(tmp_path / "b", [lesson(f"p-{i}") for i in range(5)])
    render.regenerate(Bank.open(bank.root))
    path = bank.lessons_dir / "p-2.md"
    path.write_text(path.read_text(encoding="utf-8").replace("remember p-2", "remember two"), encoding="utf-8")
    parsed: list[str] = []
    real = lessonbank.bank.lesson.parse
    monkeypatch.setattr(lessonbank.bank.lesson, "parse", lambda text: parsed.append(text) or real(text))
    assert dict(render.regenerate(Bank.open(bank.root)))["INDEX.md"] == "update"
    assert len(parsed) == 1 and "remember two" in parsed[0]
    assert "remember two" in (bank.root / "INDEX.md").read_text(encoding="utf-8")


def test_a_touched_file_is_hashed_not_parsed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(derived, "RACY_NS", -(10**18))
    bank = make_bank(tmp_path / "b", [lesson("t-1")])
    render.regenerate(Bank.open(bank.root))
    os.utime(bank.lessons_dir / "t-1.md", (1_700_000_000, 1_700_000_000))
    monkeypatch.setattr(lessonbank.bank.lesson, "parse", lambda text: pytest.fail("same bytes: not parsed"))
    assert catalog.summaries(Bank.open(bank.root))[0][0] == "t-1"


def test_check_reports_each_file_and_duplicates_from_the_cache(tmp_path: Path) -> None:
    one, two = "01JBQX0000000000000000000A", "01JBQX0000000000000000000B"
    bank = make_bank(tmp_path / "b", [lesson("ok-one", id=one), lesson("ok-two", id=two)])
    text = (bank.lessons_dir / "ok-one.md").read_text(encoding="utf-8")
    (bank.lessons_dir / "copy.md").write_text(text, encoding="utf-8")
    (bank.lessons_dir / "bad.md").write_bytes(b"\xff\xfe")
    problems, count = catalog.check(Bank.open(bank.root))
    assert count == 4
    same = one
    assert [(p.path.name, p.line, p.message) for p in problems] == [
        ("bad.md", 1, "not UTF-8 text"),
        ("copy.md", 2, f"duplicate id {same!r} (also in ok-one.md)"),
        ("copy.md", 2, "duplicate slug 'ok-one' (also in ok-one.md)"),
        ("copy.md", 3, "slug 'ok-one' differs from the file name 'copy'"),
        ("ok-one.md", 2, f"duplicate id {same!r} (also in copy.md)"),
        ("ok-one.md", 2, "duplicate slug 'ok-one' (also in copy.md)"),
    ]


def test_a_change_seen_first_by_another_command_still_reaches_index_md(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`bank list` brings the cache up to date with an edit; `bank index` after it must still
    rewrite INDEX.md (the cache remembers which lessons the generated files were written from)."""
    monkeypatch.setattr(derived, "RACY_NS", -(10**18))
    bank = make_bank(tmp_path / "b", [lesson("e-1"), lesson("e-2")])
    render.regenerate(Bank.open(bank.root))
    path = bank.lessons_dir / "e-2.md"
    path.write_text(path.read_text(encoding="utf-8").replace("remember e-2", "remember the edit"), encoding="utf-8")
    assert [row[catalog.S_SLUG] for row in catalog.summaries(Bank.open(bank.root))] == ["e-1", "e-2"]
    assert dict(render.regenerate(Bank.open(bank.root)))["INDEX.md"] == "update"
    assert "remember the edit" in (bank.root / "INDEX.md").read_text(encoding="utf-8")


def test_a_reworded_lesson_patches_the_compiled_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A lesson whose wording alone changed: the compiled file is patched from the one on disk
    (no join of all pieces), to the bytes of a build from nothing; a later run sees it current."""
    bank = make_bank(tmp_path / "b", [lesson(f"s-{i}", commands=[rf"\bs{i}\b"], priority=i + 1) for i in range(4)])
    render.regenerate(Bank.open(bank.root))
    for n, words in enumerate(["use a fresh quartz cache", "remember s-1"]):  # a new word, then back
        path = bank.lessons_dir / "s-1.md"
        text = path.read_text(encoding="utf-8")
        path.write_text(re.sub(r"(?m)^do: .*$", f"do: {words}", text, count=1), encoding="utf-8")
        monkeypatch.setattr(compiled_update, "_build", lambda *a, **k: pytest.fail("joined from all pieces"))
        assert dict(render.regenerate(Bank.open(bank.root)))["compiled index"] == "update", n
        assert dict(render.regenerate(Bank.open(bank.root)))["compiled index"] == "unchanged"
        monkeypatch.undo()
        assert _outputs(bank.root) == _full_build(bank, tmp_path / "full")
    (bank.root / "INDEX.md").write_text((bank.root / "INDEX.md").read_text(encoding="utf-8") + "\n", encoding="utf-8")
    path.write_text(path.read_text(encoding="utf-8").replace("do: ", "do: again ", 1), encoding="utf-8")
    monkeypatch.setattr(compiled_update, "_build", lambda *a, **k: pytest.fail("built"))
    with pytest.raises(pytest.fail.Exception, match="built"):  # INDEX.md is not what the file was built from
        render.regenerate(Bank.open(bank.root))


def test_a_seen_bump_rewrites_only_the_compiled_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`seen` is in INDEX.md but not in the compiled tables: the compiled file gets its new
    staleness key and keeps its tables, which are what a build from nothing gives."""
    bank = make_bank(tmp_path / "b", [lesson(f"s-{i}", commands=[rf"\bs{i}\b"], priority=i + 1) for i in range(4)])
    render.regenerate(Bank.open(bank.root))
    path = bank.lessons_dir / "s-2.md"
    path.write_text(path.read_text(encoding="utf-8").replace("seen: 1\n", "seen: 5\n"), encoding="utf-8")
    monkeypatch.setattr(compiled_update, "_build", lambda *a, **k: pytest.fail("no build for a seen bump"))
    assert dict(render.regenerate(Bank.open(bank.root))) == {"INDEX.md": "update", "BANK.md": "update", "compiled index": "update"}
    assert compiled_read.current(str(bank.root), str(bank.state_dir)) is not None
    path.write_text(path.read_text(encoding="utf-8").replace("seen: 5\n", "seen: 6\n"), encoding="utf-8")
    assert dict(render.regenerate(Bank.open(bank.root)))["compiled index"] == "update"  # and again
    monkeypatch.undo()
    assert _outputs(bank.root) == _full_build(bank, tmp_path / "full")
    # A priority change is a real change (ranks move): patched from the file, whose row the cache
    # no longer holds a piece for (the seen bumps rewrote it), to a build's bytes.
    path.write_text(path.read_text(encoding="utf-8").replace("priority: 3\n", "priority: 9\n"), encoding="utf-8")
    monkeypatch.setattr(compiled_update, "_build", lambda *a, **k: pytest.fail("joined from all pieces"))
    assert dict(render.regenerate(Bank.open(bank.root)))["compiled index"] == "update"
    monkeypatch.undo()
    assert _outputs(bank.root) == _full_build(bank, tmp_path / "full")


@pytest.mark.parametrize("change", ["capture", "add by hand", "delete", "priority"])
def test_a_row_that_comes_goes_or_moves_patches_the_compiled_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change: str
) -> None:
    """A new lesson (captured, or a file written by hand), a deleted one, a changed priority: the
    compiled file is patched from the one on disk (index.compiled_patch), to a build's bytes,
    also when the new row shares its trigger's literals with banked ones (their keys move)."""
    lessons = [lesson(f"c-{i}", commands=[rf"\bcargo\s+{w}\b"], priority=i % 5 + 1) for i, w in enumerate(["build", "test", "tree", "test"])]
    lessons += [lesson("k-0", keywords=["cargo"]), lesson("p-0", paths=["src/**/*.rs"], tools=["Edit"])]
    bank = make_bank(tmp_path / "b", lessons)
    render.regenerate(Bank.open(bank.root))
    monkeypatch.setattr(compiled_update, "_build", lambda *a, **k: pytest.fail("joined from all pieces"))
    new = lesson("c-new", commands=[r"\bcargo\s+test\b.*--locked"], keywords=["locked"], priority=4)
    if change == "capture":
        opened = Bank.open(bank.root)
        cache = render.open_cache(opened)
        (bank.lessons_dir / "c-new.md").write_text(lessonbank.bank.lesson.render(new), encoding="utf-8")
        results = render.regenerate(opened, cache=cache, written=["c-new.md"])
    else:
        if change == "add by hand":
            (bank.lessons_dir / "c-new.md").write_text(lessonbank.bank.lesson.render(new), encoding="utf-8")
        elif change == "delete":
            (bank.lessons_dir / "c-1.md").unlink()
        else:
            path = bank.lessons_dir / "c-2.md"
            path.write_text(re.sub(r"(?m)^priority: \d+$", "priority: 10", path.read_text(encoding="utf-8")), encoding="utf-8")
        results = render.regenerate(Bank.open(bank.root))
    assert dict(results)["compiled index"] == "update"
    monkeypatch.undo()
    assert _outputs(bank.root) == _full_build(bank, tmp_path / "full")


def test_a_settled_bank_is_refreshed_by_its_listing_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The records' listing (names and stat keys) kept: the same listing again looks at no record;
    any change of a file's key (an edit, even with its mtime put back) looks again."""
    monkeypatch.setattr(derived, "RACY_NS", -(10**18))
    bank = make_bank(tmp_path / "b", [lesson(f"l-{i}") for i in range(3)])
    catalog.summaries(Bank.open(bank.root))
    assert catalog.cache(Bank.open(bank.root)).meta.get("listing")
    with monkeypatch.context() as patched:
        patched.setattr(derived.Derived, "_update", lambda *a: pytest.fail("a record was looked at"))
        assert len(catalog.summaries(Bank.open(bank.root))) == 3
    path = bank.lessons_dir / "l-1.md"
    stamp = path.stat().st_mtime_ns
    path.write_text(path.read_text(encoding="utf-8").replace("title: l 1", "title: retitled"), encoding="utf-8")
    os.utime(path, ns=(stamp, stamp))
    assert [row[catalog.S_TITLE] for row in catalog.summaries(Bank.open(bank.root))] == ["l 0", "retitled", "l 2"]
    (bank.lessons_dir / "l-2.md").unlink()
    assert [row[catalog.S_SLUG] for row in catalog.summaries(Bank.open(bank.root))] == ["l-0", "l-1"]
    # a file that has not settled is listed with its content hash: its bytes alone are hashed again
    # next time (it could change again within the same clock tick, its stat key unchanged)
    monkeypatch.setattr(derived, "RACY_NS", 10**18)
    path.write_text(path.read_text(encoding="utf-8").replace("retitled", "again"), encoding="utf-8")
    catalog.summaries(Bank.open(bank.root))
    assert list(catalog.cache(Bank.open(bank.root)).meta["listing"][listing.LISTED_HASHES]) == ["l-1.md"]
    hashed: list[str] = []
    real = derived.same_bytes
    monkeypatch.setattr(derived, "same_bytes", lambda path, digest: hashed.append(path.name) or real(path, digest))
    with monkeypatch.context() as patched:
        patched.setattr(derived.Derived, "_update", lambda *a: pytest.fail("a record was looked at"))
        assert [row[catalog.S_TITLE] for row in catalog.summaries(Bank.open(bank.root))] == ["l 0", "again"]
    assert hashed == ["l-1.md"]


def _parsed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The texts parsed from here on."""
    parsed: list[str] = []
    real = lessonbank.bank.lesson.parse
    monkeypatch.setattr(lessonbank.bank.lesson, "parse", lambda text: parsed.append(text) or real(text))
    return parsed


def test_a_settled_bank_lists_from_its_summaries_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`bank list` reads the names and the summaries, no other column; `check` after it (the cache
    saved and let go) still reads the records, and a broken file is still named."""
    monkeypatch.setattr(derived, "RACY_NS", -(10**18))
    bank = make_bank(tmp_path / "b", [lesson(f"s-{i}") for i in range(3)])
    (bank.lessons_dir / "bad.md").write_text("---\nslug: [unclosed\n---\n", encoding="utf-8")
    catalog.summaries(Bank.open(bank.root))
    with monkeypatch.context() as patched:
        patched.setattr(derived.Derived, "_records", lambda self: pytest.fail("a record was read"))
        patched.setattr(derived.Derived, "problems", lambda self: [])
        assert [row[catalog.S_SLUG] for row in catalog.summaries(Bank.open(bank.root))] == ["s-0", "s-1", "s-2"]
    listed = Bank.open(bank.root)
    catalog.summaries(listed)
    assert [p.path.name for p in listed.load_problems] == ["bad.md"]
    problems, count = catalog.check(Bank.open(bank.root))
    assert count == 4 and [p.path.name for p in problems] == ["bad.md"]


def test_a_cache_of_another_version_or_broken_past_the_summaries_is_read_as_none(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cache of the previous VERSION, or one whose later columns do not read, is no cache: every
    file parsed again (and the cache written anew)."""
    monkeypatch.setattr(derived, "RACY_NS", -(10**18))
    bank = make_bank(tmp_path / "b", [lesson(f"v-{i}") for i in range(3)])
    catalog.summaries(Bank.open(bank.root))
    path = bank.state_dir / statedir.DERIVED_CACHE
    data = bytearray(path.read_bytes())
    data[8:12] = (derived.VERSION - 1).to_bytes(4, "little")
    path.write_bytes(bytes(data))
    parsed = _parsed(monkeypatch)
    assert len(catalog.summaries(Bank.open(bank.root))) == 3 and len(parsed) == 3
    data = bytearray(path.read_bytes())
    assert int.from_bytes(data[8:12], "little") == derived.VERSION
    end = derived.HEAD + int.from_bytes(data[12:20], "little")
    data[end - 3 : end] = b"\xff\xff\xff"  # the last batch of the last column
    path.write_bytes(bytes(data))
    parsed.clear()
    assert catalog.check(Bank.open(bank.root)) == ([], 3) and len(parsed) == 3


def test_list_by_column_shows_what_the_rows_show(tmp_path: Path) -> None:
    """`bank list` from the summaries' columns, a broken file among them: the same table as from rows."""
    from click.testing import CliRunner

    from lessonbank.cli import main
    from lessonbank.cli.output import table

    bank = make_bank(tmp_path / "b", [lesson("c-2", seen=3, priority=7), lesson("c-1", title="x" * 70)])
    (bank.lessons_dir / "bad.md").write_text("---\nslug: [unclosed\n---\n", encoding="utf-8")
    fields = (catalog.S_SLUG, catalog.S_TYPE, catalog.S_SEEN, catalog.S_PRIORITY, catalog.S_STATUS, catalog.S_SOURCE, catalog.S_TITLE)
    rows = [[str(r[f]) for f in fields] for r in catalog.summaries(Bank.open(bank.root))]
    want = table(["slug", "type", "seen", "prio", "status", "source", "title"], rows) + "\n"
    for _ in range(2):  # the cache written, then read
        done = CliRunner().invoke(main, ["--root", str(bank.root), "list"])
        assert done.exit_code == 0 and done.stdout == want and "c-1" in want and "…" in want


def test_the_tags_are_read_when_asked_for(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`bank list`'s table reads no tags; a filter, `bank stats` or the records after it still get them."""
    monkeypatch.setattr(derived, "RACY_NS", -(10**18))
    bank = make_bank(tmp_path / "b", [lesson("g-1", tags=["tool:git"]), lesson("g-2", tags=["area:ci", "tool:npm"])])
    catalog.summaries(Bank.open(bank.root))
    cache = catalog.cache(Bank.open(bank.root))
    assert [len(cache.summary_columns(tags=False)), cache.summary_columns(tags=False)[0]] == [catalog.S_TAGS, ["g-1", "g-2"]]
    assert [row[catalog.S_TAGS] for row in cache.summaries()] == [("tool:git",), ("area:ci", "tool:npm")]
    assert cache.small["g-2.md"][derived.SUMMARY][catalog.S_TAGS] == ("area:ci", "tool:npm")


def test_a_file_a_command_wrote_keeps_the_listing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A capture writes a lesson file and refreshes that one alone: the listing is kept, with that
    file at its new key (not settled: hashed again), so the next `bank list` reads no record; a file
    removed the same way leaves the listing too."""
    bank = make_bank(tmp_path / "b", [lesson(f"w-{i}") for i in range(3)])
    monkeypatch.setattr(derived, "RACY_NS", -(10**18))
    catalog.summaries(Bank.open(bank.root))
    render.regenerate(Bank.open(bank.root))
    monkeypatch.setattr(derived, "RACY_NS", 10**18)
    cache = render.open_cache(Bank.open(bank.root))
    path = bank.lessons_dir / "w-1.md"
    path.write_text(path.read_text(encoding="utf-8").replace("title: w 1", "title: written"), encoding="utf-8")
    (bank.lessons_dir / "w-2.md").unlink()
    render.regenerate(Bank.open(bank.root), cache=cache, written=["w-1.md", "w-2.md"])
    kept = catalog.cache(Bank.open(bank.root)).meta["listing"]
    assert kept[listing.LISTED_NAMES] == "w-0.md\0w-1.md" and "w-1.md" in kept[listing.LISTED_HASHES]
    with monkeypatch.context() as patched:
        patched.setattr(derived.Derived, "_update", lambda *a: pytest.fail("a record was looked at"))
        assert [row[catalog.S_TITLE] for row in catalog.summaries(Bank.open(bank.root))] == ["w 0", "written"]


def test_more_files_not_settled_than_are_hashed_each_time_are_settled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bank = make_bank(tmp_path / "b", [lesson(f"u-{i}") for i in range(3)])  # written moments ago: none settled
    assert len(catalog.cache(Bank.open(bank.root)).meta["listing"][listing.LISTED_HASHES]) == 3
    monkeypatch.setattr(derived, "RACY_NS", -(10**18))
    monkeypatch.setattr(derived, "UNSETTLED", 2)
    render.regenerate(Bank.open(bank.root))
    assert catalog.cache(Bank.open(bank.root)).meta["listing"][listing.LISTED_HASHES] == {}
