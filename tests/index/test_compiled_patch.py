"""index.compiled_patch: a patched compiled file is byte for byte a build's; other changes are declined."""

from __future__ import annotations

import dataclasses
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


def _changes(old: list[str], new: list[str]) -> list[tuple[int, str, str]] | None:
    return compiled_patch.changed_rows(_text(old).splitlines(), _text(new).splitlines())


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


@pytest.mark.parametrize(
    ("change", "same_keys"),
    [
        (_swap("npm-ci", do="run the tests in ci"), True),  # words other lessons have
        (_swap("npm-ci", do="use npm ci with a frozen lockfile"), False),  # new words
        (_swap("docker-tags", do="remember"), False),  # words only it had go
        (_swap("py-paths", title="python sources need checking", keywords=["mypy"]), False),
        (_swap("cargo-locked", tags=["tool:cargo", "area:build"]), False),
        (lambda xs: _swap("git-push", do="run the tests")(_swap("npm-ci", do="run the tests in ci")(xs)), True),
    ],
)
def test_a_reworded_row_patches_to_the_bytes_of_a_build(change: Change, same_keys: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    old, new = _lines(_bank()), _lines(change(_bank()))
    assert old != new
    if same_keys:  # only the buckets of the moved postings are re-marshalled
        monkeypatch.setattr(compiled_patch, "_recall", lambda *a: pytest.fail("the whole recall table was rebuilt"))
    changes = _changes(old, new)
    assert changes == [(n, a, b) for n, (a, b) in enumerate(zip(old, new, strict=True)) if a != b]
    parts = compiled_patch.patch(_file(old), changes, _piece, SETTINGS, KEY)
    assert parts is not None
    assert b"".join(parts) == _file(new)


@pytest.mark.parametrize(
    "change",
    [
        _swap("npm-ci", priority=9),  # ranks change
        _swap("git-push", commands=[r"\bgit\s+pull\b"]),  # triggers change
        _swap("py-paths", paths=["src/**/*.rs"]),
        _swap("docker-tags", tools=["Bash", "Edit"]),
        lambda xs: [*xs, lesson("new-one", do="something new")],  # numbers change
        lambda xs: xs[1:],
        lambda xs: xs,  # nothing to patch
    ],
)
def test_a_change_a_patch_cannot_make_is_declined(change: Change) -> None:
    old, new = _lines(_bank()), _lines(change(_bank()))
    changes = _changes(old, new)
    if len(old) != len(new) or old == new:  # not even a set of changed rows
        assert changes is None
    else:
        assert changes is not None
        assert compiled_patch.patch(_file(old), changes, _piece, SETTINGS, KEY) is None


def test_a_patch_is_declined_for_other_settings_too_many_rows_or_another_file(monkeypatch: pytest.MonkeyPatch) -> None:
    old = _lines(_bank())
    new = _lines(_swap("git-push", do="run the tests")(_swap("npm-ci", do="run the tests in ci")(_bank())))
    changes = _changes(old, new)
    assert changes is not None and len(changes) == 2
    other = compiled_pieces.settings_from_toml("[recall]\nmax_lessons = 1\n")
    assert other != SETTINGS
    assert compiled_patch.patch(_file(old, other), changes, _piece, SETTINGS, KEY) is None
    assert compiled_patch.patch(b"not a compiled file", changes, _piece, SETTINGS, KEY) is None
    assert compiled_patch.patch(_file(old), changes, lambda line: None, SETTINGS, KEY) is None  # pieces unknown
    assert compiled_patch.patch(_file(old[:1]), changes, _piece, SETTINGS, KEY) is None  # rows past its count
    monkeypatch.setattr(compiled_patch, "MOST_ROWS", 1)
    assert compiled_patch.patch(_file(old), changes, _piece, SETTINGS, KEY) is None
    assert _changes(old, new) is None


@pytest.mark.parametrize(
    "edit",
    [
        lambda text: text.replace("# Lessons", "# Our lessons"),  # a line before the table
        lambda text: text.replace("(generated)", "(by hand)"),  # after it: no row, no piece
    ],
)
def test_lines_outside_the_rows_are_not_patched(edit: Callable[[str], str]) -> None:
    old = _lines(_bank())
    changes = compiled_patch.changed_rows(_text(old).splitlines(), edit(_text(old)).splitlines())
    assert changes is None or compiled_patch.patch(_file(old), changes, _piece, SETTINGS, KEY) is None
