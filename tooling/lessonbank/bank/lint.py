"""The rules `bank check` applies: a lesson file's own problems, and duplicate ids and slugs across files.

bank.catalog runs them for the derived cache (a file's own problems are kept in its cache record, so a file is checked
again only when its bytes change) and gathers every problem for the command; bank.render leaves
a lesson with a bad value out of what it generates.
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING

from lessonbank.bank import names
from lessonbank.bank.store import Loaded, Problem

if TYPE_CHECKING:  # imported where a lesson is parsed, so a `bank check` of unchanged files needs no YAML
    from lessonbank.bank.lesson import Lesson


def id_problem(value: str) -> str:
    """Why `value` is not a ULID as `new_id` writes it (26 Crockford base32 characters, upper
    case, at most 7ZZZ…), or '' when it is one. `bank check` reports it; a lesson is still read."""
    if len(value) != 26:
        return f"id {value!r} must be a ULID: 26 characters, got {len(value)}"
    bad = sorted({c for c in value if c not in names.CROCKFORD})
    if bad:
        return f"id {value!r} must be a ULID: {''.join(bad)!r} not in {names.CROCKFORD}"
    if value[0] > "7":
        return f"id {value!r} must be a ULID: it starts with 0-7 (128 bits)"
    return ""


def _value_lines(lesson: Lesson, lines: dict[str, int]) -> list[tuple[int, str]]:
    """(line, message) of each problem `lesson.validate` finds, each on its key's line."""
    from lessonbank.bank.lesson import TRIGGER_KEYS, validate

    out = []
    for key, message in validate(lesson):
        nested = f"triggers.{key}" if key in TRIGGER_KEYS else key
        out.append((lines.get(nested) or lines.get(key) or lines.get(nested.split(".")[0], 1), message))
    return out


def value_problems(item: Loaded) -> list[Problem]:
    """The problems `lesson.validate` finds in one loaded lesson, each on its key's line."""
    from lessonbank.bank.lesson import key_lines

    lines = key_lines(item.text)
    return [Problem(item.path, line, message) for line, message in _value_lines(item.lesson, lines)]


def lesson_problems(lesson: Lesson, text: str, stem: str) -> list[tuple[int, str, bool]]:
    """(line, message, is a bad value) of each problem of one parsed lesson file: bad values (a
    lesson with one is left out of what `bank index` generates), an id that is not a ULID, a slug
    that is not its file name (`stem`)."""
    from lessonbank.bank.lesson import key_lines

    lines = key_lines(text)
    problems = [(line, message, True) for line, message in _value_lines(lesson, lines)]
    id_message = id_problem(lesson.id)
    if id_message:
        problems.append((lines.get("id", 1), id_message, False))
    if lesson.slug != stem:
        problems.append((lines.get("slug", 1), f"slug {lesson.slug!r} differs from the file name {stem!r}", False))
    for line, what in instruction_like(text):
        problems.append((line, f"reads as an instruction to the agent, not a lesson ({what}): reword it", False))
    from lessonbank.bank import secrets  # only when a file is parsed: detect-secrets' tables load then

    for found in secrets.find(text):
        # A bad value: the lesson is left out of INDEX.md (never injected) and groom will not promote it.
        line = text.count("\n", 0, found.start) + 1
        problems.append((line, f"holds a secret ({found.kind}): remove it (git history keeps it: rotate it)", True))
    return problems


def duplicates(files: list[tuple[Path, str, str]]) -> list[Problem]:
    """A problem on each file whose id or slug another file has too; `files` holds (path, id, slug)."""
    problems = []
    by_id: dict[str, list[Path]] = defaultdict(list)
    by_slug: dict[str, list[Path]] = defaultdict(list)
    for path, lesson_id, slug in files:
        by_id[lesson_id.upper()].append(path)  # ULIDs ignore case: 01ab… and 01AB… are one id
        by_slug[slug].append(path)
    for kind, groups in (("id", by_id), ("slug", by_slug)):
        for value, where in groups.items():
            if len(where) > 1:
                for path in where:
                    others = ", ".join(p.name for p in where if p != path)
                    problems.append(Problem(path, 2, f"duplicate {kind} {value!r} (also in {others})"))
    return problems


# Text that speaks to the agent as its system or its user would, or asks it to hide something: a
# lesson states a situation and what to do, so none of these belongs in one. The hooks neutralise
# such markup in what they hand over anyway; `bank check` names it so a reviewer sees it.
_INSTRUCTION_LIKE = (
    ("a tag the agent's harness uses", re.compile(r"</?\s*(?:system|system-reminder|system_prompt|instructions?|user|assistant|human|tool_result|function_results|antml:[\w-]+)\b[^>]*>", re.I)),
    ("a conversation role marker", re.compile(r"^\s*(?:Human|Assistant|System|User)\s*:", re.M)),
    ("an order to hide something from the user", re.compile(r"\b(?:do not|don't|never)\s+(?:tell|mention|show|reveal|say)\b[^.\n]{0,40}\b(?:the user|the human|anyone)\b", re.I)),
    ("an order to drop earlier instructions", re.compile(r"\b(?:ignore|disregard|forget)\s+(?:all\s+|any\s+)?(?:the\s+)?(?:previous|prior|above|earlier|system)\s+(?:instructions?|prompts?|rules?|messages?)", re.I)),
)


def instruction_like(text: str) -> list[tuple[int, str]]:
    """(line, what) for each piece of a lesson file that reads as an instruction to the agent."""
    out = []
    for what, rx in _INSTRUCTION_LIKE:
        for m in rx.finditer(text):
            out.append((text.count("\n", 0, m.start()) + 1, what))
    return sorted(set(out))
