"""index.compiled_rows: rows added, removed or moved are patched to a build's bytes; other changes are declined."""

from __future__ import annotations

import dataclasses
import random

import pytest

from lessonbank.bank.lesson import Lesson
from lessonbank.index import compiled_build, compiled_pieces, compiled_rows
from tests.hook_support import lesson
from tests.index.test_compiled_patch import KEY, SETTINGS, _bank, _file, _lines, _piece, _swap, _text

WORDS = ("cargo", "build", "test", "npm", "install", "git", "push", "docker", "pytest", "ruff", "go", "run")


def _patched(old: list[str], new: list[str], piece=_piece) -> bytes | None:  # type: ignore[no-untyped-def]
    parts = compiled_rows.patch_rows(_file(old), _text(old).splitlines(), _text(new).splitlines(), piece, SETTINGS, KEY)
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


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_additions_removals_and_moves_patch_to_the_bytes_of_a_build(seed: int) -> None:
    rng = random.Random(seed)
    bank = [_random_lesson(rng, f"l-{i:02d}") for i in range(24)]
    kinds = {"add": 0, "remove": 0, "change": 0}
    for step in range(60):
        new = list(bank)
        kind = rng.choice(["add", "add", "remove", "change"] if len(bank) > 3 else ["add"])
        if kind == "add":
            new.append(_random_lesson(rng, f"n-{rng.randint(0, 99)}-{step}"))  # anywhere in slug order
        elif kind == "remove":
            new.pop(rng.randrange(len(new)))
        else:  # its triggers, priority and words: a row removed and one put in its place
            at = rng.randrange(len(new))
            new[at] = _random_lesson(rng, new[at].slug)
        old_lines, new_lines = _lines(bank), _lines(new)
        if old_lines != new_lines:
            assert _patched(old_lines, new_lines) == _file(new_lines), f"step {step}: {kind}"
            kinds[kind] += 1
        bank = new
    assert all(kinds.values()), kinds


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
    ],
)
def test_a_row_that_comes_goes_or_moves_is_patched(change) -> None:  # type: ignore[no-untyped-def]
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
    text = _text(old).replace("(generated)", "(by hand)")
    assert compiled_rows.patch_rows(_file(old), _text(old).splitlines(), text.splitlines(), _piece, SETTINGS, KEY) is None
    assert compiled_rows.patch_rows(b"not a compiled file", _text(old).splitlines(), _text(new).splitlines(), _piece, SETTINGS, KEY) is None
    other = compiled_pieces.settings_from_toml("[recall]\nmax_lessons = 1\n")
    assert compiled_rows.patch_rows(_file(old, other), _text(old).splitlines(), _text(new).splitlines(), _piece, SETTINGS, KEY) is None
    monkeypatch.setattr(compiled_rows, "MOST_ROWS", 2)
    assert _patched(old, new) is None  # three rows removed
    assert _patched(old, apart) is None  # five rows changed
    monkeypatch.setattr(compiled_rows, "MOST_ROWS", 50)
    monkeypatch.setattr(compiled_rows, "MOST_REFILED", 0)
    assert _patched(old, _lines([*_bank(), lesson("cb", commands=[r"\bcargo\s+build\b.*--x"])])) is None
    monkeypatch.setattr(compiled_rows, "MOST_REFILED", 1000)
    monkeypatch.setattr(compiled_rows, "MOST_BYTES", len(_file(old)) - 1)  # a big bank: the streamed build
    assert _patched(old, new) is None
    monkeypatch.setattr(compiled_rows, "MOST_BYTES", len(_file(old)))
    assert _patched(old, new) == _file(new)
