"""The mode file, the injection ledger, recorded checks and trial assignments: read, joined, summarised."""

from __future__ import annotations

import json
import math
import re
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from lessonbank.bank.store import Bank, Loaded, write_atomic
from lessonbank.errors import BankError
from lessonbank.kernel import arms as hot_trial
from lessonbank.kernel import statedir as hot_state
from lessonbank.trial import stats as verdict_mod

MODES = hot_state.MODES
MODE_FILE = "mode"
LEDGER_FILE = "ledger.jsonl"
SESSIONS_DIR = "sessions"
CHECKS_FILE = "checks.jsonl"
BYTES_PER_TOKEN = 4
# A lesson is flagged for repeated failure only when the same check failed after it in at least
# this many turns, and in at least half of the turns it was injected in.
SAME_FAILURE_MIN_TURNS = 2


@dataclass(frozen=True)
class Injection:
    """One ledger line: a lesson injected (or, in the without arm, only logged) for a turn."""

    session: str
    turn: str
    lesson: str
    event: str
    bytes: int
    arm: str
    injected: bool
    tool_use_id: str = ""


@dataclass(frozen=True)
class Check:
    """One recorded check run: its session's folder, command, normalized name and whether it passed."""

    folder: str
    turn: str
    command: str
    check: str
    ok: bool
    tool_use_id: str = ""


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
        return math.ceil(self.bytes / BYTES_PER_TOKEN)


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
        return math.ceil(self.bytes / BYTES_PER_TOKEN)

    @property
    def logged_only(self) -> int:
        return sum(s.logged_only for s in self.sessions)


# --- mode ---


def mode_path(bank: Bank) -> Path:
    return bank.state_dir / MODE_FILE


def read_mode(bank: Bank) -> str:
    """The bank's mode: on, off or test, read exactly as the hooks read it."""
    return hot_state.mode(str(bank.state_dir))


def trial_dir(bank: Bank) -> Path:
    return bank.state_dir / hot_trial.TRIAL_DIR


def set_mode(bank: Bank, mode: str, dry_run: bool = False) -> list[tuple[str, str]]:
    """Write the mode file (and, for test, the trial's seed and block size); [(path, action)]."""
    if mode not in MODES:
        raise BankError(f"unknown mode {mode!r}; use one of: {', '.join(MODES)}")
    done = []
    if mode == "test":
        settings = trial_dir(bank) / hot_trial.SETTINGS
        seed, size = int(bank.config.get("trial.seed")), int(bank.config.get("trial.block_size"))
        wanted = f"seed={seed}\nblock={size}\n"
        # A running trial keeps the seed and blocks it started with: changing them mid-way is cheating.
        if not (settings.exists() and assignments(bank)):
            done.append((bank.relative(settings), write_atomic(settings, wanted, dry_run)))
    done.append((bank.relative(mode_path(bank)), write_atomic(mode_path(bank), mode + "\n", dry_run)))
    return done


# --- reading the local state ---


def _json_lines(path: Path) -> Iterator[dict[str, Any] | None]:
    """Each line of a JSONL file as a dict, or None for a line that is not one (a torn write)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return
    except OSError as exc:
        raise BankError(f"cannot read {path}: {exc.strerror}") from None
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except ValueError:
            yield None
            continue
        yield value if isinstance(value, dict) else None


def read_ledger(bank: Bank) -> tuple[list[Injection], int]:
    """Every ledger line in order, and how many lines were skipped as unreadable."""
    rows, skipped = [], 0
    for data in _json_lines(bank.state_dir / LEDGER_FILE):
        try:
            assert data is not None
            rows.append(
                Injection(
                    session=str(data["session"]),
                    turn=str(data["turn"]),
                    lesson=str(data["lesson"]),
                    event=str(data.get("event", "")),
                    bytes=int(data.get("bytes", 0)),
                    arm=str(data.get("arm") or ""),
                    injected=bool(data.get("injected", True)),
                    tool_use_id=str(data.get("tool_use_id") or ""),
                )
            )
        except (AssertionError, KeyError, TypeError, ValueError):
            skipped += 1
    return rows, skipped


def session_dirs(bank: Bank) -> list[Path]:
    """The per-session state folders, sorted."""
    root = bank.state_dir / SESSIONS_DIR
    return sorted(p for p in root.iterdir() if p.is_dir()) if root.is_dir() else []


def read_checks(bank: Bank) -> tuple[list[Check], int]:
    """Every recorded check of every session, in file order, and the count of unreadable lines."""
    rows, skipped = [], 0
    for folder in session_dirs(bank):
        for data in _json_lines(folder / CHECKS_FILE):
            try:
                assert data is not None
                rows.append(
                    Check(
                        folder=folder.name,
                        turn=str(data["turn"]),
                        command=str(data.get("command", "")),
                        check=str(data.get("check", "")),
                        ok=bool(data["ok"]),
                        tool_use_id=str(data.get("tool_use_id") or ""),
                    )
                )
            except (AssertionError, KeyError, TypeError, ValueError):
                skipped += 1
    return rows, skipped


def assignments(bank: Bank) -> list[tuple[str, str, str]]:
    """Trial turns in assignment order: (session, turn, arm), the first record of each turn."""
    path = trial_dir(bank) / hot_trial.LOG
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise BankError(f"cannot read {path}: {exc.strerror}") from None
    seen, out = set(), []
    for line in text.splitlines():
        parts = line.split("\t")
        if len(parts) != 4 or parts[3] not in (hot_trial.WITH, hot_trial.WITHOUT):
            continue
        key = (parts[1], parts[2])
        if key not in seen:
            seen.add(key)
            out.append((parts[1], parts[2], parts[3]))
    return out


def _key(session: str, turn: str) -> tuple[str, str]:
    """A turn as the hooks file it: the session's folder name (checks carry no session id) and the turn."""
    return hot_state.safe_name(session), hot_trial.log_field(turn)


