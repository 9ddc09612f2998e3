"""Lesson text made inert in markdown: no `@path` import, no raw HTML. The one rule for every
file rendered from lessons (BANK.md, the sections groom writes into rules, skills and docs,
and so into CLAUDE.md and the copies `bank rules` makes).

- Claude Code reads `@path` in CLAUDE.md and in the files it imports as "insert that file
  here" (`@/etc/passwd`, `@~/.ssh/id_rsa`), when the `@` starts the text or follows white
  space, outside code. A backslash before such an `@` stops the import and still renders as
  `@` (CommonMark escapes any ASCII punctuation); `user@example.com` is left as it is.
- A `<` that could open raw HTML (a tag, `</`, `<!--`, `<!` or `<?`) gets the same backslash,
  so an unclosed `<!--` cannot hide the rest of a page and `<script>` is shown, not kept.

Code spans and fenced code blocks are left alone: both are literal already, and a backslash
would show there. INDEX.md's cells need none of this: `index.index_md.escape` puts a
backslash before every markdown character, `@` and `<` included. The text the hooks hand an
agent is not a memory file and is not rendered: `hooks.handover.as_data` neutralises what could
pass there for the harness's own markup instead.
"""

from __future__ import annotations

import dataclasses
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the lesson module imports YAML: only annotations need it here
    from lessonbank.bank.lesson import Lesson

# An `@` that Claude Code would take for an import: not after a word character or a backslash.
_AT = re.compile(r"(?<![\w\\])@(?=[^\s@])")
# A `<` that could start raw HTML (CommonMark 4.6 / 6.6): tag name, closing tag, comment,
# declaration, processing instruction.
_TAG = re.compile(r"<(?=[A-Za-z/!?])")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.DOTALL)


def _escape_prose(text: str) -> str:
    def tag(m: re.Match[str]) -> str:
        run = len(text[: m.start()]) - len(text[: m.start()].rstrip("\\"))
        return m.group(0) if run % 2 else "\\<"

    return _TAG.sub(tag, _AT.sub("\\@", text))


def _escape_line_run(text: str) -> str:
    """Prose lines (no fence): code spans kept, the rest escaped."""
    out: list[str] = []
    at = 0
    for m in _SPAN.finditer(text):
        out.append(_escape_prose(text[at : m.start()]))
        out.append(m.group(0))
        at = m.end()
    out.append(_escape_prose(text[at:]))
    return "".join(out)


def inert(text: str) -> str:
    """`text` with every `@` import and raw-HTML opener broken by a backslash, code left alone."""
    if "@" not in text and "<" not in text:
        return text
    lines = text.split("\n")
    out: list[str] = []
    prose: list[str] = []
    fence: str | None = None
    for line in lines:
        m = _FENCE.match(line)
        if fence is None and m:
            if prose:
                out.append(_escape_line_run("\n".join(prose)))
                prose = []
            fence = m.group(1)
            out.append(line)
        elif fence is not None:
            out.append(line)
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) and not line.strip()[len(m.group(1)) :]:
                fence = None
        else:
            prose.append(line)
    if prose:
        out.append(_escape_line_run("\n".join(prose)))
    return "\n".join(out)


def code_span(text: str) -> str:
    """`text` as one inline code span, whatever backticks it holds (CommonMark 6.1)."""
    flat = " ".join(text.split())
    longest = max((len(run) for run in re.findall(r"`+", flat)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") else ""
    return f"{fence}{pad}{flat}{pad}{fence}"


def inert_lesson(lesson: Lesson) -> Lesson:
    """A copy of `lesson` whose prose (title, when, do, tags, body) is inert, for BANK.md."""
    return dataclasses.replace(
        lesson,
        title=inert(lesson.title),
        when=inert(lesson.when),
        do=inert(lesson.do),
        tags=[inert(t) for t in lesson.tags],
        body=inert(lesson.body),
    )
