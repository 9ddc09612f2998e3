"""Edits to a lesson file that keep a person's text: only the lines that must change, change.

A lesson file is hand-written as often as tool-written, so the tool never re-renders one it did
not create: `set_scalar` and `set_list` rewrite one top-level key's lines and keep every other
byte (comments, unknown keys, flow or block list style, CRLF), and `bump_text` counts a sighting
this way (`record_session`: once per session; seen, sessions, updated). Parsing and rendering
whole files is `bank.lesson`'s job.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from lessonbank.bank.lesson import Lesson, dump_frontmatter, parse
from lessonbank.errors import LessonFormatError

MAX_SESSIONS = 20  # a lesson keeps the last 20 sessions it was seen in; seen keeps counting


def _frontmatter_bounds(lines: list[str]) -> int:
    for i in range(1, len(lines)):
        if lines[i].rstrip("\r\n") in ("---", "..."):
            return i
    raise LessonFormatError("frontmatter is not closed", len(lines))


def _top_key_span(lines: list[str], end: int, key: str) -> tuple[int, int] | None:
    """(first, last+1) line indexes of a top-level key and its indented continuation."""
    for i in range(1, end):
        if re.match(rf"^{re.escape(key)}\s*:", lines[i]):
            j = i + 1
            while j < end and (lines[j].startswith((" ", "\t", "-")) or not lines[j].strip()):
                if lines[j].startswith("-") and not lines[j].startswith("- "):
                    break
                j += 1
            # Trailing blank lines belong to what follows.
            while j > i + 1 and not lines[j - 1].strip():
                j -= 1
            return i, j
    return None


def _scalar(value: Any) -> str:
    out = dump_frontmatter({"v": value})
    return out[len("v: ") :].rstrip("\n")


def _comment_of(line: str) -> str:
    """A trailing ' # comment' on a simple scalar line, kept when the value changes."""
    m = re.search(r"\s+#[^'\"]*$", line.rstrip("\r\n"))
    return m.group(0) if m else ""


def set_scalar(text: str, key: str, value: Any) -> str:
    """Set a top-level scalar key in a lesson file's text, touching only its line.

    The key is appended at the end of the frontmatter if absent.
    """
    lines = text.splitlines(keepends=True)
    end = _frontmatter_bounds(lines)
    span = _top_key_span(lines, end, key)
    newline = "\r\n" if lines[0].endswith("\r\n") else "\n"
    if span is None:
        lines.insert(end, f"{key}: {_scalar(value)}{newline}")
        return "".join(lines)
    first, last = span
    new = f"{key}: {_scalar(value)}{_comment_of(lines[first]) if last == first + 1 else ''}{newline}"
    lines[first:last] = [new]
    return "".join(lines)


def set_list(text: str, key: str, values: list[str]) -> str:
    """Set a top-level list key, keeping the style (flow or block) the file already uses."""
    lines = text.splitlines(keepends=True)
    end = _frontmatter_bounds(lines)
    span = _top_key_span(lines, end, key)
    newline = "\r\n" if lines[0].endswith("\r\n") else "\n"
    flow = f"{key}: {_scalar(list(values))}{newline}"
    if span is None:
        lines.insert(end, flow)
        return "".join(lines)
    first, last = span
    head = lines[first]
    after_colon = head.split(":", 1)[1].strip()
    if after_colon.startswith("[") or last == first + 1:
        lines[first:last] = [flow]
        return "".join(lines)
    # Block style: keep existing item lines (and their comments) that stay, append new ones.
    items = lines[first + 1 : last]
    indent = next((ln[: len(ln) - len(ln.lstrip())] for ln in items if ln.lstrip().startswith("-")), "  ")
    kept: list[str] = []
    present: list[str] = []
    for ln in items:
        stripped = ln.strip()
        if stripped.startswith("- "):
            value = str(yaml.safe_load(stripped[2:].split(" #")[0]) or "")
            if value in values and value not in present:
                kept.append(ln)
                present.append(value)
        elif stripped.startswith("#"):
            kept.append(ln)
    for value in values:
        if value not in present:
            kept.append(f"{indent}- {_scalar(value)}{newline}")
    lines[first + 1 : last] = kept
    return "".join(lines)


def record_session(lesson: Lesson, session: str | None, today: str) -> tuple[Lesson, bool]:
    """Count a sighting of `lesson` in `session`; returns (lesson, counted). Same session: no count.

    A sighting that names no session counts at most once, ever: only while every earlier count
    has a session in `sessions` (seen <= len(sessions)). Typing a lesson twice at a terminal
    must not pass the seen-twice governor. Past MAX_SESSIONS sessions it no longer counts at all.
    """
    if session and session in lesson.sessions:
        return lesson, False
    if not session and lesson.seen > len(lesson.sessions):
        return lesson, False
    sessions = list(lesson.sessions)
    if session:
        sessions = (sessions + [session])[-MAX_SESSIONS:]
    lesson.sessions = sessions
    lesson.seen = lesson.seen + 1
    lesson.updated = today
    return lesson, True


def bump_text(text: str, session: str | None, today: str) -> tuple[str, bool]:
    """Apply `record_session` to a file's text, changing only the seen, sessions, updated lines."""
    lesson = parse(text)
    lesson, counted = record_session(lesson, session, today)
    if not counted:
        return text, False
    text = set_scalar(text, "seen", lesson.seen)
    if session:
        text = set_list(text, "sessions", lesson.sessions)
    text = set_scalar(text, "updated", today)
    return text, True
