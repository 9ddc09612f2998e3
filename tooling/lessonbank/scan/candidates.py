"""The scan's candidates across scans: scoring, merging, the store under .lessonbank/scan/, accepting."""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, fields, replace
from datetime import date
from pathlib import Path
from typing import Any

from lessonbank.bank.store import Bank, flocked, write_atomic
from lessonbank.capture import blocks
from lessonbank.capture.draft import parse_lesson_blocks
from lessonbank.capture.pipeline import Outcome, capture
from lessonbank.errors import BankError, GateRefusal
from lessonbank.scan import calibrate, compliance, distill, sources
from lessonbank.scan.events import Candidate
from lessonbank.scan.outcomes import check_of
from lessonbank.state import statedir

MAX_BODY_EVIDENCE = 3
MAX_EVIDENCE = 5
MAX_SESSIONS = 50
NEEDS_WORDS_CAP = 0.3  # a candidate whose instruction only a person or a model can write
LESSON_FIELDS = ("kind", "title", "when", "do", "tools", "commands", "paths", "keywords", "tags", "verify", "promote_to",
                 "type")  # fmt: skip


@dataclass(frozen=True)
class Weights:
    """How visible signals turn into confidence and priority (settable under [scan] in bank.toml)."""

    base: float = 0.4
    self_reported: float = 0.5
    fix_confirmed: float = 0.2
    user_correction: float = 0.1
    hang_or_timeout: float = 0.05
    per_session: float = 0.1  # each session beyond the first, up to two
    per_project: float = 0.05  # each project beyond the first, up to two
    per_repeat: float = 0.05  # each time beyond one per session the episode came back, up to two
    written: float = 0.05  # the lesson is a kind's general instruction, not the episode's own words
    trigger_checked: float = 0.05  # the trigger fires on the failing command and not on the one that worked
    false_fire: float = 0.1  # taken off per call of those sessions that succeeded and it fires on, up to three
    narrower: float = 0.1  # taken off when only the failing tests were run again, not the whole check
    priority_base: int = 5
    priority_hang: int = 2
    priority_correction: int = 1
    priority_per_session: int = 1
    priority_attempts: int = 1  # three or more failed runs before the fix


def scan_dir(bank: Bank) -> Path:
    return bank.state_dir / statedir.SCAN


def short_id(key: str) -> str:
    """A stable 8-character handle for a candidate, for people to type."""
    return hashlib.sha1(key.encode("utf-8")).hexdigest()[:8]


def weights(bank: Bank) -> Weights:
    """The scoring weights as the bank's config sets them (`[scan]` in bank.toml)."""
    return Weights(**{item.name: bank.config.get(f"scan.{item.name}") for item in fields(Weights)})


# ---- scoring and merging -----------------------------------------------------------------


def score(c: Candidate, w: Weights) -> tuple[float, int, list[str]]:
    """(confidence, priority, the signals that made them) — every term is shown to the reviewer."""
    conf = w.base
    prio = w.priority_base
    why = [f"base {w.base:.2f}"]
    for name, weight, label in (
        ("self_reported", w.self_reported, "self-reported"),
        ("fix_confirmed", w.fix_confirmed, "fix confirmed"),
        ("user_correction", w.user_correction, "user correction"),
        ("hang_or_timeout", w.hang_or_timeout, "hang or timeout"),
        ("written", w.written, "general instruction"),
        ("trigger_checked", w.trigger_checked, "trigger checked"),
    ):
        if c.signals.get(name):
            conf += weight
            why.append(f"{label} +{weight:.2f}")
    extra_sessions = min(2, max(0, len(c.sessions) - 1))
    if extra_sessions:
        conf += extra_sessions * w.per_session
        prio += extra_sessions * w.priority_per_session
        why.append(f"seen in {len(c.sessions)} sessions +{extra_sessions * w.per_session:.2f}")
    again = min(2, max(0, len(c.evidence) - len(c.sessions)))  # the same mistake made again in a session
    if again:
        conf += again * w.per_repeat
        why.append(f"made {len(c.evidence) - len(c.sessions)} more time(s) in a session +{again * w.per_repeat:.2f}")
    extra_projects = min(2, max(0, len(c.projects) - 1))
    if extra_projects:
        conf += extra_projects * w.per_project
        why.append(f"{len(c.projects)} projects +{extra_projects * w.per_project:.2f}")
    if c.signals.get("narrower"):
        conf -= w.narrower
        why.append(f"confirmed by a narrower run -{w.narrower:.2f}")
    false = min(3, c.signals.get("false_fires", 0))
    if false:
        conf -= false * w.false_fire
        why.append(f"fires on {c.signals['false_fires']} call(s) that succeeded -{false * w.false_fire:.2f}")
    if c.signals.get("needs_words") and conf > NEEDS_WORDS_CAP:
        conf = NEEDS_WORDS_CAP
        why.append(f"no instruction yet: at most {NEEDS_WORDS_CAP:.2f}")
    if c.signals.get("hang_or_timeout"):
        prio += w.priority_hang
    if c.signals.get("user_correction"):
        prio += w.priority_correction
    if c.signals.get("attempts", 0) >= 3:
        prio += w.priority_attempts
        why.append(f"{c.signals['attempts']} failed runs")
    return round(min(0.99, max(0.0, conf)), 2), max(1, min(10, prio)), why


