"""`bank replay`: what a bank learned from the earlier sessions, and its count of the later sessions' calls put to the hook.

A later shell failure *repeats* when its signature (scan/failures) was met in an earlier session:
the mistake the bank had the chance to learn. It is *intercepted* when a lesson whose trigger
matches that very call was in front of the agent when it ran: handed over on that call, or on an
earlier call of the same session (a lesson goes out once a session). A *fire* is a lesson handed
over on a call; a fire on a call that then succeeded cost tokens and prevented nothing the replay
can see. `Hook` is what the CLI passes in: the real PreToolUse code on a compiled index. The count
is pure; `learn` scans the earlier sessions into a temporary bank first.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from lessonbank.scan import failures
from lessonbank.scan.history import Call, Session
from lessonbank.state import records

MAX_EXAMPLES = 12


class Answer(NamedTuple):
    """What the hook made of one call."""

    handed: list[tuple[str, int]]  # (slug, bytes of its line) of each lesson handed over
    bytes: int  # of the text handed over
    matching: list[str]  # the slugs whose triggers match the call, whether or not they went out


Hook = Callable[[Call, Session], Answer]


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
            answer = hook(call, session)
            report.bytes += answer.bytes
            for slug, line_bytes in answer.handed:
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
                _failure(report, call, session, seen, [s for s in answer.matching if s in in_context], origins)
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


@dataclass
class Learned:
    """What the temporary bank learned: candidates, accepted ones by slug, and the failures each came from."""

    candidates: int
    lessons: dict[str, tuple[str, str]]  # slug -> (kind, title)
    origins: dict[str, set[str]]  # slug -> signatures of the failures in its evidence


def learn(root: Path, sessions: list[Session], accept_above: float, bank_toml: Path | None) -> Learned:
    """Scan the sessions into a new bank at `root`, accepting what reaches `accept_above`."""
    from lessonbank.bank import render, scaffold
    from lessonbank.bank.store import Bank
    from lessonbank.scan.candidates import Store, run_scan

    root.mkdir(parents=True)
    if bank_toml is not None and bank_toml.is_file():
        shutil.copyfile(bank_toml, root / "bank.toml")  # the user's weights and recall budgets
    scaffold.init(root)
    bank = Bank.find(root=root)
    store = Store(bank).load()
    run_scan(bank, [f for s in sessions for f in s.files], store, accept_above)
    render.regenerate(bank)
    lessons: dict[str, tuple[str, str]] = {}
    origins: dict[str, set[str]] = {}
    for cand in store.candidates.values():
        if cand.status != "accepted" or not cand.lesson:
            continue
        lessons[cand.lesson] = (cand.kind, cand.title or cand.when[:60])
        for item in cand.evidence:
            signature = origin(item)
            if signature:
                origins.setdefault(cand.lesson, set()).add(signature)
    proposed = sum(c.status in ("pending", "accepted") for c in store.candidates.values())
    return Learned(proposed, lessons, origins)


def origin(item: dict[str, Any]) -> str | None:
    """The signature of the failure an evidence item records: the one the scan took from the raw
    output (recurring failures keep it), else one worked out from its excerpt (redacted, so it may differ)."""
    signature = item.get("signature")
    if signature:
        return str(signature)
    found = failures.classify(str(item.get("failing", "")), "\n".join(item.get("excerpt") or []))
    return found.signature if found is not None else None
