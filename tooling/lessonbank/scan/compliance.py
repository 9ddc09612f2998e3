"""Does the #lesson protocol work for this team? Fixed-check episodes, with and without a block, over time.

Each scan appends to `.lessonbank/scan/protocol.jsonl` one row per agent and ISO week of the
episodes it read (a scan reads each transcript line once, so rows add up without counting an
episode twice): `{"week": "2026-W05", "agent": "claude", "fixed": 3, "with_block": 1, "scanned":
"2026-02-01"}`. `table` sums the rows per agent and week for `bank scan --compliance`. It imports
the standard library only.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import date
from pathlib import Path

FILE = "protocol.jsonl"


def week_of(stamp: object, default: str) -> str:
    """The ISO week (2026-W05) of an ISO timestamp or date, or `default` when it has none."""
    try:
        year, week, _ = date.fromisoformat(str(stamp)[:10]).isocalendar()
    except ValueError:
        return default
    return f"{year}-W{week:02d}"


def record(folder: Path, counts: dict[tuple[str, str], list[int]], today: date | None = None) -> None:
    """Append one row per (agent, week) with fixed-check episodes to the protocol log."""
    if not counts:
        return
    scanned = (today or date.today()).isoformat()
    lines = "".join(
        json.dumps({"week": week, "agent": agent, "fixed": f, "with_block": b, "scanned": scanned}) + "\n"
        for (agent, week), (f, b) in sorted(counts.items())
    )
    with open(folder / FILE, "a", encoding="utf-8") as out:
        out.write(lines)


@dataclass(frozen=True)
class Row:
    """One agent's fixed-check episodes in one ISO week, and how many came with a #lesson block."""

    agent: str
    week: str
    fixed: int
    with_block: int

    @property
    def share(self) -> str:
        return f"{round(100 * self.with_block / self.fixed)}%" if self.fixed else "-"


def table(folder: Path) -> list[Row]:
    """The protocol log summed per agent and week, sorted by agent then week (malformed rows skipped)."""
    sums: dict[tuple[str, str], list[int]] = {}
    try:
        text = (folder / FILE).read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    for line in text.splitlines():
        try:
            row = json.loads(line)
            fixed, said = int(row["fixed"]), int(row["with_block"])
            agent, week = str(row["agent"]), str(row["week"])
        except (ValueError, KeyError, TypeError):
            continue
        counts = sums.setdefault((agent, week), [0, 0])
        counts[0] += fixed
        counts[1] += said
    return [Row(agent, week, f, b) for (agent, week), (f, b) in sorted(sums.items())]
