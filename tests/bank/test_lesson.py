"""Lesson files: parsing, rendering, validation and edits that keep a person's text."""

from __future__ import annotations

import pytest

from lessonbank.bank import frontmatter_edit
from lessonbank.bank.lesson import (
    KEY_ORDER,
    TRIGGER_KEYS,
    Lesson,
    attribute,
    glob_problem,
    parse,
    parse_destination,
    render,
    split_frontmatter,
    validate,
)
from lessonbank.errors import LessonFormatError

HAND_EDITED = """\
---
# A person wrote this file by hand; the tool must keep every byte it does not own.
id: 01JBQX0000000000000000000A
slug: stash-drops-untracked
title: git stash leaves untracked files behind
type: gotcha
when: stashing work before switching branches
do: use `git stash -u` so untracked files are stashed too
promote-to: rule:git   # graduates into the git rule
owner: platform-team    # unknown key, kept
triggers:
  tools: [Bash]
  commands:
    - '\\bgit\\s+stash\\b(?!.*\\s-u\\b)'   # quiet once -u is used
  paths: []
  keywords: [stash, untracked]
tags: [tool:git]
seen: 1
sessions:
  - sess-a   # first sighting
priority: 6
confidence: 0.9
source: typed
status: active
created: 2026-10-01
updated: 2026-10-01
---

The story: we lost a new migration file to `git stash`.
"""


def test_parse_reads_every_field_and_keeps_unknown_keys() -> None:
    lesson = parse(HAND_EDITED)
    assert lesson.slug == "stash-drops-untracked"
    assert lesson.promote_to == "rule:git"
    assert lesson.commands == ["\\bgit\\s+stash\\b(?!.*\\s-u\\b)"]
    assert lesson.sessions == ["sess-a"]
    assert lesson.created == "2026-10-01"
    assert lesson.extra == {"owner": "platform-team"}
    assert lesson.body.strip() == "The story: we lost a new migration file to `git stash`."


def test_bump_changes_only_the_seen_sessions_and_updated_lines() -> None:
    text, counted = frontmatter_edit.bump_text(HAND_EDITED, "sess-b", "2026-11-29")
    assert counted
    before, after = HAND_EDITED.splitlines(), text.splitlines()
    changed = [(b, a) for b, a in zip(before, after, strict=False) if b != a]
    assert ("seen: 1", "seen: 2") in changed
    assert "  - sess-b" in after and "  - sess-a   # first sighting" in after
    assert "updated: '2026-11-29'" in after
    # Everything else is byte-for-byte the same, comments and unknown key included.
    untouched = [ln for ln in before if not ln.startswith(("seen:", "updated:"))]
    assert [ln for ln in after if ln not in ("seen: 2", "updated: '2026-11-29'", "  - sess-b")] == untouched
    assert text.endswith("\n")
    assert parse(text).seen == 2


def test_bump_from_the_same_session_counts_once() -> None:
    text, counted = frontmatter_edit.bump_text(HAND_EDITED, "sess-a", "2026-11-29")
    assert not counted and text == HAND_EDITED


def test_sessions_are_bounded_but_seen_keeps_counting() -> None:
    lesson = parse(HAND_EDITED)
    for n in range(30):
        lesson, _ = frontmatter_edit.record_session(lesson, f"s{n}", "2026-11-29")
    assert lesson.seen == 31
    assert len(lesson.sessions) == frontmatter_edit.MAX_SESSIONS and lesson.sessions[-1] == "s29"


def test_render_has_stable_key_order_and_a_final_newline() -> None:
    lesson = parse(HAND_EDITED)
    text = render(lesson)
    front = split_frontmatter(text)[0]
    keys = [ln.split(":")[0] for ln in front.splitlines() if ln and not ln.startswith((" ", "-"))]
    assert keys == [k for k in KEY_ORDER if k not in ("guard", "verified", "verify")] + ["owner"]
    assert text.endswith("\n") and not text.endswith("\n\n")
    assert parse(text) == lesson
    assert render(parse(text)) == text


def test_the_lesson_holds_exactly_the_fields_of_the_key_list() -> None:
    """KEY_ORDER is the one field list: the dataclass has its fields (triggers flat), body and extra."""
    from dataclasses import fields

    from_keys = [attribute(k) for k in KEY_ORDER if k != "triggers"] + list(TRIGGER_KEYS)
    assert sorted(f.name for f in fields(Lesson)) == sorted([*from_keys, "body", "extra"])
    lesson = parse(HAND_EDITED)
    lesson.verify = {"paths": ["src/x.py"]}
    assert list(lesson.to_mapping()) == [k for k in KEY_ORDER if k not in ("guard", "verified")] + ["owner"]


def test_a_guard_is_written_only_when_set_and_must_be_a_boolean() -> None:
    lesson = parse(HAND_EDITED)
    assert lesson.guard is False and "guard" not in render(lesson)
    lesson.guard = True
    text = render(lesson)
    assert "\nguard: true\ntags:" in text  # after the triggers, which say which calls it holds back
    assert parse(text).guard is True
    with pytest.raises(LessonFormatError, match="guard must be true or false"):
        parse(text.replace("guard: true", "guard: sometimes"))


