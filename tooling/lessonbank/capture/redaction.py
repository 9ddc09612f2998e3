"""Secret redaction: find API keys, tokens, private keys and passwords, and personal data, and replace them."""

from __future__ import annotations

import re
from dataclasses import dataclass

from lessonbank.capture.personal import redact_personal

# (kind, pattern). Order matters: specific shapes before the generic assignment rule.
_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    (
        "private key",
        re.compile(
            r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\Z)",
            re.S,
        ),
    ),
    ("anthropic key", re.compile(r"\bsk-ant-[A-Za-z0-9_\-]{16,}")),
    ("openai key", re.compile(r"\bsk-(?:proj-)?[A-Za-z0-9_\-]{20,}")),
    ("aws access key", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("github token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})")),
    ("gitlab token", re.compile(r"\bglpat-[A-Za-z0-9_\-]{20,}")),
    ("slack token", re.compile(r"\bxox[abprs]-[A-Za-z0-9\-]{10,}")),
    ("stripe key", re.compile(r"\b[sr]k_(?:live|test)_[A-Za-z0-9]{16,}")),
    ("google api key", re.compile(r"\bAIza[0-9A-Za-z_\-]{35}")),
    ("npm token", re.compile(r"\bnpm_[A-Za-z0-9]{36}\b")),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}")),
    ("password in url", re.compile(r"(?<=://)[^/\s:@]+:[^/\s@]+(?=@)")),
    (
        "bearer token",
        re.compile(r"(?i)(?<=\bbearer )[A-Za-z0-9_\-\.=]{16,}"),
    ),
    (
        "secret assignment",
        re.compile(
            r"(?i)(?<![A-Za-z0-9])(?:password|passwd|pwd|secret|token|api[_-]?key|access[_-]?key"
            r"|client[_-]?secret|auth)(?:[\"']?\s*[:=]\s*[\"']?)(?!\[REDACTED)([^\s\"',;]{6,})"
        ),
    ),
]


@dataclass(frozen=True)
class Redaction:
    """What was redacted: the kind of secret and how many times."""

    kind: str
    count: int


def redact(text: str) -> tuple[str, list[Redaction]]:
    """Return `text` with every secret and personal datum replaced (`[REDACTED:kind]`, `~` for a home folder)."""
    found: list[Redaction] = []
    for kind, pattern in _PATTERNS:
        marker = f"[REDACTED:{kind}]"
        if kind == "secret assignment":

            def _keep_name(m: re.Match[str], marker: str = marker) -> str:
                whole = m.group(0)
                return whole[: m.start(1) - m.start(0)] + marker

            text, n = pattern.subn(_keep_name, text)
        else:
            text, n = pattern.subn(marker, text)
        if n:
            found.append(Redaction(kind, n))
    text, personal = redact_personal(text)
    found.extend(Redaction(kind, n) for kind, n in personal.items())
    return text, found


def describe(found: list[Redaction]) -> str:
    """A short human summary such as '2 github token, 1 password in url'."""
    return ", ".join(f"{r.count} {r.kind}" for r in found)
