"""One committed hook file for the whole team: silent on a teammate's machine before they install
lessonbank, unchanged by their install, and working after it (real git clone, two HOMEs)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lessonbank.install import claude, hookfiles, launcher
from tests.conftest import git, run
from tests.hook_support import bash, lesson, make_bank

FILES = {"claude": ".claude/settings.json", "codex": ".codex/hooks.json", "gemini": ".gemini/settings.json"}


def _as(monkeypatch: pytest.MonkeyPatch, home: Path) -> None:
    """This process (and the hooks it starts) now runs as the user whose HOME this is."""
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)


def test_a_teammate_shares_the_committed_hooks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mine, theirs = tmp_path / "home-a", tmp_path / "home-b"
    mine.mkdir()
    theirs.mkdir()
    _as(monkeypatch, mine)
    project = tmp_path / "project"
    make_bank(project, [lesson("pytest-order", tools=["Bash"], commands=[r"\bpytest\b"])])
    git(project, "init", "-q")
    for agent in FILES:
        assert run(project, "install", agent).exit_code == 0
    git(project, "add", "-A")
    git(project, "commit", "-qm", "the bank and its hooks")
    committed = {agent: (project / path).read_bytes() for agent, path in FILES.items()}

    clone = tmp_path / "teammate"
    git(tmp_path, "clone", "-q", str(project), str(clone))
    _as(monkeypatch, theirs)
    command = claude.installed_command(clone)
    assert command == launcher.COMMAND  # nothing of the first machine in it
    assert not launcher.path().exists()
    code, out = claude.run_hook(command, bash(clone, "pytest -q"), clone)
    assert (code, out) == (0, "")  # no lessonbank on this machine yet: silent

    for agent in FILES:
        done = run(clone, "install", agent)
        assert done.exit_code == 0, done.output
        assert done.output.startswith(f"unchanged {FILES[agent]}")
    assert {agent: (clone / path).read_bytes() for agent, path in FILES.items()} == committed
    assert git(clone, "status", "--porcelain") == ""
    assert launcher.path().is_file() and str(theirs) in str(launcher.path())

    code, out = claude.run_hook(command, bash(clone, "pytest -q"), clone)
    assert code == 0 and "[pytest-order]" in json.loads(out)["hookSpecificOutput"]["additionalContext"]
    codex = hookfiles.command(hookfiles.AGENTS["codex"], "PreToolUse")
    assert codex.startswith(launcher.COMMAND)
