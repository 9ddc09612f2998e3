"""`seen` counts a capture that names no session once, however often it is typed."""

from __future__ import annotations

from pathlib import Path

from lessonbank.bank.store import Bank
from tests.attacks.attack_support import capture
from tests.conftest import run


def test_seen_counts_a_capture_without_a_session_once_ever(bank: Path) -> None:
    def seen() -> int:
        (item,) = Bank.open(bank).load()
        return item.lesson.seen

    for _ in range(3):  # typed three times at a terminal
        capture(bank, "running the test suite here", "pass -q to pytest")
    assert seen() == 1
    capture(bank, "running the test suite here", "pass -q to pytest", "--session", "s1")
    capture(bank, "running the test suite here", "pass -q to pytest", "--session", "s1")
    capture(bank, "running the test suite here", "pass -q to pytest")
    assert seen() == 2
    result = run(bank, "groom", "--dry-run")
    assert "wait" in result.output and "promote" not in result.output.split("\n")[0]