def _check_key(item: Check) -> tuple[str, str]:
    return item.folder, hot_trial.log_field(item.turn)


def _recovered(checks: list[Check]) -> bool:
    """A check that failed in the turn and passed later in the same turn."""
    failed: set[str] = set()
    for item in checks:
        # A command running several checks is named "ruff + mypy", as the Stop hook reads it.
        names = set(item.check.split(" + "))
        if not item.ok:
            failed |= names
        elif names & failed:
            return True
    return False


def trial_turns(bank: Bank) -> list[verdict_mod.Turn]:
    """Every assigned trial turn joined with its checks and the lessons that fitted it."""
    checks: dict[tuple[str, str], list[Check]] = defaultdict(list)
    for item in read_checks(bank)[0]:
        checks[_check_key(item)].append(item)
    lessons: dict[tuple[str, str], list[str]] = defaultdict(list)
    for row in read_ledger(bank)[0]:
        lessons[_key(row.session, row.turn)].append(row.lesson)
    out = []
    for order, (session, turn, arm) in enumerate(assignments(bank)):
        mine = checks.get(_key(session, turn), [])
        out.append(
            verdict_mod.Turn(
                session=session,
                turn=turn,
                arm=arm,
                order=order,
                checks=len(mine),
                failed=sum(1 for c in mine if not c.ok),
                recovered=_recovered(mine),
                lessons=tuple(sorted(set(lessons.get(_key(session, turn), [])))),
            )
        )
    return out


def judge(
    bank: Bank, permutations: int = verdict_mod.PERMUTATIONS
) -> tuple[verdict_mod.Verdict, list[verdict_mod.Turn]]:
    """The trial's verdict over everything recorded so far, and the turns it was computed from."""
    turns = trial_turns(bank)
    return verdict_mod.judge(turns, permutations), turns


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
    rows: list[Injection], checks: list[Check], patterns: dict[str, list[re.Pattern[str]]]
) -> dict[str, set[tuple[str, str]]]:
    """Per lesson, the turns where it was injected and the check it was about still failed after."""
    failed_by_call = {c.tool_use_id: c for c in checks if not c.ok and c.tool_use_id}
    failed_in_turn: dict[tuple[str, str], list[Check]] = defaultdict(list)
    for item in checks:
        if not item.ok:
            failed_in_turn[_check_key(item)].append(item)
    out: dict[str, set[tuple[str, str]]] = defaultdict(set)
    for row in rows:
        if not row.injected:
            continue
        key = _key(row.session, row.turn)
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
        use = lessons.setdefault(row.lesson, LessonUse(row.lesson))
        per = sessions.setdefault(row.session, SessionUse(row.session))
        lesson_sessions[row.lesson].add(row.session)
        if row.injected:
            use.injected += 1
            use.bytes += row.bytes
            per.injected += 1
            per.bytes += row.bytes
            injected_turns[row.lesson].add(_key(row.session, row.turn))
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
    """Lessons groom should report: the with-arm did worse in the trial, or the same failure kept following."""
    if not (bank.state_dir / LEDGER_FILE).exists():
        return {}  # nothing was ever injected or logged: nothing to flag, and no need to read the bank
    flags: dict[str, str] = {}
    for item in verdict_mod.attribute(trial_turns(bank)):
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
        f"~{summary.tokens} tokens (estimated as bytes/{BYTES_PER_TOKEN}); "
        f"logged only (trial's without arm): {summary.logged_only}",
    ]
    if summary.lessons:
        lines.append("per lesson (injected / logged only / bytes / sessions / same check failed after):")
        for use in summary.lessons:
            lines.append(
                f"  {use.slug}: {use.injected} / {use.logged_only} / {use.bytes} / {use.sessions} / "
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
        "tokens_estimate_method": f"bytes/{BYTES_PER_TOKEN}",
        "logged_only": summary.logged_only,
        "lessons": [asdict(u) for u in summary.lessons],
        "sessions": [{**asdict(s), "tokens_estimate": s.tokens} for s in summary.sessions],
        "never_fired": summary.never_fired,
        "skipped_lines": summary.skipped_lines,
    }


def _plain(value: Any) -> Any:
    """Infinite floats as the string "inf" so the output stays strict JSON."""
    if isinstance(value, float) and math.isinf(value):
        return "inf"
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def verdict_json(verdict: verdict_mod.Verdict) -> dict[str, Any]:
    """The verdict, the rule's constants and the attribution as plain data for --json."""
    data = asdict(verdict)
    for arm in ("with_arm", "without_arm"):
        data[arm]["rate"] = getattr(verdict, arm).rate
    for item, attribution in zip(data["attributions"], verdict.attributions, strict=True):
        item["with_arm"]["rate"] = attribution.with_arm.rate
        item["without_arm"]["rate"] = attribution.without_arm.rate
    data["rule"] = {
        "text": verdict_mod.RULE,
        "min_turns_per_arm": verdict_mod.MIN_TURNS_PER_ARM,
        "min_relative_drop": verdict_mod.MIN_RELATIVE_DROP,
        "confidence": verdict_mod.CONFIDENCE,
        "permutations": verdict_mod.PERMUTATIONS,
        "attribution_min_turns": verdict_mod.ATTRIBUTION_MIN_TURNS,
    }
    return dict(_plain(data))
