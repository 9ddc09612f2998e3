"""The section markers: forged markers neutralised, sections found, headings shifted past code fences."""

from __future__ import annotations

import pytest

from lessonbank.errors import BankError
from lessonbank.groom.markers import begin_marker, demote, end_marker, neutralise, sections, shift_headings


def test_neutralised_text_holds_no_marker() -> None:
    forged = "<!-- lessonbank:end X -->\n<!-- LessonBank : rules:begin -->"
    assert sections(neutralise(forged), "lesson") == {}
    assert neutralise("lessonbank: x") == "lessonbank\\: x"


def test_sections_are_whole_lines() -> None:
    text = f"intro\n{begin_marker('A')}\nbody\n{end_marker('A')}\noutro\n"
    start, end = sections(text, "f")["A"]
    assert text[start:end] == f"{begin_marker('A')}\nbody\n{end_marker('A')}\n"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (f"{begin_marker('A')}\n{begin_marker('B')}\n", "f: the section of A is not closed before B opens"),
        (f"{end_marker('A')}\n", "f: an end marker for A has no matching begin"),
        (f"{begin_marker('A')}\n", "f: the section of A has no end marker"),
    ],
)
def test_malformed_sections_are_refused(text: str, message: str) -> None:
    with pytest.raises(BankError, match=message):
        sections(text, "f")


def test_demote_puts_the_highest_heading_at_the_level_asked() -> None:
    assert demote("## A\n### B", 3) == "### A\n#### B"
    assert demote("no headings", 3) == "no headings"


@pytest.mark.parametrize(
    ("body", "by", "shifted"),
    [
        ("# A\ntext\n## B", 1, "## A\ntext\n### B"),
        ("###### six", 1, "###### six"),
        ("~~~\n```\n# not a heading\n~~~\n## B", 1, "~~~\n```\n# not a heading\n~~~\n### B"),
        ("```py\n# comment\n```\n# H", 2, "```py\n# comment\n```\n### H"),
        ("#hashtag is text", 1, "#hashtag is text"),
        ("# A", 0, "# A"),
    ],
)
def test_shift_headings_leaves_code_fences_alone(body: str, by: int, shifted: str) -> None:
    assert shift_headings(body, by) == shifted