@pytest.mark.parametrize(
    ("text", "message", "line"),
    [
        ("no frontmatter\n", "no frontmatter", 1),
        ("---\nid: x\n", "not closed", 2),
        ("---\nid: [unclosed\n---\n", "not valid YAML", 3),
        ("---\n- a list\n---\n", "must be a mapping", 2),
        ("---\nid: x\nslug: y\n---\n", "missing required field(s): when, do", 1),
        ("---\nid: x\nslug: y\nwhen: a\ndo: b\ntriggers: [a]\n---\n", "triggers must be a mapping", 1),
    ],
)
def test_malformed_files_raise_with_a_line(text: str, message: str, line: int) -> None:
    with pytest.raises(LessonFormatError) as info:
        parse(text)
    assert message in str(info.value)
    assert info.value.line == line


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        ("rule:testing", True),
        ("skill:pytest-tips", True),
        ("doc:docs/testing.md", True),
        ("", False),
        ("testing", False),
        ("wiki:testing", False),
        ("rule:Bad Name", False),
        ("doc:../outside.md", False),
        ("doc:/etc/passwd.md", False),
        ("doc:docs/../../x.md", False),
        ("doc:notes.txt", False),
        ("skill:pdf--tools", False),
        ("rule:-lead", False),
        ("doc:INDEX.md", False),
        ("doc:BANK.md", False),
        ("doc:lessons/other.md", False),
        ("doc:docs/lessons.md", True),
    ],
)
def test_destinations(value: str, ok: bool) -> None:
    if ok:
        assert str(parse_destination(value)) == value
    else:
        with pytest.raises(ValueError):
            parse_destination(value)


# Every spelling that names the bank's own files or git's folder on some filesystem: macOS and
# Windows ignore letter case, macOS compares Unicode-normalised names, Windows drops trailing dots.
OWN_FILES = [
    "doc:.GIT/x.md", "doc:.Git/hooks/x.md", "doc:LESSONS/x.md", "doc:Lessons/sub/x.md", "doc:index.md",
    "doc:Index.md", "doc:Bank.md", "doc:bank.MD", "doc:.LessonBank/x.md", "doc:docs/.git/x.md",
    "doc:docs/LESSONS/x.md", "doc:\uff29\uff2e\uff24\uff25\uff38.md", "doc:\uff4c\uff45\uff53\uff53\uff4f\uff4e\uff53/x.md",
    "doc:lessons./x.md", "doc:.git /x.md", "doc:./INDEX.md", "doc:.\uff47it/x.md",
]  # fmt: skip
PROJECT_DOCS = [
    "doc:docs/index.md", "doc:docs/Bank.md", "doc:docs/lessons.md", "doc:git/x.md", "doc:.github/x.md",
    "doc:lessons-learned/x.md", "doc:INDEX-notes.md", "doc:caf\u00e9/x.md", "doc:cafe\u0301/x.md",
    "doc:docs/.gitignore.md", "doc:Notes.MD",
]  # fmt: skip


@pytest.mark.parametrize("value", OWN_FILES)
def test_destinations_into_the_banks_own_files_are_refused_in_any_spelling(value: str) -> None:
    with pytest.raises(ValueError, match="the bank manages that file itself"):
        parse_destination(value)


@pytest.mark.parametrize("value", PROJECT_DOCS)
def test_project_docs_that_only_look_alike_are_accepted(value: str) -> None:
    assert parse_destination(value).kind == "doc"


def test_validate_reports_hostile_triggers_with_the_reason() -> None:
    lesson = parse(HAND_EDITED)
    lesson.commands = [r"\bgit\s+push\b", r"(a+)+$"]
    lesson.paths = ["src/**/*.py", "**/**/**/**/*a*a*a*a*b"]
    assert validate(lesson) == [
        ("commands", "triggers.commands[1] '(a+)+$': nested quantifier `(a+)+` can take exponential time: "
         "its inner `a+` can match the text of a whole pass; rewrite as `a+`"),
        ("paths", "triggers.paths[1] '**/**/**/**/*a*a*a*a*b': `**/**` repeats `**`, which already spans "
         "any number of folders; write `**` once"),
    ]  # fmt: skip


def test_validate_reports_bad_values() -> None:
    lesson = parse(HAND_EDITED)
    lesson.commands = ["pytest(", "ok"]
    lesson.paths = ["src/[abc"]
    lesson.priority = 11
    lesson.tags = ["notag"]
    fields = {f for f, _ in validate(lesson)}
    assert fields == {"commands", "paths", "priority", "tags"}


@pytest.mark.parametrize(
    ("glob", "ok"),
    [
        ("src/**/*.py", True),
        ("a\\[b", True),
        ("[]]x", True),
        ("x[!a-z]", True),
        ("a[b", False),
        ("", False),
        ("/abs/*.py", False),
        ("../up/*.py", False),
    ],
)
def test_glob_problems_agree_with_the_hooks_matcher(glob: str, ok: bool) -> None:
    """`bank check` calls a glob broken exactly when the hooks could not read it as written."""
    assert (glob_problem(glob) == "") is ok


@pytest.mark.parametrize(
    ("seen", "sessions", "counted"),
    [
        (1, [], False),  # created without a session: that was its one sessionless count
        (1, ["s1"], True),  # every count so far named a session: one without may count once
        (2, ["s1"], False),  # …and only once, ever
        (3, ["s1", "s2"], False),
    ],
)
def test_a_sighting_without_a_session_counts_at_most_once(seen: int, sessions: list[str], counted: bool) -> None:
    lesson = parse(HAND_EDITED)
    lesson.seen, lesson.sessions = seen, list(sessions)
    after, did = frontmatter_edit.record_session(lesson, None, "2026-11-30")
    assert did is counted
    assert after.seen == seen + counted and after.sessions == sessions
