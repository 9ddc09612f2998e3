"""The trial from the CLI's side: the mode, the trial's start, reset and log, the verdict, and the ledger summary.

The ledger summary says what the hooks put in front of the agent: per lesson and per session, the
estimated tokens, the lessons that never fire, and those the same check kept failing after; with
the trial's attribution it names the lessons groom reports. The records are read and joined in
trial.turns.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from lessonbank.bank.store import Bank, Loaded, write_atomic
from lessonbank.errors import BankError
from lessonbank.state import arms, records, statedir
from lessonbank.trial import stats
from lessonbank.trial.turns import (
    CheckRun,
    Injection,
    assignments,
    read_checks,
    read_ledger,
    run_key,
    trial_dir,
    trial_records,
    turn_key,
)

# A lesson is flagged for repeated failure only when the same check failed after it in at least
# this many turns, and in at least half of the turns it was injected in.
SAME_FAILURE_MIN_TURNS = 2


@dataclass
class LessonUse:
    """One lesson's line in the ledger summary."""

    slug: str
    injected: int = 0
    logged_only: int = 0
    bytes: int = 0
    sessions: int = 0
    same_failure_turns: int = 0
    injected_turns: int = 0
    layer: str = "project"  # index.layers: "project", "personal" or "team:<name>"


@dataclass
class SessionUse:
    """One session's injected bytes (and those only logged in the without arm)."""

    session: str
    injected: int = 0
    bytes: int = 0
    logged_only: int = 0
    logged_bytes: int = 0

    @property
    def tokens(self) -> int:
        """Estimated tokens: bytes / 4, rounded up (an estimate, not a tokenizer count)."""
        return records.tokens(self.bytes)


@dataclass
class Summary:
    """What the ledger says: per lesson, per session, lessons that never fire, repeated failures."""

    mode: str
    lessons: list[LessonUse] = field(default_factory=list)
    sessions: list[SessionUse] = field(default_factory=list)
    never_fired: list[str] = field(default_factory=list)
    skipped_lines: int = 0

    @property
    def injected(self) -> int:
        return sum(s.injected for s in self.sessions)

    @property
    def bytes(self) -> int:
        return sum(s.bytes for s in self.sessions)

    @property
    def tokens(self) -> int:
        return records.tokens(self.bytes)

    @property
    def logged_only(self) -> int:
        return sum(s.logged_only for s in self.sessions)


# --- mode and the trial's life ---


def mode_path(bank: Bank) -> Path:
    return bank.state_dir / statedir.MODE


def read_mode(bank: Bank) -> str:
    """The bank's mode: on, off or test, read exactly as the hooks read it."""
    return statedir.mode(str(bank.state_dir))


def settings(bank: Bank) -> dict[str, int]:
    """The running trial's settings (seed, planned); {} when no trial was started."""
    return arms.read_settings(str(trial_dir(bank)))


def running(bank: Bank) -> bool:
    """A trial is running: `bank test` resumes it."""
    return bool(settings(bank))


def planned(bank: Bank) -> int:
    """The running trial's planned sessions per arm (the default when none is running)."""
    return max(stats.MIN_PLANNED, settings(bank).get("planned", stats.DEFAULT_PLANNED))


def check_planned(value: int) -> int:
    """stats.check_planned, its refusal as the CLI's error."""
    try:
        return stats.check_planned(value)
    except ValueError as exc:
        raise BankError(str(exc)) from None


def log_event(bank: Bank, event: str, dry_run: bool = False, **fields: Any) -> None:
    """Append one event (start, reset, mode) to the trial's log, with the time in UTC."""
    if dry_run:
        return
    stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    statedir.append_line(
        str(trial_dir(bank) / arms.EVENTS), json.dumps({"at": stamp, "event": event, **fields})
    )


def read_log(bank: Bank) -> list[dict]:
    """The trial's log, oldest first (unreadable lines skipped)."""
    try:
        text = (trial_dir(bank) / arms.EVENTS).read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise BankError(f"cannot read {exc.filename}: {exc.strerror}") from None
    rows = []
    for line in text.splitlines():
        try:
            row = json.loads(line)
        except ValueError:
            continue
        if isinstance(row, dict) and isinstance(row.get("event"), str):
            rows.append(row)
    return rows


def start_trial(bank: Bank, size: int, dry_run: bool = False) -> list[tuple[str, str]]:
    """Start a trial: a fresh seed (in the trial's settings only, never printed) and the planned size."""
    check_planned(size)
    seed = arms.fresh_seed()
    path = trial_dir(bank) / arms.SETTINGS
    action = write_atomic(path, f"seed={seed}\nplanned={size}\n", dry_run)
    digest = hashlib.sha256(str(seed).encode()).hexdigest()[:16]
    log_event(bank, "start", dry_run, planned=size, seed_sha256=digest)
    return [(bank.relative(path), action)]


