"""bank.remotes beyond the CLI's view: a team bank whose INDEX.md was merged stale is named on pull."""

from __future__ import annotations

from pathlib import Path

from lessonbank.bank import remotes
from lessonbank.bank.lesson import render
from tests.conftest import git
from tests.hook_support import lesson
from tests.team_support import cli, team_remote


def test_pull_names_a_stale_index_of_the_team_bank(tmp_path: Path) -> None:
    bare, work = team_remote(tmp_path, "acme", [lesson("first-one")])
    assert cli("remote", "add", "acme", str(bare)).exit_code == 0
    # A colleague adds a lesson file without `bank index`: INDEX.md no longer lists the lessons.
    (work / "lessons/second-one.md").write_text(render(lesson("second-one")))
    git(work, "add", "lessons/second-one.md")
    git(work, "commit", "-q", "-m", "no index")
    git(work, "push", "-q", "origin", "HEAD:main")
    [pulled] = remotes.pull()
    assert pulled.ok
    assert pulled.message.endswith(
        "; out of date with its lessons: INDEX.md, BANK.md; the hooks read INDEX.md, so run `bank index` in the team "
        "repository and merge that"
    )
    assert git(remotes.clone_path("acme"), "status", "--porcelain") == ""  # reported, not rewritten


def test_a_bare_repository_whose_head_names_an_unpushed_branch_is_answered_with_the_branch_to_give(
    tmp_path: Path,
) -> None:
    bare, _ = team_remote(tmp_path, "acme", [lesson("first-one")])
    git(bare, "symbolic-ref", "HEAD", "refs/heads/master")  # `git init --bare` without -b; pushes went to main
    result = cli("remote", "add", "acme", str(bare))
    assert result.exit_code == 1
    assert result.output == (
        f"Error: {bare}: its default branch has no commits, so nothing was checked out; it has main: "
        "give one with --branch main\n"
    )
    assert not remotes.clone_path("acme").exists() and remotes.registry() == {}
    assert cli("remote", "add", "acme", str(bare), "--branch", "main").exit_code == 0
