"""The hooks' records as typed rows, and the trial's per-turn records joined from them and the arms' log.

The rows come from state.records, the one reader of ledger.jsonl and checks.jsonl (the Stop hook
reads them the same way); a turn "ended failing" by records.still_failing, beside the Stop hook's
records.recovered.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from lessonbank.bank.store import Bank
from lessonbank.errors import BankError
from lessonbank.state import arms, records, statedir
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
    layer: str = "project"


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
    """The trial's folder, where the hooks keep the arms (state.arms)."""
    return Path(arms.trial_dir(str(bank.state_dir)))


def assignments(bank: Bank) -> list[tuple[str, str]]:
    """Trial sessions in assignment order: (session, arm), the first record of each session."""
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
        if len(parts) != 3 or parts[2] not in (arms.WITH, arms.WITHOUT):
            continue
        if parts[1] not in seen:
            seen.add(parts[1])
            out.append((parts[1], parts[2]))
    return out


def turn_key(session: str, turn: str) -> tuple[str, str]:
    """A turn as the hooks file it: the session's folder name (checks carry no session id) and the turn."""
    return statedir.safe_name(session), turn


def run_key(run: CheckRun) -> tuple[str, str]:
    """The turn of a check run, as turn_key gives it."""
    return run.folder, run.turn


def trial_records(bank: Bank) -> list[stats.TurnRecord]:
    """The trial's per-turn records: every turn of every assigned session a lesson fitted, in assignment order.

    A session counts once a lesson fitted it (handed over with lessons, only logged without); whether
    one fits is settled before the first lesson reaches the agent, so it is the same chance in both
    arms. A session that was also handed lessons outside test mode (it spans a `bank on`) is left
    out: its arm no longer says what it saw. Its turns are those with a recorded check or a fitted lesson, in the order the session's
    checks ran (turns with lessons but no check follow).
    """
    exposed: dict[str, dict[str, list[str]]] = defaultdict(dict)
    outside: set[str] = set()
    for row in read_ledger(bank)[0]:
        if row.arm in (arms.WITH, arms.WITHOUT):
            exposed[statedir.safe_name(row.session)].setdefault(row.turn, []).append(row.lesson)
        else:
            outside.add(statedir.safe_name(row.session))
    by_folder: dict[str, dict[str, list[CheckRun]]] = defaultdict(dict)
    for run in read_checks(bank)[0]:
        by_folder[run.folder].setdefault(run.turn, []).append(run)
    out = []
    for session, arm in assignments(bank):
        folder = statedir.safe_name(session)
        fitted = exposed.get(folder)
        if not fitted or folder in outside:
            continue
        runs = by_folder.get(folder, {})
        for turn in list(runs) + [t for t in fitted if t not in runs]:
            mine = [(r.check, r.ok) for r in runs.get(turn, [])]
            out.append(
                stats.TurnRecord(
                    session=session,
                    turn=turn,
                    arm=arm,
                    checks=len(mine),
                    failed=sum(1 for _, ok in mine if not ok),
                    ended_failing=bool(records.still_failing(mine)),
                    lessons=tuple(sorted(set(fitted.get(turn, [])))),
                )
            )
    return out


def parse_records(text: str, source: str) -> tuple[list[stats.TurnRecord], int | None]:
    """Records from `bank trial export` output: one JSON object a line, or its --json document.

    Returns the records and the planned size the document carries (None for plain lines).
    A line that is not a record stops with its number and the reason.
    """
    try:
        document = json.loads(text)
    except ValueError:
        document = None
    if isinstance(document, dict) and "records" in document:
        if not isinstance(document["records"], list):
            raise BankError(f'{source}: "records" must be a list')
        size = document.get("planned")
        out = _records(list(enumerate(document["records"], 1)), source, "record")
        return out, size if isinstance(size, int) and not isinstance(size, bool) else None
    items = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            items.append((number, json.loads(line)))
        except ValueError as exc:
            raise BankError(f"{source}: line {number}: not valid JSON: {exc}") from None
    return _records(items, source, "line"), None


def _records(items: list[tuple[int, object]], source: str, where: str) -> list[stats.TurnRecord]:
    out = []
    for number, data in items:
        try:
            out.append(stats.record_from_json(data))
        except ValueError as exc:
            raise BankError(f"{source}: {where} {number}: {exc}") from None
    return out
