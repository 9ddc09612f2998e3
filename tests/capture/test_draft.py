"""The one draft type: its fields are the lesson's, and `to_lesson` is the one way it becomes one."""

from __future__ import annotations

from dataclasses import fields

from lessonbank.bank.lesson import Lesson, attribute, validate
from lessonbank.capture.draft import JSON_FIELDS, Draft, derive_title, to_lesson


def test_every_draft_field_but_the_session_is_a_lesson_field() -> None:
    lesson_fields = {f.name for f in fields(Lesson)}
    assert {f.name for f in fields(Draft)} - lesson_fields == {"session"}


def test_json_reads_every_draft_field_under_its_frontmatter_name() -> None:
    read = sorted(attribute(k) for k in JSON_FIELDS)
    assert read == sorted(f.name for f in fields(Draft))


def test_to_lesson_copies_the_shared_fields_and_derives_the_rest() -> None:
    draft = Draft(
        when="  pytest   hangs on a TTY ", do="run it with stdin from /dev/null", promote_to=" rule:testing ",
        type="command", tools=["Bash"], commands=[r"\bpytest\b"], paths=["tests/**"], tags=["tool:pytest"],
        session="s1", source="learned", body="The story.", verify={"paths": ["pytest.ini"]},
    )  # fmt: skip
    lesson = to_lesson(draft, {"pytest-hangs-on-a-tty"}, "2026-11-30", default_priority=5)
    assert lesson.title == "Pytest hangs on a TTY" and lesson.slug == "pytest-hangs-on-a-tty-2"
    assert (lesson.when, lesson.do, lesson.promote_to) == (
        "pytest hangs on a TTY", "run it with stdin from /dev/null", "rule:testing",
    )  # fmt: skip
    assert (lesson.type, lesson.tools, lesson.commands, lesson.paths) == (
        "command", ["Bash"], [r"\bpytest\b"], ["tests/**"],
    )  # fmt: skip
    assert lesson.keywords == ["pytest", "hangs"]  # tag values first, then the situation's words
    assert (lesson.seen, lesson.sessions, lesson.priority, lesson.confidence) == (1, ["s1"], 5, 0.7)
    assert (lesson.source, lesson.status, lesson.created) == ("learned", "active", "2026-11-30")
    assert lesson.updated == "2026-11-30"
    assert (lesson.body, lesson.verify) == ("The story.", {"paths": ["pytest.ini"]})
    assert lesson.tools is not draft.tools and lesson.verify is not draft.verify
    assert validate(lesson) == []


def test_a_draft_s_own_priority_and_confidence_win_over_the_defaults() -> None:
    draft = Draft(when="a b", do="c d", title="T", priority=9, confidence=0.95, source="scanned")
    lesson = to_lesson(draft, set(), "d", 5)
    assert (lesson.priority, lesson.confidence, lesson.title) == (9, 0.95, "T")
    assert to_lesson(Draft(when="a", do="b", source="scanned"), set(), "d", 5).confidence == 0.6


def test_a_long_derived_title_keeps_its_first_clause_whole() -> None:
    when = "after moving the package under src/, pytest fails with ModuleNotFoundError while loading conftest.py"
    assert derive_title(when, "") == "After moving the package under src/, pytest fails with ModuleNotFoundError"