def merge(store: dict[str, Candidate], found: list[Candidate], w: Weights) -> list[str]:
    """Fold new candidates into the store by key (idempotent); return the keys that changed."""
    changed: list[str] = []
    for new in found:
        old = store.get(new.key)
        if old is None:
            store[new.key] = new
            old = new
            before = None
        else:
            before = old.to_dict()
            if _rank(new) > _rank(old) and old.status != "accepted":  # better written: it says the lesson
                for name in LESSON_FIELDS:
                    setattr(old, name, getattr(new, name))
                old.signals.pop("needs_words", None)
            for session in new.sessions:
                if session not in old.sessions:
                    old.sessions.append(session)
            del old.sessions[:-MAX_SESSIONS]
            for project in new.projects:
                if project not in old.projects:
                    old.projects.append(project)
            for name, value in new.signals.items():
                old.signals[name] = max(old.signals.get(name, 0), value)
            seen = {(e.get("session"), e.get("time")) for e in old.evidence}
            for item in new.evidence:
                if (item.get("session"), item.get("time")) not in seen:
                    old.evidence.append(item)
            old.evidence.sort(key=lambda e: (str(e.get("time", "")), str(e.get("session", ""))))
            del old.evidence[:-MAX_EVIDENCE]
            if not old.notes:
                old.notes = new.notes
        settle(old)
        old.confidence, old.priority, _ = score(old, w)
        if before != old.to_dict() and old.key not in changed:
            changed.append(old.key)
    return changed


def _rank(c: Candidate) -> tuple[int, int, int]:
    """How well a candidate says its lesson: with an instruction, confirmed by the history, not a bare recurrence."""
    return (not c.signals.get("needs_words"), bool(c.signals.get("fix_confirmed")), c.kind != "recurring")


def settle(c: Candidate) -> None:
    """A failure met in one session only is watched, not proposed: a second session makes it a candidate."""
    if c.status in ("pending", "watching"):
        c.status = "watching" if c.kind == "recurring" and len(c.sessions) < 2 else "pending"


def _read_json(path: Path, default: Any) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return default
    except (OSError, ValueError) as exc:
        raise BankError(f"cannot read {path}: {exc}; delete it to start the scan over") from None


def _dumps(data: Any) -> str:
    return json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


