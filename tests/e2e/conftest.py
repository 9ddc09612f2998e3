"""End-to-end fixtures: the real Claude Code CLI, a scripted model, throwaway HOME and projects."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from . import agent_harness
from .claude_harness import ClaudeRun, Runner, find_claude, run_claude
from .model_server import Step

HERE = Path(__file__).resolve().parent

SKIP_REASON = "Claude Code CLI not installed: run .ci/install-claude"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "e2e: drives a real agent CLI (Claude Code, Codex, Copilot, Gemini, Qwen Code) against a scripted model server")


# Tests with an `agent` parameter drive that agent's CLI, not Claude Code's.
OTHER_AGENTS = ("codex", "copilot", "gemini", "qwen")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    missing = {"claude": find_claude() is None}
    missing.update({agent: agent_harness.find(agent) is None for agent in OTHER_AGENTS})
    for item in items:
        path = Path(str(item.fspath)).resolve()
        if HERE not in path.parents:
            continue
        callspec = getattr(item, "callspec", None)
        agent = callspec.params.get("agent", "claude") if callspec is not None else "claude"
        reason = SKIP_REASON if agent == "claude" else f"{agent} CLI not installed: run .ci/install-{agent}"
        if missing[agent] and os.environ.get("LESSONBANK_REQUIRE_E2E"):
            # CI sets this: there a missing CLI is a failure, never a quiet skip.
            raise pytest.UsageError(f"LESSONBANK_REQUIRE_E2E is set but {reason}")
        item.add_marker(pytest.mark.e2e)
        if missing[agent]:
            item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture
def claude_home(tmp_path: Path) -> Path:
    """A HOME of its own for the CLI (its ~/.claude, transcripts, session state)."""
    home = tmp_path / "home"
    home.mkdir()
    return home


@pytest.fixture
def claude(claude_home: Path) -> Runner:
    """Run the CLI: claude(project_dir, prompt, script, **kw) -> ClaudeRun, sharing one HOME."""

    def run(project_dir: Path, prompt: str, script: Sequence[Step], **kw: Any) -> ClaudeRun:
        kw.setdefault("home", claude_home)
        return run_claude(project_dir, prompt, script, **kw)

    return run
