"""Names a lesson is given: its id (a ULID), its slug, and the one rule for cutting a title short."""

from __future__ import annotations

import os
import re
import time

CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def new_id(now_ms: int | None = None, rand: bytes | None = None) -> str:
    """A ULID: 48 bits of milliseconds and 80 random bits, Crockford base32, sortable."""
    ms = int(time.time() * 1000) if now_ms is None else now_ms
    value = (ms << 80) | int.from_bytes(rand if rand is not None else os.urandom(10), "big")
    return "".join(CROCKFORD[(value >> (5 * i)) & 31] for i in range(25, -1, -1))


# Words a cut title or slug must not end on: "cmake-fails-with" reads as a sentence cut short.
DANGLING = frozenset(
    "a an and as at because but by for from if in into of on or so than that the then to under "
    "when where while with without".split()
)


def cut_words(text: str, limit: int, sep: str = " ") -> str:
    """`text` cut to `limit` characters at a word boundary, never ending on a word like "with"."""
    if len(text) <= limit:
        return text
    words = text[: limit + 1].split(sep)[:-1] or [text[:limit]]
    while len(words) > 1 and words[-1].lower().strip(",;:") in DANGLING | {""}:
        words.pop()
    return sep.join(words).rstrip(" ,;:-")


# Names Windows reserves for devices in every folder and with any extension (`con.md` too): a bank
# cloned there could not hold such a file, so no slug or destination may be one.
WINDOWS_RESERVED = frozenset(
    ["con", "prn", "aux", "nul", "conin$", "conout$"]
    + [f"{dev}{n}" for dev in ("com", "lpt") for n in ("0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "¹", "²", "³")]
)


def windows_reserved(part: str) -> bool:
    """Is this file or folder name one Windows reserves (`nul`, `COM1.md`, `aux.tar.gz`)?"""
    return part.split(".", 1)[0].rstrip(" ").lower() in WINDOWS_RESERVED


def slugify(text: str, limit: int = 60) -> str:
    """A file-name-safe slug of a-z0-9 and dashes, cut at a word boundary, never a reserved name."""
    slug = cut_words(re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-"), limit, "-") or "lesson"
    return f"{slug}-lesson" if windows_reserved(slug) else slug
