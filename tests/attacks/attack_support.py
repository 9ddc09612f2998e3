"""What the attack modules share: a lesson captured through the CLI, as a person would."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import run


def capture(root: Path, when: str, do: str, *more: str) -> None:
    """`bank capture` of one lesson bound for rule:testing; fails the test when it is refused."""
    result = run(root, "capture", "--when", when, "--do", do, "--promote-to", "rule:testing", *more)
    assert result.exit_code == 0, result.output
