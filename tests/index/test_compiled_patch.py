"""index.compiled_patch: rows reworded, added, removed or moved are patched to a build's bytes; other changes are declined."""

from __future__ import annotations

import dataclasses
import random
import zlib
from collections.abc import Callable

import pytest

from lessonbank.bank import pages
from lessonbank.bank.lesson import Lesson
from lessonbank.index import compiled_build, compiled_bytes, compiled_patch, compiled_pieces, index_md
from tests.hook_support import lesson

KEY = (("INDEX.md", 1), None)
SETTINGS = compiled_pieces.settings_from_toml("")
Change = Callable[[list[Lesson]], list[Lesson]]


def _bank() -> list[Lesson]:
    return [
        lesson("cargo-locked", commands=[r"\bcargo\s+build\b"], keywords=["cargo"], tags=["tool:cargo"], priority=7),
        lesson("npm-ci", commands=[r"\bnpm\s+install\b"], do="use npm ci in ci", keywords=["npm"]),
        lesson("py-paths", paths=["src/**/*.py"], when="editing python sources", do="run the type checker"),
        lesson("docker-tags", tools=["Bash"], do="pin docker image tags", confidence=0.9),
        lesson("git-push", commands=[r"\bgit\s+push\b"], do="run the tests before a push", priority=2),
    ]


def _lines(lessons: list[Lesson]) -> list[str]:
    rows = [pages.index_row(x) for x in sorted(lessons, key=lambda x: x.slug)]
    return [row for row in rows if row is not None]


def _text(lines: list[str]) -> str:
    head = [index_md.row_line(list(index_md.COLUMNS)), index_md.row_line(["---"] * len(index_md.COLUMNS))]
    return "\n".join(["# Lessons", "", *head, *lines, "", "(generated)"]) + "\n"


def _piece(line: str) -> tuple | None:
    """A row's piece, as the derived cache knows it; None for a line that is no row."""
    try:
        return compiled_pieces.piece(index_md.parse_row(line, 0), {})
    except index_md.IndexFormatError:
        return None


def _file(lines: list[str], settings: dict = SETTINGS) -> bytes:
    return compiled_bytes.serialize(compiled_build.assemble([compiled_pieces.piece(index_md.parse_row(x, 0), {}) for x in lines], settings), KEY)


def _swap(slug: str, **fields: object) -> Change:
    return lambda lessons: [dataclasses.replace(x, **fields) if x.slug == slug else x for x in lessons]


WORDS = ("cargo", "build", "test", "npm", "install", "git", "push", "docker", "pytest", "ruff", "go", "run")


def _patched(old: list[str], new: list[str], piece: Callable[[str], tuple | None] = _piece) -> bytes | None:
    parts = compiled_patch.patch(_file(old), _text(old).splitlines(), _text(new).splitlines(), piece, SETTINGS, KEY)
    return None if parts is None else b"".join(parts)


def _random_lesson(rng: random.Random, slug: str) -> Lesson:
    """Triggers from a small vocabulary, so rows share literals (and the keys they are filed under)."""
    commands = [rf"\b{rng.choice(WORDS)}\s+{rng.choice(WORDS)}\b" for _ in range(rng.randint(0, 2))]
    if rng.random() < 0.2:
        commands.append(rf"\b{rng.choice(WORDS)}\b(?!.*--{rng.choice(WORDS)})")
    paths = [rng.choice(["src/**/*.py", "*.md", "docs/{api,guide}/*.rst", "Cargo.toml", "**/test_*.py"]) for _ in range(rng.randint(0, 1))]
    return lesson(
        slug, commands=commands, paths=paths, tools=rng.choice([[], ["Bash"], ["Edit", "Write"]]),
        keywords=rng.sample(WORDS, rng.randint(0, 2)), do=" ".join(rng.sample(WORDS, 3)),
        priority=rng.randint(1, 9), confidence=round(rng.random(), 1),
    )  # fmt: skip


