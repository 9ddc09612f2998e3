"""Secret redaction: find API keys, tokens, private keys and passwords, and personal data, and replace them."""

from __future__ import annotations

from dataclasses import dataclass

from lessonbank.bank.secrets import redact_secrets
from lessonbank.capture.personal import redact_personal


@dataclass(frozen=True)
class Redaction:
    """What was redacted: the kind of secret and how many times."""

    kind: str
    count: int


def redact(text: str) -> tuple[str, list[Redaction]]:
    """Return `text` with every secret and personal datum replaced (`[REDACTED:kind]`, `~` for a home folder)."""
    # Secrets first (bank.secrets: detect-secrets plus our own shapes), then personal data.
    text, secret = redact_secrets(text)
    found = [Redaction(kind, n) for kind, n in secret.items()]
    text, personal = redact_personal(text)
    found.extend(Redaction(kind, n) for kind, n in personal.items())
    return text, found


def describe(found: list[Redaction]) -> str:
    """A short human summary such as '2 github token, 1 password in url'."""
    return ", ".join(f"{r.count} {r.kind}" for r in found)