def reset_trial(bank: Bank, size: int | None, dry_run: bool = False) -> list[tuple[str, str]]:
    """Archive the running trial (its settings, assignments and arms) and start a new one."""
    folder = trial_dir(bank)
    done: list[tuple[str, str]] = []
    parts = (
        [p for p in sorted(folder.iterdir()) if p.name not in (arms.ARCHIVE, arms.EVENTS)]
        if folder.is_dir()
        else []
    )
    if parts:
        archive = folder / arms.ARCHIVE
        taken = [int(p.name) for p in archive.iterdir() if p.name.isdigit()] if archive.is_dir() else []
        target = archive / str(max(taken, default=0) + 1)
        done.append((bank.relative(target), "archive"))
        sessions = len(assignments(bank))
        if not dry_run:
            target.mkdir(parents=True)
            for part in parts:
                part.rename(target / part.name)
        log_event(bank, "reset", dry_run, archived=bank.relative(target), sessions=sessions)
    return done + start_trial(bank, planned(bank) if size is None else size, dry_run)


def set_mode(bank: Bank, mode: str, dry_run: bool = False, size: int | None = None) -> list[tuple[str, str]]:
    """Write the mode file (for test, starting a trial when none runs); [(path, action)]."""
    if mode not in statedir.MODES:
        raise BankError(f"unknown mode {mode!r}; use one of: {', '.join(statedir.MODES)}")
    before = read_mode(bank)
    running = bool(settings(bank))
    done = []
    if mode == "test" and not running:
        done += start_trial(bank, stats.DEFAULT_PLANNED if size is None else size, dry_run)
    elif size is not None and size != planned(bank):
        # A running trial keeps the size it started with: changing it mid-way is cheating.
        raise BankError(
            f"the running trial was planned for {planned(bank)} sessions in each arm and keeps that size; "
            f"`bank trial reset --planned {size}` archives it and starts a new trial"
        )
    done.append((bank.relative(mode_path(bank)), write_atomic(mode_path(bank), mode + "\n", dry_run)))
    if running or mode == "test":
        log_event(bank, "mode", dry_run, mode=mode, was=before)
    return done


# --- the verdict ---


def judge(
    bank: Bank, size: int | None = None, lessons: bool = True
) -> tuple[stats.Verdict, list[stats.Session]]:
    """The trial's verdict over everything recorded so far, and the sessions it was computed from."""
    sessions = stats.sessions_of(trial_records(bank))
    return stats.decide(sessions, planned(bank) if size is None else size, lessons), sessions


# --- the ledger summary ---


def _patterns(loaded: list[Loaded]) -> dict[str, list[re.Pattern[str]]]:
    """Each lesson's command triggers, compiled (bad patterns are skipped, `bank check` reports them)."""
    out: dict[str, list[re.Pattern[str]]] = {}
    for item in loaded:
        compiled = []
        for pattern in item.lesson.commands:
            try:
                compiled.append(re.compile(pattern))
            except re.error:
                continue
        out[item.lesson.slug] = compiled
    return out


def same_failures(
    rows: list[Injection], checks: list[CheckRun], patterns: dict[str, list[re.Pattern[str]]]
) -> dict[str, set[tuple[str, str]]]:
    """Per lesson, the turns where it was injected and the check it was about still failed after."""
    failed_by_call = {c.tool_use_id: c for c in checks if not c.ok and c.tool_use_id}
    failed_in_turn: dict[tuple[str, str], list[CheckRun]] = defaultdict(list)
    for item in checks:
        if not item.ok:
            failed_in_turn[run_key(item)].append(item)
    out: dict[str, set[tuple[str, str]]] = defaultdict(set)
    for row in rows:
        if not row.injected:
            continue
        key = turn_key(row.session, row.turn)
        # Exact when the hook recorded the tool call it injected for; else the lesson's own triggers.
        exact = bool(row.tool_use_id) and row.tool_use_id in failed_by_call
        if exact or any(
            p.search(c.command) for c in failed_in_turn.get(key, []) for p in patterns.get(row.lesson, [])
        ):
            out[row.lesson].add(key)
    return out


