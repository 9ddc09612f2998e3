"""`bank replay`'s count: the later sessions' calls put to the hook, against the failures of the earlier ones. Pure.

A later shell failure *repeats* when its signature (scan/failures) was met in an earlier session:
the mistake the bank had the chance to learn. It is *intercepted* when a lesson whose trigger
matches that very call was in front of the agent when it ran: handed over on that call, or on an
earlier call of the same session (a lesson goes out once a session). A *fire* is a lesson handed
over on a call; a fire on a call that then succeeded cost tokens and prevented nothing the replay
can see. `Hook` is what the CLI passes in: the real PreToolUse code on a compiled index.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from lessonbank.scan import failures
from lessonbank.scan.history import Call, Session
from lessonbank.state import records

MAX_EXAMPLES = 12

# (call, session) -> (what the hook handed over: (slug, bytes of its line), the text's total bytes,
# the slugs whose triggers match the call whether or not they went out).
Hook = Callable[[Call, Session], tuple[list[tuple[str, int]], int, list[str]]]


@dataclass
class LessonCount:
    """What one lesson did in the replay."""

    slug: str
    kind: str = ""
    title: str = ""
    fires: int = 0
    on_success: int = 0
    on_failure: int = 0
    intercepted: int = 0
    bytes: int = 0

    @property
    def tokens(self) -> int:
        return records.tokens(self.bytes)


@dataclass
class KindCount:
    """Later failures of one kind: how many, how many repeat an earlier session's, how many were intercepted."""

    failures: int = 0
    repeats: int = 0
    intercepted: int = 0


@dataclass
class Report:
    """The replay's figures."""

    cut: str = ""
    learned: int = 0  # sessions the bank learned from
    replayed: int = 0  # sessions replayed
    candidates: int = 0
    accepted: int = 0
    calls: int = 0
    failures: int = 0
    repeats: int = 0
    intercepted: int = 0
    own: int = 0  # intercepted by the lesson learned from that very error
    fires: int = 0
    on_success: int = 0
    on_failure: int = 0
    bytes: int = 0
    kinds: dict[str, KindCount] = field(default_factory=dict)
    lessons: dict[str, LessonCount] = field(default_factory=dict)
    examples: list[dict[str, Any]] = field(default_factory=list)  # the repeats, intercepted or not

    @property
    def tokens(self) -> int:
        return records.tokens(self.bytes)

    def to_dict(self) -> dict[str, Any]:
        return {
            "cut": self.cut, "learned_sessions": self.learned, "replayed_sessions": self.replayed,
            "candidates": self.candidates, "accepted": self.accepted, "calls": self.calls,
            "failures": self.failures, "repeats": self.repeats, "intercepted": self.intercepted,
            "intercepted_by_own_lesson": self.own, "fires": self.fires, "fires_on_success": self.on_success,
            "fires_on_failure": self.on_failure, "bytes": self.bytes, "tokens": self.tokens,
            "tokens_method": f"bytes/{records.BYTES_PER_TOKEN}",
            "kinds": {k: vars(v) for k, v in sorted(self.kinds.items())},
            "lessons": [{**vars(v), "tokens": v.tokens} for v in self.sorted_lessons()],
            "repeats_seen": self.examples,
        }  # fmt: skip

    def sorted_lessons(self) -> list[LessonCount]:
        return sorted(self.lessons.values(), key=lambda v: (-v.intercepted, -v.fires, v.slug))


def seen_failures(sessions: list[Session]) -> dict[str, str]:
    """signature -> the error line, of every shell failure in `sessions`."""
    out: dict[str, str] = {}
    for session in sessions:
        for call in session.calls:
            if call.command and call.status == "fail":
                found = failures.classify(call.command, call.output)
                if found is not None:
                    out.setdefault(found.signature, found.line)
    return out


def replay(
    earlier: list[Session],
    later: list[Session],
    hook: Hook,
    lessons: dict[str, tuple[str, str]] | None = None,
    origins: dict[str, set[str]] | None = None,
    on_session: Callable[[], None] | None = None,
) -> Report:
    """Put each later call to `hook` in order; count repeats, interceptions and fires.

    `lessons`: slug -> (kind, title), for the per-lesson table; `origins`: slug -> the signatures
    of the failures it was learned from, to tell an interception by the lesson of that very error.
    """
    seen = seen_failures(earlier)
    lessons, origins = lessons or {}, origins or {}
    report = Report(learned=len(earlier), replayed=len(later))
    for session in later:
        in_context: set[str] = set()
        for call in session.calls:
            report.calls += 1
            handed, size, matching = hook(call, session)
            report.bytes += size
            for slug, line_bytes in handed:
                in_context.add(slug)
                kind, title = lessons.get(slug, ("", ""))
                count = report.lessons.setdefault(slug, LessonCount(slug, kind, title))
                count.fires += 1
                count.bytes += line_bytes
                report.fires += 1
                if call.status == "ok":
                    count.on_success += 1
                    report.on_success += 1
                elif call.status == "fail":
                    count.on_failure += 1
                    report.on_failure += 1
            if call.command and call.status == "fail":
                _failure(report, call, session, seen, [s for s in matching if s in in_context], origins)
        if on_session is not None:
            on_session()
    return report


def _failure(
    report: Report, call: Call, session: Session, seen: dict[str, str], hit: list[str], origins: dict[str, set[str]]
) -> None:
    report.failures += 1
    found = failures.classify(call.command, call.output)
    kind = found.kind if found is not None else "other"
    counts = report.kinds.setdefault(kind, KindCount())
    counts.failures += 1
    if found is None or found.signature not in seen:
        return
    report.repeats += 1
    counts.repeats += 1
    if hit:
        report.intercepted += 1
        counts.intercepted += 1
        for slug in hit:
            report.lessons[slug].intercepted += 1
        if any(found.signature in origins.get(slug, ()) for slug in hit):
            report.own += 1
    if len(report.examples) < MAX_EXAMPLES or hit:
        report.examples.append({
            "session": session.id, "time": call.time, "kind": kind, "command": call.command[:160],
            "error": found.line[:160], "intercepted_by": hit,
        })  # fmt: skip
