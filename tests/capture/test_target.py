"""capture.target: what --to accepts, and that a capture that changes nothing makes no branch."""

from __future__ import annotations

from pathlib import Path

import pytest

from lessonbank.capture import target
from lessonbank.capture.draft import Draft
from lessonbank.errors import BankError
from tests.conftest import git
from tests.hook_support import lesson
from tests.team_support import cli, clone_of, team_remote


@pytest.mark.parametrize(
    ("value", "parsed"),
    [("personal", ("personal", "")), ("team:acme", ("team", "acme")), ("team:web-2", ("team", "web-2"))],
)
def test_parse(value: str, parsed: tuple[str, str]) -> None:
    assert target.parse(value) == parsed


@pytest.mark.parametrize("value", ["project", "team:", "team:Acme", "team:a/b", "Personal", "acme"])
def test_parse_refuses(value: str) -> None:
    with pytest.raises(BankError, match="--to takes `personal` or `team:NAME`"):
        target.parse(value)


def test_a_repeat_already_seen_in_the_session_makes_no_branch(tmp_path: Path) -> None:
    known = lesson("cargo-backtrace", sessions=["s1"])
    bare, _ = team_remote(tmp_path, "acme", [known])
    assert cli("remote", "add", "acme", str(bare)).exit_code == 0
    done = target.capture_to("team:acme", [Draft(when=known.when, do=known.do, promote_to="rule:testing", session="s1")])
    assert done.branch == ""
    assert done.lines == ["repeat of cargo-backtrace (lessons/cargo-backtrace.md), already seen in session s1: seen stays 1"]
    assert git(clone_of("acme"), "branch", "--format=%(refname:short)").split() == ["main"]
