"""`bank check`: every problem in every lesson file, with the line it is on."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from lessonbank.bank import lesson as lesson_mod
from lessonbank.bank import names
from lessonbank.bank.store import Bank, Loaded, Problem
from lessonbank.errors import LessonFormatError


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


def value_problems(item: Loaded) -> list[Problem]:
    """The problems `lesson.validate` finds in one loaded lesson, each on its key's line."""
    lines = lesson_mod.key_lines(item.text)
    problems = []
    for key, message in lesson_mod.validate(item.lesson):
        nested = f"triggers.{key}" if key in lesson_mod.TRIGGER_KEYS else key
        line = lines.get(nested) or lines.get(key) or lines.get(nested.split(".")[0], 1)
        problems.append(Problem(item.path, line, message))
    return problems


def check_bank(bank: Bank) -> tuple[list[Problem], int]:
    """All problems (parse errors, bad values, duplicate ids or slugs), sorted; and the file count."""
    problems: list[Problem] = []
    by_id: dict[str, list[Path]] = defaultdict(list)
    by_slug: dict[str, list[Path]] = defaultdict(list)
    paths = bank.lesson_paths()
    for path in paths:
        try:
            item = bank.read(path)
        except LessonFormatError as exc:
            problems.append(Problem(path, exc.line, str(exc)))
            continue
        lesson = item.lesson
        lines = lesson_mod.key_lines(item.text)
        problems += value_problems(item)
        id_message = id_problem(lesson.id)
        if id_message:
            problems.append(Problem(path, lines.get("id", 1), id_message))
        if lesson.slug != path.stem:
            problems.append(
                Problem(
                    path,
                    lines.get("slug", 1),
                    f"slug {lesson.slug!r} differs from the file name {path.stem!r}",
                )
            )
        by_id[lesson.id.upper()].append(path)  # ULIDs ignore case: 01ab… and 01AB… are one id
        by_slug[lesson.slug].append(path)
    for kind, groups in (("id", by_id), ("slug", by_slug)):
        for value, where in groups.items():
            if len(where) > 1:
                for path in where:
                    others = ", ".join(p.name for p in where if p != path)
                    problems.append(Problem(path, 2, f"duplicate {kind} {value!r} (also in {others})"))
    problems.sort(key=lambda p: (str(p.path), p.line, p.message))
    return problems, len(paths)
