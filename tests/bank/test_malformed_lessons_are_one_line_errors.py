"""Bad input in a hand-edited lesson is one `path:line: message` from every command, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from lessonbank.bank.lesson import parse
from lessonbank.bank.names import parse_destination, slugify, windows_reserved
from lessonbank.errors import LessonFormatError
from tests.conftest import run

CAPTURE = ["capture", "--when", "the migrations run on a fresh database", "--do", "run make migrate first",
           "--promote-to", "rule:db"]  # fmt: skip
FILE = "lessons/the-migrations-run-on-a-fresh-database.md"


def _edited(bank: Path, old: str, new: str) -> Path:
    assert run(bank, *CAPTURE).exit_code == 0
    path = bank / FILE
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return path


@pytest.mark.parametrize("command", [["check"], ["list"], ["index"], ["stats"], ["add", "x => y", "--promote-to", "rule:x"]])
def test_an_impossible_date_is_one_line_naming_the_file_and_line(bank: Path, command: list[str]) -> None:
    path = _edited(bank, "created: '", "created: 2026-13-45\nold-created: '")
    line = next(n for n, x in enumerate(path.read_text().splitlines(), 1) if x.startswith("created:"))
    result = run(bank, *command)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    checked = run(bank, "check")
    assert checked.exit_code == 1
    assert f"{FILE}:{line}: frontmatter is not valid YAML: '2026-13-45' is not a real date" in checked.output


def test_a_key_given_twice_is_a_check_error_not_a_silent_choice(bank: Path) -> None:
    path = _edited(bank, "seen: 1\n", "seen: 1\nseen: 9\n")
    line = next(n for n, x in enumerate(path.read_text().splitlines(), 1) if x == "seen: 9")
    result = run(bank, "check")
    assert result.exit_code == 1
    assert f"{FILE}:{line}: frontmatter is not valid YAML: the key 'seen' is given twice (first on line {line - 1}): keep one" in result.output


def test_duplicate_keys_nested_in_triggers_are_caught_too() -> None:
    text = "---\nid: 01KB6M5Q8ZJ3V4X0YHEQ7C2N1D\nslug: a\nwhen: w\ndo: d\ntriggers:\n  tools: [Bash]\n  tools: [Edit]\n---\n"
    with pytest.raises(LessonFormatError, match="the key 'tools' is given twice") as caught:
        parse(text)
    assert caught.value.line == 8


@pytest.mark.parametrize("name", ["con", "nul", "aux", "prn", "com1", "lpt9", "CON", "nul.md", "com1.txt"])
def test_windows_reserved_names_are_recognised(name: str) -> None:
    assert windows_reserved(name)


@pytest.mark.parametrize("name", ["console", "null", "auxiliary", "com", "com10", "lpt", "conf"])
def test_names_that_only_start_like_a_device_are_fine(name: str) -> None:
    assert not windows_reserved(name)


@pytest.mark.parametrize("value", ["rule:con", "skill:nul", "doc:docs/aux.md", "doc:com1/notes.md", "doc:nul.md"])
def test_a_destination_windows_cannot_hold_is_refused(value: str) -> None:
    with pytest.raises(ValueError, match="Windows reserves"):
        parse_destination(value)


def test_a_title_that_slugifies_to_a_device_name_gets_a_safe_slug() -> None:
    assert slugify("CON") == "con-lesson"
    assert slugify("Aux!") == "aux-lesson"


def test_a_hand_written_reserved_slug_is_a_check_error(bank: Path) -> None:
    _edited(bank, "slug: the-migrations-run-on-a-fresh-database", "slug: nul")
    (bank / FILE).rename(bank / "lessons/nul.md")
    result = run(bank, "check")
    assert result.exit_code == 1
    assert "lessons/nul.md:3: slug 'nul' is a name Windows reserves for a device: rename it" in result.output
