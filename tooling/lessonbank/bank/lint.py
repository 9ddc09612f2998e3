"""The rules `bank check` applies: a lesson file's own problems, and duplicate ids and slugs across files.

bank.derived runs them (a file's own problems are kept in its cache record, so a file is checked
again only when its bytes change) and gathers every problem for the command.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING

from lessonbank.bank.store import Problem

if TYPE_CHECKING:  # imported where a lesson is parsed, so a `bank check` of unchanged files needs no YAML
    from lessonbank.bank import lesson as lesson_mod


def lesson_problems(lesson: lesson_mod.Lesson, text: str, stem: str) -> list[tuple[int, str]]:
    """(line, message) of each problem of one parsed lesson file: bad values, a slug that is not
    its file name (`stem`)."""
    from lessonbank.bank import lesson as lesson_mod

    problems = []
    lines = lesson_mod.key_lines(text)
    for key, message in lesson_mod.validate(lesson):
        nested = f"triggers.{key}" if key in lesson_mod.TRIGGER_KEYS else key
        line = lines.get(nested) or lines.get(key) or lines.get(nested.split(".")[0], 1)
        problems.append((line, message))
    if lesson.slug != stem:
        problems.append((lines.get("slug", 1), f"slug {lesson.slug!r} differs from the file name {stem!r}"))
    return problems


def duplicates(files: list[tuple[Path, str, str]]) -> list[Problem]:
    """A problem on each file whose id or slug another file has too; `files` holds (path, id, slug)."""
    problems = []
    by_id: dict[str, list[Path]] = defaultdict(list)
    by_slug: dict[str, list[Path]] = defaultdict(list)
    for path, lesson_id, slug in files:
        by_id[lesson_id].append(path)
        by_slug[slug].append(path)
    for kind, groups in (("id", by_id), ("slug", by_slug)):
        for value, where in groups.items():
            if len(where) > 1:
                for path in where:
                    others = ", ".join(p.name for p in where if p != path)
                    problems.append(Problem(path, 2, f"duplicate {kind} {value!r} (also in {others})"))
    return problems
