"""`#lesson … #/lesson` blocks, as agents write them: read by capture, the Stop hook and scan. Pure."""

from __future__ import annotations

import re

BLOCK_FIELDS = ("tool", "trigger", "mistake", "fix", "tags", "promote-to")
_BLOCK_KEYS = (*BLOCK_FIELDS, "title", "keywords", "priority", "when", "do", "path")
# A block may start after other text on its line ("All fixed. #lesson").
_BLOCK_RE = re.compile(r"(?ms)#lesson\b[^\n]*\n(.*?)^[ \t>]*#/lesson\b")
_FIELD_RE = re.compile(r"^([A-Za-z][A-Za-z_-]*)\s*:\s?(.*)$")


def lesson_blocks(text: str) -> list[tuple[str, dict[str, str]]]:
    """Every block in `text`: its raw text and its fields (lower-case keys; continuation lines joined)."""
    found = []
    for match in _BLOCK_RE.finditer(text):
        fields: dict[str, str] = {}
        key = None
        for raw in match.group(1).splitlines():
            line = raw.lstrip(" \t>")
            m = _FIELD_RE.match(line)
            if m and m.group(1).lower() in _BLOCK_KEYS:
                key = m.group(1).lower()
                fields[key] = m.group(2).strip()
            elif key and line.strip():
                fields[key] = (fields[key] + " " + line.strip()).strip()
        found.append((match.group(0), fields))
    return found
