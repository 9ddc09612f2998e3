"""The capture gates a Draft passes, in order: destination, no duplicates, no preferences, no secrets."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from lessonbank.bank import catalog
from lessonbank.bank.names import DESTINATION_FORMS, Destination, parse_destination
from lessonbank.bank.secrets import MARKER, redact_secrets
from lessonbank.capture.redaction import Redaction, redact
from lessonbank.errors import GateRefusal
from lessonbank.matching import words

if TYPE_CHECKING:
    from lessonbank.capture.draft import Draft

PREFERENCE_FILE = "your own memory file (~/.claude/CLAUDE.md, or CLAUDE.local.md for this project)"

# First-person taste, and formatting wishes, are a person's preference rather than a project fact.
_PREFERENCE = re.compile(
    r"(?ix)"
    r"\b(?:i|we)\s+(?:really\s+|much\s+|generally\s+|personally\s+)?"
    r"(?:prefer|like|love|hate|dislike|enjoy|would\s+rather|'d\s+rather)\b"
    r"|\b(?:i|we)'d\s+rather\b"
    r"|\bmy\s+(?:own\s+)?(?:style|preference|preferences|taste|habit|liking|favou?rite)\b"
    r"|\bpersonal(?:ly)?\s+(?:preference|taste|style)\b"
    r"|\b(?:prefer|like)\s+(?:tabs|spaces|single\s+quotes|double\s+quotes|emojis?|dark\s+mode)\b"
    r"|\b(?:(?:answer|respond|reply|talk|write)\s+(?:to\s+me\s+)?in\s+(?:a\s+)?(?:casual|formal|friendly|short|terse)"
    r"|call\s+me\b)"
)


def destination(value: str) -> Destination:
    """Gate 1: promote-to must name a valid target inside the repository."""
    try:
        return parse_destination(value)
    except ValueError as exc:
        raise GateRefusal("destination", f"refused: {exc}") from None


lesson_terms = catalog.terms  # the words that say what a lesson says, for similarity


def find_duplicate(draft: Draft, banked: list[tuple[str, str]], threshold: float) -> str | None:
    """Gate 2a: the slug of the most similar banked lesson at or above `threshold`, or None.

    `banked` holds (slug, terms) as the derived cache keeps them: `lesson_terms` sorted and
    space-separated, so no banked lesson is parsed or stemmed again."""
    mine = lesson_terms(draft.when, draft.do)
    best: tuple[float, str] | None = None
    for slug, terms in banked:
        score = words.dice(mine, terms.split())  # distinct words: no set made per banked lesson
        if score >= threshold and (best is None or (score, slug) > best):
            best = (score, slug)
    return None if best is None else best[1]


def sections(markdown: str) -> list[str]:
    """A markdown file cut into sections at headings and blank-line paragraphs."""
    parts: list[str] = []
    current: list[str] = []
    for line in markdown.splitlines():
        if line.lstrip().startswith("#") and current:
            parts.append("\n".join(current))
            current = []
        current.append(line)
    if current:
        parts.append("\n".join(current))
    return parts


def already_written(draft: Draft, destination_text: str, threshold: float) -> bool:
    """Gate 2b: does one section of the destination already hold this lesson's words?"""
    mine = lesson_terms(draft.when, draft.do)
    if len(mine) < 3:
        return False
    return any(words.containment(mine, words.terms(s)) >= threshold for s in sections(destination_text))


def preference(draft: Draft) -> None:
    """Gate 3: refuse personal taste, pointing at the person's own memory file."""
    match = _PREFERENCE.search(" ".join([draft.title, draft.when, draft.do]))
    if match:
        raise GateRefusal(
            "preference",
            f"refused: {match.group(0).strip()!r} reads as a personal preference, not a project "
            f"lesson; keep it in {PREFERENCE_FILE}",
        )


def scrub(texts: dict[str, str]) -> tuple[dict[str, str], list[Redaction]]:
    """Gate 4: redact secrets from every text field; return the clean fields and what was found."""
    clean: dict[str, str] = {}
    totals: dict[str, int] = {}
    for key, value in texts.items():
        clean[key], found = redact(value)
        for item in found:
            totals[item.kind] = totals.get(item.kind, 0) + item.count
    return clean, [Redaction(kind, n) for kind, n in sorted(totals.items())]


def scrub_draft(draft: Draft) -> tuple[Draft, list[Redaction]]:
    """Gate 4 on every field a lesson keeps, so no secret reaches lessons/, the index or a file name.

    Text fields, keywords, tags and the session go through `redact` (secrets and personal data);
    triggers and verify through the secret detector alone, so that they keep working: a command's
    marker is escaped to stay a valid regex, a path's has no glob brackets.
    """
    texts = {"when": draft.when, "do": draft.do, "title": draft.title, "body": draft.body,
             "promote_to": draft.promote_to, "session": draft.session or ""}  # fmt: skip
    for key in ("keywords", "tags"):
        texts.update({f"{key}.{i}": v for i, v in enumerate(getattr(draft, key))})
    clean, found = scrub(texts)
    totals = {r.kind: r.count for r in found}

    def secrets_only(value: str, marker: str) -> str:
        value, counts = redact_secrets(value, marker)
        for kind, n in counts.items():
            totals[kind] = totals.get(kind, 0) + n
        return value

    def deep(value: Any) -> Any:
        if isinstance(value, str):
            return secrets_only(value, MARKER)
        if isinstance(value, list):
            return [deep(v) for v in value]
        if isinstance(value, dict):
            return {k: deep(v) for k, v in value.items()}
        return value

    draft = replace(
        draft,
        when=clean["when"], do=clean["do"], title=clean["title"], body=clean["body"],
        promote_to=clean["promote_to"], session=clean["session"] or None,
        keywords=[clean[f"keywords.{i}"] for i in range(len(draft.keywords))],
        tags=[clean[f"tags.{i}"] for i in range(len(draft.tags))],
        commands=[secrets_only(c, r"\[REDACTED:{kind}\]") for c in draft.commands],
        paths=[secrets_only(p, "REDACTED:{kind}") for p in draft.paths],
        tools=[secrets_only(t, "REDACTED:{kind}") for t in draft.tools],
        verify=deep(draft.verify),
    )  # fmt: skip
    return draft, [Redaction(kind, n) for kind, n in sorted(totals.items())]


__all__ = [
    "DESTINATION_FORMS",
    "already_written",
    "destination",
    "find_duplicate",
    "preference",
    "scrub",
    "scrub_draft",
]