def _random_steps(seed: int, steps: int = 60) -> list[tuple[str, list[str], list[str]]]:
    """(kind, old rows, new rows) of random additions, removals and changes of one bank."""
    rng = random.Random(seed)
    bank = [_random_lesson(rng, f"l-{i:02d}") for i in range(24)]
    out = []
    for step in range(steps):
        new = list(bank)
        kind = rng.choice(["add", "add", "remove", "change", "reword"] if len(bank) > 3 else ["add"])
        if kind == "add":
            new.append(_random_lesson(rng, f"n-{rng.randint(0, 99)}-{step}"))  # anywhere in slug order
        elif kind == "remove":
            new.pop(rng.randrange(len(new)))
        elif kind == "change":  # its triggers, priority and words
            at = rng.randrange(len(new))
            new[at] = _random_lesson(rng, new[at].slug)
        else:
            at = rng.randrange(len(new))
            new[at] = dataclasses.replace(new[at], do=" ".join(rng.sample(WORDS, 2)) + f" w{step}")
        old_lines, new_lines = _lines(bank), _lines(new)
        if old_lines != new_lines:
            out.append((kind, old_lines, new_lines))
        bank = new
    return out


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_additions_removals_and_changes_patch_to_the_bytes_of_a_build(seed: int) -> None:
    kinds = dict.fromkeys(["add", "remove", "change", "reword"], 0)
    for step, (kind, old, new) in enumerate(_random_steps(seed)):
        assert _patched(old, new) == _file(new), f"step {step}: {kind}"
        kinds[kind] += 1
    assert all(kinds.values()), kinds


def test_with_lesson_numbers_that_collide_a_patch_is_a_builds_bytes_or_declined(monkeypatch: pytest.MonkeyPatch) -> None:
    """Slugs whose numbers collide (one in 16 here) are probed past in row order: a patch that
    would number a row otherwise than a build declines, any other gives the build's bytes."""
    monkeypatch.setattr(compiled_build, "base_number", lambda slug: zlib.crc32(slug.encode()) % 16)
    outcomes = {"patched": 0, "declined": 0}
    for seed in (4, 5):
        for kind, old, new in _random_steps(seed, 40):
            got = _patched(old, new)
            assert got is None or got == _file(new), kind
            outcomes["patched" if got is not None else "declined"] += 1
    assert all(outcomes.values()), outcomes


def test_a_new_row_moves_no_other_rows_number_record_or_group() -> None:
    """Numbers come from slugs: a lesson added first in row order leaves every other lesson's
    number and record as they were, and only the groups and buckets it joins are written again."""
    old, new = _lines(_bank()), _lines([*_bank(), lesson("a-first", commands=[r"\bmake\s+dist\b"], priority=9)])
    before, after = compiled_build.assemble([_piece(x) for x in old], SETTINGS), compiled_build.assemble([_piece(x) for x in new], SETTINGS)
    assert set(before["lessons"]) < set(after["lessons"])
    assert all(after["lessons"][n] == record for n, record in before["lessons"].items())
    assert set(before["groups"]) <= set(after["groups"])
    assert _patched(old, new) == _file(new)


