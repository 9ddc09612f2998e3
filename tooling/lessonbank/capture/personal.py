"""Personal data in what may enter the bank: email addresses, home folders with user names, phone numbers.

Redacted like secrets (`capture.redaction.redact` applies these after its secret patterns), so every
route into the bank (`bank add`/`capture`, `#lesson` blocks, the scan's evidence and its stored
state) drops them. A home folder keeps its shape: `/home/alice/src/app` becomes `~/src/app`, so a
lesson still says where something was without saying whose machine it was.
"""

from __future__ import annotations

import re

# (kind, pattern, replacement). Home folders first: an email inside a path is still found after.
PATTERNS: list[tuple[str, re.Pattern[str], str]] = [
    (
        "home path",
        re.compile(r"(?<![\w.~-])/(?:home|Users)/(?!\[REDACTED)[A-Za-z0-9._-]+(?=/|\b)"),
        "~",
    ),
    (
        "home path",
        re.compile(r"(?i)(?<![\w~-])[A-Z]:[\\/]+Users[\\/]+(?!public\b|default\b)[A-Za-z0-9._ -]+?(?=[\\/]|\b)"),
        "~",
    ),
    (
        "email",
        re.compile(r"(?<![\w.+-])(?!git@)[A-Za-z0-9._%+-]+@(?:[A-Za-z0-9-]+\.)+[A-Za-z]{2,}\b"),
        "[REDACTED:email]",
    ),
    (
        "phone number",
        re.compile(
            r"(?<![\w.:/+-])(?:\+\d{1,3}[ .-]?)?(?:\(\d{2,4}\)[ .-]?|\d{3}[ .-])\d{3}[ .-]\d{4}(?![\w.:/-])"
            r"|(?<![\w.:/+-])\+\d{1,3}(?:[ .-]\d{2,4}){2,4}(?![\w.:/-])"
        ),
        "[REDACTED:phone number]",
    ),
]


def redact_personal(text: str) -> tuple[str, dict[str, int]]:
    """`text` with personal data replaced, and how many of each kind."""
    counts: dict[str, int] = {}
    for kind, pattern, replacement in PATTERNS:
        text, n = pattern.subn(replacement, text)
        if n:
            counts[kind] = counts.get(kind, 0) + n
    return text, counts