class Store:
    """Candidates (candidates.jsonl), keys never to propose again (rejected.json), file state (files.json)."""

    def __init__(self, bank: Bank) -> None:
        self.bank = bank
        self.dir = scan_dir(bank)
        self.candidates: dict[str, Candidate] = {}
        self.rejected: dict[str, str] = {}
        self.state: dict[str, Any] = {}

    def load(self) -> Store:
        self.state = _read_json(self.dir / "files.json", {})
        self.rejected = _read_json(self.dir / "rejected.json", {})
        self.candidates = {}
        try:
            text = (self.dir / "candidates.jsonl").read_text(encoding="utf-8")
        except FileNotFoundError:
            text = ""
        for line in text.splitlines():
            if line.strip():
                try:
                    cand = Candidate.from_dict(json.loads(line))
                except (ValueError, TypeError):
                    continue
                self.candidates[cand.key] = cand
        return self

    def save(self, dry_run: bool = False) -> list[tuple[Path, str]]:
        """Write the three files (atomically, only when their bytes change)."""
        ordered = sorted(self.candidates.values(), key=lambda c: c.key)
        lines = "".join(json.dumps(c.to_dict(), sort_keys=True, ensure_ascii=False) + "\n" for c in ordered)
        out = []
        for name, text in (
            ("candidates.jsonl", lines),
            ("rejected.json", _dumps(self.rejected)),
            ("files.json", _dumps(self.state)),
        ):
            path = self.dir / name
            out.append((path, write_atomic(path, text, dry_run=dry_run)))
        return out

    @contextlib.contextmanager
    def locked(self, dry_run: bool = False) -> Iterator[Store]:
        """Hold the scan store's lock from load to save, so a scan and a review lose nothing.

        Not the bank's own lock: accepting a candidate captures, and capture takes that one.
        A dry run writes nothing, so it needs no lock (and leaves no lock file).
        """
        if dry_run:
            yield self
            return
        self.dir.mkdir(parents=True, exist_ok=True)
        with flocked(self.dir / "lock"):
            yield self

    def record(self, cand: Candidate, rejected: bool = False, dry_run: bool = False) -> None:
        """Write one review decision onto the store as it is on disk now (another scan may have saved)."""
        with self.locked():
            self.load()
            if rejected:
                self.candidates.setdefault(cand.key, cand)
                self.reject(self.candidates[cand.key])
            else:
                self.candidates[cand.key] = cand
            self.save(dry_run=dry_run)

    def pending(self) -> list[Candidate]:
        """Candidates waiting for review, best first."""
        waiting = [c for c in self.candidates.values() if c.status == "pending"]
        return sorted(waiting, key=lambda c: (-c.confidence, -c.priority, c.key))

    def reject(self, cand: Candidate) -> None:
        self.rejected[cand.key] = cand.when[:120]
        del self.candidates[cand.key]


# ---- completing a candidate, and accepting it ----------------------------------------------


def _destination_for(tool: str, trigger: str) -> str:
    check = check_of(trigger) if trigger else None
    if check is None and tool:
        check = check_of(tool)
    return check.destination if check is not None else "rule:general"


def complete(cand: Candidate) -> Candidate:
    """Fill a self-reported candidate's fields from its #lesson block (the capture parser's reading)."""
    if cand.kind != "lesson" or cand.when:
        return cand
    drafts = parse_lesson_blocks(cand.block)
    if not drafts:
        return cand
    draft = drafts[0]
    cand.when, cand.do = draft.when, draft.do
    cand.tools, cand.commands, cand.tags = draft.tools, draft.commands, draft.tags
    tool_tag = next((t.partition(":")[2] for t in draft.tags if t.startswith("tool:")), "")
    trigger = blocks.lesson_blocks(cand.block)[0][1].get("trigger", "")
    cand.promote_to = draft.promote_to or _destination_for(tool_tag, trigger)
    return cand


def body(cand: Candidate) -> str:
    """The lesson body: where it was learned, and the evidence."""
    if cand.kind == "lesson":
        sessions = ", ".join(f"{e.get('session', '?')} at {e.get('time', '?')}" for e in cand.evidence[-3:])
        return (
            f"Self-reported by the agent in a `#lesson` block (found by `bank scan`): session {sessions}.\n"
        )
    lines = [f"Found by `bank scan` ({cand.kind}, tier {cand.tier}) in {len(cand.sessions)} session(s)."]
    first = cand.evidence[0] if cand.evidence else {}
    for label, key in (("Why, in the agent's words", "diagnosis"), ("What it changed", "summary"),
                       ("What the user said", "correction")):  # fmt: skip
        if first.get(key):
            lines += ["", f"{label}: {first[key]}"]
    if cand.notes and not first.get("diagnosis"):
        lines += ["", f"The agent's note: {cand.notes}"]
    lines += ["", "Evidence:"]
    for item in cand.evidence[-MAX_BODY_EVIDENCE:]:
        lines += ["", f"- session {item.get('session', '?')} at {item.get('time', '?')}"]
        for label in ("failing", "passing", "rerun"):
            if item.get(label):
                lines.append(f"  - {label}: `{item[label]}`")
        if item.get("context"):
            lines.append(f"  - the agent was {item['context']}")
        for excerpt in item.get("excerpt", [])[:3]:
            lines.append(f"  - error: {excerpt}")
        if item.get("edits"):
            names = ", ".join(str(p).replace("\\", "/").rsplit("/", 1)[-1] for p in item["edits"][:5])
            lines.append(f"  - edited: {names}")
    return "\n".join(lines) + "\n"