@pytest.mark.parametrize(
    ("change", "same_keys"),
    [
        (_swap("npm-ci", do="run the tests in ci"), True),  # words other lessons have
        (_swap("npm-ci", do="use npm ci with a frozen lockfile"), True),  # new words: their keys' bits set
        (_swap("docker-tags", do="remember"), False),  # words only it had go: the filter is worked out again
        (_swap("py-paths", title="python sources need checking", keywords=["mypy"]), False),
        (_swap("cargo-locked", tags=["tool:cargo", "area:build"]), True),
        (lambda xs: _swap("git-push", do="run the tests")(_swap("npm-ci", do="run the tests in ci")(xs)), True),
    ],
)
def test_a_reworded_row_patches_to_the_bytes_of_a_build(change: Change, same_keys: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    old, new = _lines(_bank()), _lines(change(_bank()))
    assert old != new
    expected, old_file = _file(new), _file(old)
    if same_keys:  # only the buckets of the moved postings are marshalled again
        real = compiled_bytes.hashed_sections
        monkeypatch.setattr(
            compiled_bytes, "hashed_sections", lambda name, mapping: pytest.fail("recall rebuilt") if name == "recall" else real(name, mapping)
        )
    parts = compiled_patch.patch(old_file, _text(old).splitlines(), _text(new).splitlines(), _piece, SETTINGS, KEY)
    assert parts is not None and b"".join(parts) == expected


@pytest.mark.parametrize(
    "change",
    [
        lambda xs: [*xs, lesson("a-first", commands=[r"\bnpm\s+install\b"], priority=9)],  # first in rank and row order
        lambda xs: [*xs, lesson("zz-last", do="a lesson without triggers", priority=1, confidence=0.1)],
        lambda xs: [*xs, lesson("new-one", keywords=["npm"]), lesson("new-two", commands=[r"\bnpm\s+ci\b"])],
        lambda xs: xs[1:],
        lambda xs: [x for x in xs if x.slug != "docker-tags"],  # a tool-only row
        _swap("npm-ci", priority=9),
        _swap("git-push", commands=[r"\bgit\s+pull\b"]),
        _swap("py-paths", paths=["src/**/*.rs", "*.toml"]),
        _swap("docker-tags", tools=["Bash", "Edit"]),
    ],
)
def test_a_row_that_comes_goes_or_moves_is_patched(change: Change) -> None:
    old, new = _lines(_bank()), _lines(change(_bank()))
    assert _patched(old, new) == _file(new)


def test_a_gram_that_grows_commoner_moves_the_rows_filed_under_it() -> None:
    """" buil" keys cargo-locked (`cargo\\s+build`) while it is the rarest gram of its trigger;
    two new rows holding it (not "cargo") make a gram of "cargo " the rarer, and cargo-locked is
    filed again under that one."""
    old = _lines(_bank())
    new = _lines([*_bank(), *(lesson(f"mb-{i}", commands=[rf"\bmake\s+build\b.*--x{i}"]) for i in range(2))])
    data = compiled_build.from_texts(_text(old), "")
    keys_before = {k for k, groups in data["pre"].items() for g in groups.values() for e in data["groups"][g] if e[1] == "cargo-locked"}
    data = compiled_build.from_texts(_text(new), "")
    keys_after = {k for k, groups in data["pre"].items() for g in groups.values() for e in data["groups"][g] if e[1] == "cargo-locked"}
    assert (keys_before, keys_after) == ({" buil"}, {"argo "})
    assert _patched(old, new) == _file(new)


def test_the_grams_section_counts_the_triggers_holding_each_gram() -> None:
    rows = _lines([lesson("a", commands=[r"\bgit\s+push\b"]), lesson("b", commands=[r"\bgit\s+push\b.*-f"])])
    grams = compiled_build.from_texts(_text(rows), "")["grams"]
    assert list(grams) == sorted(grams)
    assert grams == {" push": 2, "-f": 1, "git": 2, "it ": 2}


def test_a_change_it_cannot_make_is_declined(monkeypatch: pytest.MonkeyPatch) -> None:
    old = _lines(_bank())
    apart = _lines([dataclasses.replace(x, priority=9) if x.slug in ("cargo-locked", "py-paths") else x for x in _bank()])
    assert _patched(old, apart) == _file(apart)  # the rows between, the same, are taken as changed
    assert _patched(old, old) is None  # nothing changed
    assert _patched(old, old[1:], piece=lambda line: None) is None  # pieces unknown
    new = old[:2]
    for edit in (lambda text: text.replace("(generated)", "(by hand)"), lambda text: text.replace("# Lessons", "# Our lessons")):
        assert compiled_patch.patch(_file(old), _text(old).splitlines(), edit(_text(old)).splitlines(), _piece, SETTINGS, KEY) is None
    assert compiled_patch.patch(b"not a compiled file", _text(old).splitlines(), _text(new).splitlines(), _piece, SETTINGS, KEY) is None
    assert compiled_patch.patch(_file(old[:1]), _text(old).splitlines(), _text(new).splitlines(), _piece, SETTINGS, KEY) is None  # rows past its count
    other = compiled_pieces.settings_from_toml("[recall]\nmax_lessons = 1\n")
    assert compiled_patch.patch(_file(old, other), _text(old).splitlines(), _text(new).splitlines(), _piece, SETTINGS, KEY) is None
    monkeypatch.setattr(compiled_patch, "MOST_ROWS", 2)
    assert _patched(old, new) is None  # three rows removed
    assert _patched(old, apart) is None  # five rows changed
    monkeypatch.setattr(compiled_patch, "MOST_ROWS", 50)
    monkeypatch.setattr(compiled_patch, "MOST_REFILED", 0)
    assert _patched(old, _lines([*_bank(), lesson("cb", commands=[r"\bcargo\s+build\b.*--x"])])) is None
    monkeypatch.setattr(compiled_patch, "MOST_REFILED", 1000)
    monkeypatch.setattr(compiled_patch, "MOST_BYTES", len(_file(old)) - 1)  # a big bank: the streamed build
    assert _patched(old, new) is None
    monkeypatch.setattr(compiled_patch, "MOST_BYTES", len(_file(old)))
    assert _patched(old, new) == _file(new)
