"""The #lesson protocol's record: rows per agent and ISO week of the episodes, summed for the table."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from lessonbank.scan import compliance


@pytest.mark.parametrize(
    ("stamp", "week"),
    [
        ("2026-11-20T09:00:01.000Z", "2026-W47"),  # Claude Code
        ("2026-02-26T19:36:00Z", "2026-W09"),  # Codex
        ("2027-01-01", "2026-W53"),  # ISO weeks cross the new year
        ("2024-12-30T00:00:00Z", "2025-W01"),
        (None, "fallback"),
        ("yesterday", "fallback"),
    ],
)
def test_week_of(stamp: object, week: str) -> None:
    assert compliance.week_of(stamp, "fallback") == week


def test_record_then_table_sums_per_agent_and_week(tmp_path: Path) -> None:
    compliance.record(tmp_path, {}, date(2026, 3, 1))
    assert not (tmp_path / compliance.FILE).exists()  # a scan that met no fixed check writes nothing
    compliance.record(tmp_path, {("codex", "2026-W09"): [2, 1], ("claude", "2026-W09"): [1, 0]}, date(2026, 3, 1))
    compliance.record(tmp_path, {("claude", "2026-W09"): [3, 3]}, date(2026, 3, 2))
    assert (tmp_path / compliance.FILE).read_text().splitlines()[0] == (
        '{"week": "2026-W09", "agent": "claude", "fixed": 1, "with_block": 0, "scanned": "2026-03-01"}'
    )
    assert [(r.agent, r.week, r.fixed, r.with_block, r.share) for r in compliance.table(tmp_path)] == [
        ("claude", "2026-W09", 4, 3, "75%"),
        ("codex", "2026-W09", 2, 1, "50%"),
    ]
    assert compliance.Row("x", "w", 0, 0).share == "-"
