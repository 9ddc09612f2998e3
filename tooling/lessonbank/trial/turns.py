"""The hooks' records as typed rows, and the trial's turns joined from them and the arms' log.

The rows come from kernel.records, the one reader of ledger.jsonl and checks.jsonl (the Stop hook
reads them the same way), and a turn is "recovered" by the Stop hook's own rule, records.recovered.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from lessonbank.bank.store import Bank
from lessonbank.errors import BankError
from lessonbank.kernel import arms, records, statedir
from lessonbank.trial import stats


@dataclass(frozen=True)
class Injection:
    """One ledger line (records.LEDGER_FIELDS): a lesson injected (or, in the without arm, only logged) for a turn."""

    session: str
    turn: str
    lesson: str
    event: str
    bytes: int
    arm: str
    injected: bool
    tool_use_id: str = ""


@dataclass(frozen=True)
class CheckRun:
    """One recorded run of a check (records.CHECK_FIELDS), with its session's folder: checks carry no session id."""

    folder: str
    turn: str
    command: str
    check: str
    ok: bool
    tool_use_id: str = ""


def _read(reader: Callable[[str, bool], tuple[list[dict], int]], folder: Path) -> tuple[list[dict], int]:
    """A records reader on a folder; a file that exists but cannot be read stops the command."""
    try:
        return reader(str(folder), True)
    except OSError as exc:
        raise BankError(f"cannot read {exc.filename}: {exc.strerror}") from None


def read_ledger(bank: Bank) -> tuple[list[Injection], int]:
    """Every ledger line in order, and how many lines were skipped as unreadable."""
    rows, skipped = _read(records.read_ledger, bank.state_dir)
    return [Injection(**row) for row in rows], skipped


def session_dirs(bank: Bank) -> list[Path]:
    """The per-session state folders, sorted."""
    root = bank.state_dir / statedir.SESSIONS
    return sorted(p for p in root.iterdir() if p.is_dir()) if root.is_dir() else []


def read_checks(bank: Bank) -> tuple[list[CheckRun], int]:
    """Every recorded check run of every session, in file order, and the count of unreadable lines."""
    runs, skipped = [], 0
    for folder in session_dirs(bank):
        rows, bad = _read(records.read_checks, folder)
        runs += [CheckRun(folder.name, **row) for row in rows]
        skipped += bad
    return runs, skipped


def trial_dir(bank: Bank) -> Path:
    """The trial's folder, where the hooks keep the arms (kernel.arms)."""
    return Path(arms.trial_dir(str(bank.state_dir)))


def assignments(bank: Bank) -> list[tuple[str, str, str]]:
    """Trial turns in assignment order: (session, turn, arm), the first record of each turn."""
    path = trial_dir(bank) / arms.LOG
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise BankError(f"cannot read {path}: {exc.strerror}") from None
    seen, out = set(), []
    for line in text.splitlines():
        parts = line.split("\t")
        if len(parts) != 4 or parts[3] not in (arms.WITH, arms.WITHOUT):
            continue
        key = (parts[1], parts[2])
        if key not in seen:
            seen.add(key)
            out.append((parts[1], parts[2], parts[3]))
    return out


def turn_key(session: str, turn: str) -> tuple[str, str]:
    """A turn as the hooks file it: the session's folder name (checks carry no session id) and the turn."""
    return statedir.safe_name(session), arms.log_field(turn)


def run_key(run: CheckRun) -> tuple[str, str]:
    """The turn of a check run, as turn_key gives it."""
    return run.folder, arms.log_field(run.turn)


def trial_turns(bank: Bank) -> list[stats.Turn]:
    """Every assigned trial turn joined with its checks and the lessons that fitted it."""
    runs: dict[tuple[str, str], list[CheckRun]] = defaultdict(list)
    for run in read_checks(bank)[0]:
        runs[run_key(run)].append(run)
    lessons: dict[tuple[str, str], list[str]] = defaultdict(list)
    for row in read_ledger(bank)[0]:
        lessons[turn_key(row.session, row.turn)].append(row.lesson)
    out = []
    for order, (session, turn, arm) in enumerate(assignments(bank)):
        mine = runs.get(turn_key(session, turn), [])
        out.append(
            stats.Turn(
                session=session,
                turn=turn,
                arm=arm,
                order=order,
                checks=len(mine),
                failed=sum(1 for r in mine if not r.ok),
                recovered=bool(records.recovered([(r.check, r.ok) for r in mine])),
                lessons=tuple(sorted(set(lessons.get(turn_key(session, turn), [])))),
            )
        )
    return out
