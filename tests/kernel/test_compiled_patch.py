"""kernel.compiled_patch: a patched compiled file is byte for byte a build's; other changes are declined."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import pytest

from lessonbank.bank import lesson as lesson_mod
from lessonbank.bank import render
from lessonbank.kernel import compiled_build, compiled_patch
from lessonbank.kernel import index_md as index_mod
from tests.hook_support import lesson

KEY = (("INDEX.md", 1), None)
SETTINGS = compiled_build.settings_from_toml("")
Change = Callable[[list[lesson_mod.Lesson]], list[lesson_mod.Lesson]]


def _bank() -> list[lesson_mod.Lesson]:
    return [
        lesson("cargo-locked", commands=[r"\bcargo\s+build\b"], keywords=["cargo"], tags=["tool:cargo"], priority=7),
        lesson("npm-ci", commands=[r"\bnpm\s+install\b"], do="use npm ci in ci", keywords=["npm"]),
        lesson("py-paths", paths=["src/**/*.py"], when="editing python sources", do="run the type checker"),
        lesson("docker-tags", tools=["Bash"], do="pin docker image tags", confidence=0.9),
        lesson("git-push", commands=[r"\bgit\s+push\b"], do="run the tests before a push", priority=2),
    ]


def _lines(lessons: list[lesson_mod.Lesson]) -> list[str]:
    rows = [render.index_row(x) for x in sorted(lessons, key=lambda x: x.slug)]
    return [row for row in rows if row is not None]


def _piece(line: str) -> tuple:
    return compiled_build.piece(index_mod.parse_row(line, 0), {})


def _file(lines: list[str], settings: dict = SETTINGS) -> bytes:
    return compiled_build.serialize(compiled_build.assemble([_piece(x) for x in lines], settings), KEY)


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
    parts = compiled_patch.patch(_file(old), old, new, _piece, SETTINGS, KEY)
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
    assert compiled_patch.patch(_file(old), old, new, _piece, SETTINGS, KEY) is None


def test_a_patch_is_declined_for_other_settings_too_many_rows_or_another_file(monkeypatch: pytest.MonkeyPatch) -> None:
    old = _lines(_bank())
    new = _lines(_swap("git-push", do="run the tests")(_swap("npm-ci", do="run the tests in ci")(_bank())))
    other = compiled_build.settings_from_toml("[recall]\nmax_lessons = 1\n")
    assert other != SETTINGS
    assert compiled_patch.patch(_file(old, other), old, new, _piece, SETTINGS, KEY) is None
    assert compiled_patch.patch(b"not a compiled file", old, new, _piece, SETTINGS, KEY) is None
    assert compiled_patch.patch(_file(old), old, new, lambda line: None, SETTINGS, KEY) is None  # pieces unknown
    monkeypatch.setattr(compiled_patch, "MOST_ROWS", 1)
    assert compiled_patch.patch(_file(old), old, new, _piece, SETTINGS, KEY) is None
