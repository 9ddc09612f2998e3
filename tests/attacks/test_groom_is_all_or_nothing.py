"""`bank groom` is all or nothing, and never touches the user's checkout by `--branch`.

Attacks from the outside on a bank made with `bank init` and filled by `bank capture` (one
lesson seen in two sessions, so groom promotes it): a stale index.lock, a dirty checkout under
`--branch`, temporary files of killed writers, and real kill -9 at random moments (a few trials
of benchmarks/crash_groom.py, whose 100-trial run is the figure in the README).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import REPO, git, run

BRANCH = "bank-groom/attack"


@pytest.fixture
def groomable(bank: Path) -> Path:
    """A committed bank holding one lesson seen in two sessions (groom promotes it to rules/)."""
    for session in ("s1", "s2"):
        done = run(
            bank, "capture", "--when", "running the test suite here", "--do", "pass -q to pytest, as README.md says",
            "--promote-to", "rule:testing", "--session", session,
        )  # fmt: skip
        assert done.exit_code == 0, done.output
    git(bank, "add", "-A")
    git(bank, "commit", "-q", "-m", "bank")
    return bank


def checkout(root: Path) -> dict[str, str]:
    """What the user sees of the checkout: branch, HEAD, index, status, and every file's bytes."""
    files = {
        str(p.relative_to(root)): p.read_bytes().decode("utf-8", "replace")
        for p in sorted(root.rglob("*"))
        if p.is_file() and not {".git", ".lessonbank"} & set(p.relative_to(root).parts)
    }
    return {
        "branch": git(root, "branch", "--show-current"),
        "head": git(root, "rev-parse", "HEAD"),
        "index": git(root, "ls-files", "-s"),
        "status": git(root, "status", "--porcelain", "--untracked-files=all"),
        "files": repr(files),
    }


def test_a_stale_index_lock_refuses_before_anything_is_written(groomable: Path) -> None:
    (groomable / ".git" / "index.lock").write_text("")
    before = checkout(groomable)
    result = run(groomable, "groom", "--commit")
    assert result.exit_code == 1
    assert result.output.splitlines()[-1].startswith("Error: refused before writing anything:")
    assert checkout(groomable) == before
    (groomable / ".git" / "index.lock").unlink()
    assert run(groomable, "groom", "--commit").exit_code == 0
    assert (groomable / "rules" / "testing.md").is_file()
    assert git(groomable, "status", "--porcelain") == ""


def test_branch_never_moves_the_users_branch_nor_their_uncommitted_files(groomable: Path) -> None:
    (groomable / "README.md").write_text("# project\n\nwork in progress\n", encoding="utf-8")
    (groomable / "notes.txt").write_text("untracked notes\n", encoding="utf-8")
    (groomable / "staged.txt").write_text("staged\n", encoding="utf-8")
    git(groomable, "add", "staged.txt")
    before = checkout(groomable)
    result = run(groomable, "groom", "--commit", "--branch", BRANCH, "--allow-dirty")
    assert result.exit_code == 0, result.output
    assert checkout(groomable) == before
    assert "rules/testing.md" in git(groomable, "ls-tree", "-r", "--name-only", BRANCH)
    assert "work in progress" not in git(groomable, "show", f"{BRANCH}:README.md")


def test_temporary_files_of_killed_writers_are_cleaned_not_committed(groomable: Path) -> None:
    stale = groomable / "lessons" / ".running-the-test-suite-here.md.k2j4h5g6.tmp"
    stale.write_text("half a lesson", encoding="utf-8")
    os.utime(stale, (time.time() - 3600, time.time() - 3600))
    result = run(groomable, "groom", "--commit")
    assert result.exit_code == 0, result.output
    assert not stale.exists()
    assert ".tmp" not in git(groomable, "show", "--name-only", "HEAD")
    assert git(groomable, "status", "--porcelain") == ""


def test_kill_9_at_random_moments_leaves_no_half_applied_tree() -> None:
    """Three trials per mode of the crash benchmark (real processes, SIGKILL to the group)."""
    env = {**os.environ, "PYTHONPATH": str(REPO / "tooling")}
    done = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "crash_groom.py"), "--runs", "3", "--lessons", "16"],
        capture_output=True, text=True, env=env, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    for line in ("half-applied trees after the next run: 0", "changes to the user's checkout: 0"):
        assert done.stdout.count(line) == 2, done.stdout
