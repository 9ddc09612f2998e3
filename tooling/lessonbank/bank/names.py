"""Names the bank gives or accepts: a lesson's id (a ULID) and slug, the one rule for cutting a title
short, and destinations (`rule:<name>`, `skill:<name>`, `doc:<path>`), all portable to every filesystem."""

from __future__ import annotations

import os
import re
import time
import unicodedata
from dataclasses import dataclass

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


DESTINATION_KINDS = ("rule", "skill", "doc")
DESTINATION_FORMS = (
    "rule:<name> (rules/<name>.md), skill:<name> (an Agent Skills folder), doc:<path inside the repo>"
)

# A rule or skill name (the Agent Skills rule): a-z0-9 and single dashes, none at either end.
DEST_NAME_RE = re.compile(r"^(?!-)(?!.*--)[a-z0-9-]{1,64}(?<!-)$")
# What no lesson may graduate into: the bank's own machinery and git's.
RESERVED_TOP = frozenset({"INDEX.md", "BANK.md", "bank.toml"})
RESERVED_DIRS = frozenset({".git", "lessons", ".lessonbank"})


@dataclass
class Destination:
    """Where a lesson graduates to."""

    kind: str
    name: str

    def __str__(self) -> str:
        return f"{self.kind}:{self.name}"


def parse_destination(value: object) -> Destination:
    """Parse `rule:<name>`, `skill:<name>` or `doc:<path>`; raise ValueError naming the valid forms."""
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"promote-to is missing; use one of: {DESTINATION_FORMS}")
    kind, sep, name = value.strip().partition(":")
    if not sep or kind not in DESTINATION_KINDS:
        raise ValueError(f"promote-to {value!r} has an unknown kind; use one of: {DESTINATION_FORMS}")
    name = name.strip()
    if kind in ("rule", "skill"):
        if not DEST_NAME_RE.match(name):
            raise ValueError(
                f"promote-to {value!r}: a {kind} name is 1-64 characters of a-z, 0-9 and single '-' "
                "(none at either end)"
            )
        if windows_reserved(name):
            raise ValueError(f"promote-to {value!r}: {name!r} is a name Windows reserves for a device")
    else:
        norm = name.replace("\\", "/")
        parts = [p for p in norm.split("/") if p not in ("", ".")]
        if not name or norm.startswith("/") or re.match(r"^[A-Za-z]:", norm) or ".." in parts:
            raise ValueError(
                f"promote-to {value!r}: the doc path must stay inside the repository "
                f"(relative, no '..'); use one of: {DESTINATION_FORMS}"
            )
        if not norm.lower().endswith(".md"):
            raise ValueError(f"promote-to {value!r}: a doc destination is a markdown (.md) file")
        name = "/".join(parts)
        if any(windows_reserved(part) for part in parts):
            raise ValueError(f"promote-to {value!r}: a part of the path is a name Windows reserves for a device")
        if reserved_path(parts):
            raise ValueError(
                f"promote-to {value!r}: the bank manages that file itself; name a doc of the project"
            )
    return Destination(kind, name)


def fold_name(part: str) -> str:
    """A name as case-insensitive, normalising filesystems (macOS, Windows) compare it: NFKC,
    case-folded, without the trailing dots and spaces Windows drops."""
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", part).casefold())
    return folded.rstrip(" .") or folded


def reserved_path(parts: list[str]) -> bool:
    """Is the relative path (split at '/') a RESERVED_TOP file or inside a RESERVED_DIRS folder, in
    any spelling that names the same file on some filesystem?"""
    folded = [fold_name(part) for part in parts]
    dirs = {fold_name(name) for name in RESERVED_DIRS}
    return "/".join(folded) in {fold_name(n) for n in RESERVED_TOP} or bool(dirs.intersection(folded[:-1]))
