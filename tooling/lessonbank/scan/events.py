"""What the scan reads and what it proposes: an `Event` of a session, a `Candidate` lesson with its evidence."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any

from lessonbank.capture.draft import Draft


@dataclass(slots=True)
class Event:
    """One normalized thing that happened in a session: a user or assistant message, or a tool run."""

    kind: str  # user | assistant | tool
    time: str = ""
    text: str = ""  # the message, or the tool's output
    tool: str = ""  # tool name (tool events)
    command: str = ""  # the shell command (shell tool events)
    paths: tuple[str, ...] = ()  # files an edit touched (an edit is a tool event with paths, no command)
    status: str = "ok"  # ok | fail | denied | rejected | interrupted | invalid | unknown
    exit_code: int | None = None
    timed_out: bool = False


@dataclass(kw_only=True)
class Candidate(Draft):
    """A lesson the scan proposes: a draft plus the evidence behind it and its score.

    The score is the draft's own confidence and priority, so accepting a candidate captures it as
    it stands, with a session and the body `scan.candidates.body` writes.
    """

    key: str
    tier: int  # 1: self-reported #lesson block, 2: heuristic
    kind: str  # lesson | fix | unblocked | correction
    source: str = "scanned"
    block: str = ""  # the raw #lesson block (tier 1)
    notes: str = ""  # what the agent said about it (redacted)
    sessions: list[str] = field(default_factory=list)
    projects: list[str] = field(default_factory=list)
    signals: dict[str, int] = field(default_factory=dict)
    evidence: list[dict[str, Any]] = field(default_factory=list)
    confidence: float = 0.0
    priority: int = 5
    status: str = "pending"  # pending | accepted | rejected
    lesson: str = ""  # the slug it became
    captured: list[str] = field(default_factory=list)  # sessions already counted in the bank

    def to_dict(self) -> dict[str, Any]:
        """The candidate as one line of candidates.jsonl: every field but those in NOT_STORED."""
        data = asdict(self)
        for name in NOT_STORED:
            del data[name]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Candidate:
        known = {f.name for f in fields(cls)} - set(NOT_STORED)
        return cls(**{k: v for k, v in data.items() if k in known})


# Draft fields candidates.jsonl does not keep: a scan leaves them empty, or "scanned" (source);
# the body is written when a candidate is accepted. Title, triggers and verify come from distilling.
NOT_STORED = ("session", "body", "source")
