"""End to end: team banks shared through git reach the agent in another project.

Two bare repositories on disk are the team banks `acme` and `web`. Alice works in project A,
Bob in project B; each has their own data folder (XDG_DATA_HOME) with clones of both team banks
made by `bank remote add`. Alice captures a lesson into acme with `bank capture --to team:acme`
and pushes the branch; a colleague merges it. Bob's agent (the real Claude Code CLI against the
scripted model) does not get it before `bank pull` and does after; meanwhile Bob's clone of
`web` has diverged from its remote, and `bank pull` reports it and leaves it as it is.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from .claude_harness import Runner
from .model_server import Bash, Text
from .test_hooks_e2e import GIT_IDENTITY, SESSION_ENV, git_project

pytestmark = pytest.mark.e2e

CARGO_LESSON = [
    "--title", "cargo test needs the backtrace on",
    "--when", "cargo test fails in one of our crates with a bare panic message",
    "--do", "run it as RUST_BACKTRACE=1 cargo test to see where it panicked",
    "--promote-to", "rule:rust",
    "--tags", "tool:cargo",
    "--trigger-tool", "Bash",
    "--trigger-command", r"^(?!.*RUST_BACKTRACE=1)(?=.*\bcargo\s+test\b)",
]  # fmt: skip
SLUG = "cargo-test-needs-the-backtrace-on"


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, env={**os.environ, **GIT_IDENTITY})
    assert done.returncode == 0, f"git {shlex.join(args)}: {done.stderr}"
    return done.stdout


def bank(cwd: Path, data: Path, *args: str, code: int = 0) -> str:
    """`bank ARGS` as a process in `cwd` for the user whose data folder is `data`; its output."""
    done = subprocess.run(
        [sys.executable, "-m", "lessonbank", *args], cwd=cwd, capture_output=True, text=True,
        env={**os.environ, **SESSION_ENV, "HOME": str(data.parent), "XDG_DATA_HOME": str(data)},
    )  # fmt: skip
    assert done.returncode == code, f"bank {shlex.join(args)} -> {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done.stdout + done.stderr


def team_bank(tmp_path: Path, name: str) -> tuple[Path, Path]:
    """(bare repository, a colleague's clone) of a new team bank with nothing in it yet."""
    bare = tmp_path / f"{name}.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    colleague = tmp_path / f"{name}-colleague"
    git(tmp_path, "clone", "-q", str(bare), str(colleague))
    bank(colleague, tmp_path / "colleague-data", "init")
    git(colleague, "add", "-A")
    git(colleague, "commit", "-q", "-m", "a team bank")
    git(colleague, "push", "-q", "origin", "HEAD:main")
    return bare, colleague


def test_a_lesson_merged_into_a_team_bank_reaches_another_project_after_pull(tmp_path: Path, claude: Runner) -> None:
    acme, acme_colleague = team_bank(tmp_path, "acme")
    web, web_colleague = team_bank(tmp_path, "web")
    alice, bob = tmp_path / "alice" / "data", tmp_path / "bob" / "data"
    project_a = git_project(tmp_path / "project-a", "")
    project_b = git_project(tmp_path / "project-b", "")
    for project, data in ((project_a, alice), (project_b, bob)):
        data.mkdir(parents=True)
        bank(project, data, "init")
        bank(project, data, "install", "claude")
        bank(project, data, "remote", "add", "acme", str(acme))
        bank(project, data, "remote", "add", "web", str(web))
    bob_env = {**SESSION_ENV, "XDG_DATA_HOME": str(bob)}
    script = [Bash("cargo test -q"), Text("Ran the tests.")]

    # Alice captures the lesson into the team bank, on a branch of her clone, and pushes it.
    said = bank(project_a, alice, "capture", "--to", "team:acme", *CARGO_LESSON).splitlines()
    assert said[0] == f"team:acme: created lessons/{SLUG}.md"
    branch = said[1].split()[3]
    assert said[2] == f"propose it: git -C {alice}/lessonbank/teams/acme push origin {branch}  (then open a pull request there)"
    git(alice / "lessonbank/teams/acme", "push", "-q", "origin", branch)
    assert not (project_a / "lessons" / f"{SLUG}.md").exists()

    # Not merged yet: Bob's agent gets nothing.
    # (A prompt sharing no word with the lesson, so that it is the cargo call that brings it.)
    before = claude(project_b, "go ahead", script, env=bob_env)
    assert before.returncode == 0, before.explain()
    assert before.calls()[0].contexts("PreToolUse") == [], before.explain()

    # The pull request is merged; meanwhile Bob's clone of `web` and the web remote both moved on.
    git(acme_colleague, "fetch", "-q", "origin")
    git(acme_colleague, "merge", "-q", "--no-edit", f"origin/{branch}")
    git(acme_colleague, "push", "-q", "origin", "HEAD:main")
    bob_web = bob / "lessonbank/teams/web"
    (bob_web / "NOTES.md").write_text("Bob's local note\n")
    git(bob_web, "add", "NOTES.md")
    git(bob_web, "commit", "-q", "-m", "local")
    bob_web_head = git(bob_web, "rev-parse", "HEAD")
    (web_colleague / "README.md").write_text("the web team's bank\n")
    git(web_colleague, "add", "README.md")
    git(web_colleague, "commit", "-q", "-m", "remote")
    git(web_colleague, "push", "-q", "origin", "HEAD:main")

    pulled = bank(project_b, bob, "pull", code=1).splitlines()
    assert pulled[0].startswith("team:acme: updated ")
    assert pulled[1].startswith(f"team:web: not updated: main in {bob_web} and origin/main have diverged")
    assert pulled[2] == "Error: 1 team bank(s) not updated: web"
    assert git(bob_web, "rev-parse", "HEAD") == bob_web_head
    assert (bob_web / "NOTES.md").read_text() == "Bob's local note\n"
    assert not (bob_web / "README.md").exists()
    assert SLUG in bank(project_b, bob, "list", "--all")

    # Now Bob's agent gets the team's lesson before its cargo call, once, named by its layer.
    after = claude(project_b, "go ahead", [Bash("cargo test -q"), Bash("cargo test -q"), Text("Done.")], env=bob_env)
    assert after.returncode == 0, after.explain()
    first, second = after.calls()
    (context,) = first.contexts("PreToolUse")
    assert f"- [{SLUG}] (team:acme) cargo test needs the backtrace on." in context, after.explain()
    assert second.contexts("PreToolUse") == [], after.explain()
    ledger = (project_b / ".lessonbank" / "ledger.jsonl").read_text()
    assert f'"lesson": "{SLUG}"' in ledger and '"layer": "team:acme"' in ledger
