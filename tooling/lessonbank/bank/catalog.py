"""What the derived cache (index.derived) says of a bank's lesson files: the bank's side of it.

`describe` is what a lesson file's text gives its record (summary, slug, id, problems, the words of
its when and do); `cache` hands it to the cache with the bank's folders. `bank list`, `stats` and
`check` and capture's duplicate gate read the records through here, so an unchanged bank parses
no lesson. It may import what the bank may (the index among them).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lessonbank.bank.store import Bank, Problem
from lessonbank.index.derived import ID, PROBLEMS, SLUG, Derived
from lessonbank.state import statedir

if TYPE_CHECKING:  # the YAML parser and the checks are imported only when a file is parsed
    from lessonbank.bank.lesson import Lesson

# A summary (what `bank list` and `bank stats` show of a lesson), a tuple in the records:
# (slug, type, seen, priority, status, source, title, tags). Named constants for the reason
# index.derived gives for the records.
S_SLUG, S_TYPE, S_SEEN, S_PRIORITY, S_STATUS, S_SOURCE, S_TITLE, S_TAGS = range(8)


def summary(lesson: Lesson) -> tuple:
    """What `bank list` and `bank stats` show of a lesson (the S_ fields)."""
    # type, status and source take a few values: interned, 50,000 records hold one copy of each
    return (lesson.slug, sys.intern(lesson.type), lesson.seen, lesson.priority, sys.intern(lesson.status),
            sys.intern(lesson.source), lesson.title, tuple(lesson.tags))  # fmt: skip


def terms(when: str, do: str) -> set[str]:
    """The words that say what a lesson says (its when and do, stemmed), for capture's duplicate
    gate; records keep them sorted and space-separated."""
    from lessonbank.matching import words  # here, as the parser: `bank list` parses no lesson

    return words.terms(f"{when} {do}")


def describe(path: Path, text: str) -> tuple[tuple, Lesson]:
    """A well-formed lesson file's (slug, id, summary, terms, problems) and its lesson;
    LessonFormatError for a malformed one. The problems are `lint`'s, with their lines."""
    from lessonbank.bank import lint
    from lessonbank.bank.lesson import parse

    parsed = parse(text)
    problems = tuple(lint.lesson_problems(parsed, text, path.stem))
    terms_text = " ".join(sorted(terms(parsed.when, parsed.do)))
    return (parsed.slug, parsed.id, summary(parsed), terms_text, problems), parsed


def cache(
    bank: Bank, fingerprint: str = "", on_parse: Callable[[Derived, str, Any], None] | None = None
) -> Derived:
    """The bank's derived cache, up to date with its lesson files (only changed ones parsed)."""
    return Derived.open(bank.lessons_dir, bank.state_dir, describe, fingerprint, on_parse)


def problems(bank: Bank, derived: Derived) -> list[Problem]:
    """The files that do not parse (what `Bank.load` skips), sorted by name."""
    return [Problem(bank.lessons_dir / name, line, message) for name, line, message in derived.problems()]


def bad_values(rec: tuple) -> list[tuple[int, str]]:
    """(line, message) of a record's bad values (see lint.lesson_problems)."""
    return [(line, message) for line, message, bad in rec[PROBLEMS] if bad]


# What `bank list`, `stats` and `check` leave unsaved: files whose bytes did not change but whose
# stat keys did (settled since a capture, touched): hashed again next time, a few dozen cost less
# than rewriting the cache.
UNSAVED = 100


def open_bank(bank: Bank) -> Derived:
    """The small part, up to date and saved (but for up to UNSAVED stat keys alone);
    `bank.load_problems` set as `Bank.load` sets it."""
    derived = cache(bank)
    derived.save(unsaved=UNSAVED)
    bank.load_problems = problems(bank, derived)
    return derived


def records(bank: Bank) -> list[tuple[str, tuple]]:
    """(file name, small record) of the well-formed lessons, sorted by file name."""
    small = open_bank(bank).small
    return [(name, rec) for name in sorted(small) if (rec := small[name])[SLUG] is not None]


def summaries(bank: Bank) -> list[tuple]:
    """`summary` of every well-formed lesson, sorted by file name (only changed files parsed; of a
    settled bank, no record read but the summaries)."""
    return open_bank(bank).summaries()


def summary_columns(bank: Bank, tags: bool = True) -> list[list]:
    """`summaries` by S_ field, a list each (not to be changed: the cache's own); S_TAGS only with `tags`."""
    return open_bank(bank).summary_columns(tags)


def check(bank: Bank) -> tuple[list[Problem], int]:
    """What `bank check` reports: every problem (parse errors, bad values, duplicate ids or
    slugs), sorted; and the file count. A file's own problems come from its record."""
    derived = open_bank(bank)
    found: list[Problem] = []
    files = []
    for name, rec in sorted(derived.small.items()):
        path = bank.lessons_dir / name
        found.extend(Problem(path, line, message) for line, message, _ in rec[PROBLEMS])
        if rec[SLUG] is not None:
            files.append((path, rec[ID], rec[SLUG]))
    from lessonbank.bank import lint

    found.extend(lint.duplicates(files))
    found.extend(tracked_state(bank))
    found.sort(key=lambda p: (str(p.path), p.line, p.message))
    return found, len(derived.small)


def tracked_state(bank: Bank) -> list[Problem]:
    """A problem for each file under `.lessonbank/` that git tracks: each machine's own state,
    which lessonbank never takes from a repository (a committed compiled index is rebuilt, a
    committed symlink refused)."""
    import subprocess

    try:
        done = subprocess.run(
            ["git", "-C", str(bank.root), "ls-files", "-z", "--", statedir.STATE],
            capture_output=True, timeout=30, check=False,
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):
        return []
    names = sorted(n for n in done.stdout.decode("utf-8", "replace").split("\0") if n) if done.returncode == 0 else []
    return [
        Problem(bank.root / name, 1, f"tracked by git, but {statedir.STATE}/ is each machine's own state and is "
                f"ignored: `git rm -r --cached {statedir.STATE}` and commit")
        for name in names
    ]  # fmt: skip
