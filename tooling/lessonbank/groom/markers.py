"""The stable markers that fence each lesson's section in a destination, and text made safe to sit
between them.

A promoted lesson lives between `<!-- lessonbank:begin ID -->` and `<!-- lessonbank:end ID -->`
lines, so a later groom can refresh it in place and `bank rules` can strip the marker lines from
the copies it shows agents. This module owns those markers (writing and finding them),
`neutralise`, which breaks anything in lesson text that could pass for a marker (and makes it
inert: `bank.inert`), and the heading shifts that fit a lesson's or a rule file's markdown under the
headings around it. It imports only `errors` and `bank.inert`; `promote` and `rulesync` build on it.
"""

from __future__ import annotations

import re

from lessonbank.bank.inert import inert
from lessonbank.errors import BankError

MARK_RE = re.compile(r"<!--\s*lessonbank\s*:\s*(begin|end)\s+(\S+?)\s*-->", re.IGNORECASE)
# Anything that reads as `lessonbank:` could open or close a section (or the rules block);
# a backslash before the colon breaks the marker and still renders as a colon in markdown.
_FORGE_RE = re.compile(r"(lessonbank\s*):", re.IGNORECASE)


def begin_marker(lesson_id: str) -> str:
    """The line that opens a lesson's section."""
    return f"<!-- lessonbank:begin {lesson_id} -->"


def end_marker(lesson_id: str) -> str:
    """The line that closes a lesson's section."""
    return f"<!-- lessonbank:end {lesson_id} -->"


def break_markers(text: str) -> str:
    """Text with anything marker-like broken, so it cannot open or close a section (a rule file
    copied by `bank rules` gets only this: its own `@` imports and HTML are the author's)."""
    return _FORGE_RE.sub(lambda m: m.group(1) + "\\:", text)


def neutralise(text: str) -> str:
    """Lesson text with markers broken and no `@` import or raw HTML left (`bank.inert`)."""
    return break_markers(inert(text))


def sections(text: str, where: str) -> dict[str, tuple[int, int]]:
    """id -> (start, end) offsets of each marked section, whole lines; BankError when malformed."""
    found: dict[str, tuple[int, int]] = {}
    open_id: str | None = None
    open_at = 0
    for m in MARK_RE.finditer(text):
        kind, ident = m.group(1).lower(), m.group(2)
        if kind == "begin":
            if open_id is not None:
                raise BankError(f"{where}: the section of {open_id} is not closed before {ident} opens")
            if ident in found:
                raise BankError(f"{where}: lesson {ident} has two sections")
            open_id, open_at = ident, text.rfind("\n", 0, m.start()) + 1
        else:
            if open_id != ident:
                raise BankError(f"{where}: an end marker for {ident} has no matching begin")
            nl = text.find("\n", m.end())
            found[ident] = (open_at, len(text) if nl < 0 else nl + 1)
            open_id = None
    if open_id is not None:
        raise BankError(f"{where}: the section of {open_id} has no end marker")
    return found


def _heading_levels(lines: list[str]) -> list[int | None]:
    """The heading level of each line (None for text and for anything inside a code fence)."""
    levels: list[int | None] = []
    fence: str | None = None
    for line in lines:
        stripped = line.lstrip()
        level = None
        if stripped.startswith(("```", "~~~")):
            mark = stripped[:3]
            fence = None if fence == mark else (fence or mark)
        elif fence is None and re.match(r"#{1,6}\s", line):
            level = len(line) - len(line.lstrip("#"))
        levels.append(level)
    return levels


def shift_headings(body: str, by: int) -> str:
    """Markdown headings moved `by` levels deeper (at most level 6), code fences left alone."""
    lines = body.splitlines()
    levels = _heading_levels(lines)
    if by <= 0 or all(lv is None for lv in levels):
        return body
    out = [
        ln if lv is None else "#" * min(6, lv + by) + ln[lv:] for ln, lv in zip(lines, levels, strict=True)
    ]
    return "\n".join(out)


def demote(body: str, top: int) -> str:
    """Markdown headings shifted so the highest sits at level `top`, code fences left alone."""
    found = [lv for lv in _heading_levels(body.splitlines()) if lv is not None]
    return shift_headings(body, top - min(found)) if found else body