def accept(bank: Bank, cand: Candidate, dry_run: bool = False) -> list[Outcome]:
    """Capture the candidate once per session not yet counted: the first creates, the rest bump seen.

    Raises GateRefusal when a gate refuses it (nothing is written then)."""
    sessions: list[str | None] = [s for s in cand.sessions if s not in cand.captured]
    if not sessions and not cand.captured:
        sessions = [None]
    if dry_run:
        sessions = sessions[:1]  # nothing is written, so later sessions would only repeat "would create"
    outcomes = []
    for session in sessions:
        outcome = capture(bank, replace(cand, session=session, body=body(cand)), dry_run=dry_run)
        outcomes.append(outcome)
        if not dry_run:
            cand.lesson = outcome.slug
            if session is not None:
                cand.captured.append(session)
    if not dry_run:
        cand.status = "accepted"
    return outcomes


# ---- one scan ------------------------------------------------------------------------------


@dataclass
class Report:
    """What a scan did, for the summary line and --json."""

    stats: sources.Stats
    new: list[str] = field(default_factory=list)  # keys of candidates first found now
    updated: list[str] = field(default_factory=list)  # known candidates seen again
    dropped: int = 0  # found again but rejected before
    watching: list[str] = field(default_factory=list)  # failures met in one session so far, not yet proposed
    accepted: list[tuple[str, list[str]]] = field(default_factory=list)  # (key, outcome lines)
    refused: list[tuple[str, str]] = field(default_factory=list)  # (key, gate message)
    files: list[tuple[Path, str]] = field(default_factory=list)
    protocol: dict[str, list[int]] = field(default_factory=dict)  # agent -> [fixed checks, with a #lesson block]
    weekly: dict[tuple[str, str], list[int]] = field(default_factory=dict)  # (agent, ISO week) -> the same


def run_scan(
    bank: Bank,
    paths: list[Path],
    store: Store,
    accept_above: float | None = None,
    dry_run: bool = False,
    on_bytes: Callable[[int], None] | None = None,
) -> Report:
    """Scan `paths` from where the last scan stopped, merge what is found, accept the confident ones."""
    found, stats = sources.scan_files(paths, store.state, on_bytes)
    report = Report(stats)
    w = weights(bank)
    today_week = compliance.week_of(date.today().isoformat(), "")
    fresh = []
    for cand in found:
        if cand.kind == "fix":
            agent = str(cand.evidence[0].get("agent") or "unknown")
            week = compliance.week_of(cand.evidence[0].get("time"), today_week)
            for counts in (report.protocol.setdefault(agent, [0, 0]), report.weekly.setdefault((agent, week), [0, 0])):
                counts[0] += 1
                counts[1] += bool(cand.evidence[0].get("reported"))
        why = distill.distill(cand) if cand.tier == 2 else ""
        if why:  # an episode with no instruction in it: counted, never proposed
            stats.skip(why)
            continue
        calibrate.check(cand, stats.succeeded)
        if cand.key in store.rejected:
            report.dropped += 1
            continue
        fresh.append(complete(cand))
    known = set(store.candidates)
    watched = {k for k, c in store.candidates.items() if c.status == "watching"}  # proposed now for the first time
    for key in merge(store.candidates, fresh, w):
        if store.candidates[key].status == "watching":
            report.watching.append(key)
        else:
            (report.updated if key in known and key not in watched else report.new).append(key)
    for cand in store.candidates.values():
        cand.confidence, cand.priority, _ = score(cand, w)
    threshold = accept_above if accept_above is not None else float(bank.config.get("scan.accept_above"))
    for cand in list(store.candidates.values()):
        # Accepted candidates met in a new session count that session on their lesson too.
        due = cand.status == "pending" and cand.confidence >= threshold and not cand.signals.get("needs_words")
        recount = cand.status == "accepted" and any(s not in cand.captured for s in cand.sessions)
        if not (due or recount):
            continue
        try:
            outcomes = accept(bank, cand, dry_run=dry_run)
        except GateRefusal as refusal:
            report.refused.append((cand.key, str(refusal)))
            continue
        report.accepted.append((cand.key, [line for o in outcomes for line in o.lines()]))
    report.files = store.save(dry_run=dry_run)
    if not dry_run:  # over time: per agent and ISO week of the episodes (`bank scan --compliance`)
        compliance.record(store.dir, report.weekly)
    return report


def explain(cand: Candidate, w: Weights) -> str:
    """'0.70 = base 0.40, fix confirmed +0.20, …' for the reviewer."""
    conf, prio, why = score(cand, w)
    return f"confidence {conf:.2f} ({', '.join(why)}), priority {prio}"