def summarise(bank: Bank) -> Summary:
    """Injections per lesson and session, estimated tokens, lessons that never fire, repeated failures."""
    rows, skipped = read_ledger(bank)
    checks, skipped_checks = read_checks(bank)
    loaded = bank.load()
    active = sorted(item.lesson.slug for item in loaded if item.lesson.status == "active")
    repeated = same_failures(rows, checks, _patterns(loaded))
    lessons: dict[str, LessonUse] = {}
    sessions: dict[str, SessionUse] = {}
    lesson_sessions: dict[str, set[str]] = defaultdict(set)
    injected_turns: dict[str, set[tuple[str, str]]] = defaultdict(set)
    for row in rows:
        use = lessons.setdefault(row.lesson, LessonUse(row.lesson, layer=row.layer))
        per = sessions.setdefault(row.session, SessionUse(row.session))
        lesson_sessions[row.lesson].add(row.session)
        if row.injected:
            use.injected += 1
            use.bytes += row.bytes
            per.injected += 1
            per.bytes += row.bytes
            injected_turns[row.lesson].add(turn_key(row.session, row.turn))
        else:
            use.logged_only += 1
            per.logged_only += 1
            per.logged_bytes += row.bytes
    for slug, use in lessons.items():
        use.sessions = len(lesson_sessions[slug])
        use.injected_turns = len(injected_turns[slug])
        use.same_failure_turns = len(repeated.get(slug, ()))
    return Summary(
        mode=read_mode(bank),
        lessons=sorted(lessons.values(), key=lambda u: (-u.injected, -u.logged_only, u.slug)),
        sessions=sorted(sessions.values(), key=lambda s: s.session),
        never_fired=[slug for slug in active if slug not in lessons],
        skipped_lines=skipped + skipped_checks,
    )


def flagged_lessons(bank: Bank) -> dict[str, str]:
    """Lessons groom should report: the trial's Holm-corrected test shows harm, or the same failure kept following."""
    if not (bank.state_dir / statedir.LEDGER).exists():
        return {}  # nothing was ever injected or logged: nothing to flag, and no need to read the bank
    flags: dict[str, str] = {}
    for item in judge(bank)[0].lessons:
        if item.flag:
            flags[item.slug] = item.flag
    for use in summarise(bank).lessons:
        if (
            use.same_failure_turns >= SAME_FAILURE_MIN_TURNS
            and 2 * use.same_failure_turns >= use.injected_turns
        ):
            reason = (
                f"the check it is about still failed after it in {use.same_failure_turns} "
                f"of the {use.injected_turns} turns it was injected in"
            )
            flags[use.slug] = f"{flags[use.slug]}; {reason}" if use.slug in flags else reason
    return dict(sorted(flags.items()))


def summary_lines(summary: Summary) -> list[str]:
    """The ledger summary as text."""
    lines = [
        f"mode: {summary.mode}",
        f"injected: {summary.injected} lesson texts, {summary.bytes} bytes, "
        f"~{summary.tokens} tokens (estimated as bytes/{records.BYTES_PER_TOKEN}); "
        f"logged only (trial's without arm): {summary.logged_only}",
    ]
    if summary.lessons:
        lines.append("per lesson (injected / logged only / bytes / sessions / same check failed after):")
        for use in summary.lessons:
            where = "" if use.layer == "project" else f" ({use.layer})"
            lines.append(
                f"  {use.slug}{where}: {use.injected} / {use.logged_only} / {use.bytes} / {use.sessions} / "
                f"{use.same_failure_turns} of {use.injected_turns} turns"
            )
    if summary.sessions:
        lines.append("per session (injected / bytes / ~tokens / logged only):")
        for per in summary.sessions:
            lines.append(f"  {per.session}: {per.injected} / {per.bytes} / ~{per.tokens} / {per.logged_only}")
    lines.append(
        f"never fired ({len(summary.never_fired)}): {', '.join(summary.never_fired)}"
        if summary.never_fired
        else "never fired: none"
    )
    if summary.skipped_lines:
        lines.append(f"skipped {summary.skipped_lines} unreadable line(s) in the local state")
    return lines


def summary_json(summary: Summary) -> dict[str, Any]:
    """The ledger summary as plain data for --json."""
    return {
        "mode": summary.mode,
        "injected": summary.injected,
        "bytes": summary.bytes,
        "tokens_estimate": summary.tokens,
        "tokens_estimate_method": f"bytes/{records.BYTES_PER_TOKEN}",
        "logged_only": summary.logged_only,
        "lessons": [asdict(u) for u in summary.lessons],
        "sessions": [{**asdict(s), "tokens_estimate": s.tokens} for s in summary.sessions],
        "never_fired": summary.never_fired,
        "skipped_lines": summary.skipped_lines,
    }
