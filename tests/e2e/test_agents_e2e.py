"""Every agent's hooks, end to end with the real OpenAI Codex (0.171), GitHub Copilot (1.0.102) and Google
Gemini (0.61) CLIs, each installed by its `.ci/install-<agent>` script (see agent_scenarios).

- codex: `bank install codex` writes .codex/hooks.json; the runs pass
  `--dangerously-bypass-hook-trust` and mark the project trusted in a throwaway CODEX_HOME, as a
  user approves the hooks once in /hooks. The server speaks the Responses API (`exec_command`).
- copilot: .github/hooks/lessonbank.json; the same Responses server (`bash`), COPILOT_OFFLINE.
- gemini: `hooks` in .gemini/settings.json (timeouts in milliseconds), the folder trusted by
  GEMINI_CLI_TRUST_WORKSPACE; the server answers streamGenerateContent (`run_shell_command`).
  BeforeTool cannot add context in 0.61, so the first shell call a lesson fits is denied once
  with the lesson as the reason; the scripts repeat that call (the model's retry), and
  `test_gemini_holds_a_call_back_once` measures what that costs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from . import agent_scenarios as scenarios

pytestmark = pytest.mark.e2e
AGENTS = ("codex", "copilot", "gemini")


@pytest.mark.parametrize("agent", AGENTS)
def test_recall_checks_and_capture(agent: str, tmp_path: Path) -> None:
    scenarios.recall_and_capture(agent, tmp_path, tmp_path / "home")


@pytest.mark.parametrize("agent", AGENTS)
def test_a_recovered_check_gets_one_nudge_at_the_stop(agent: str, tmp_path: Path) -> None:
    scenarios.recovery_nudge(agent, tmp_path, tmp_path / "home")


@pytest.mark.parametrize("agent", AGENTS)
def test_no_bank_and_bank_off_stay_silent(agent: str, tmp_path: Path) -> None:
    scenarios.silent_without_a_bank_or_when_off(agent, tmp_path, tmp_path / "home")


def last_function_response(body: dict[str, Any]) -> str:
    """The last function response a Gemini request carries, as JSON text."""
    parts = [p for c in body["contents"] for p in c.get("parts", []) if "functionResponse" in p]
    return json.dumps(parts[-1]["functionResponse"]["response"]) if parts else ""


@pytest.mark.parametrize("agent", ["gemini"])
def test_gemini_holds_a_call_back_once(agent: str, tmp_path: Path) -> None:
    project, run = scenarios.recall_and_capture(agent, tmp_path, tmp_path / "home")
    held = last_function_response(run.main_requests[1])
    retried = last_function_response(run.main_requests[2])
    # Request 1 answers the held-back call: the lesson, and no output of a command that never ran.
    assert "Tool execution blocked" in held and "run it again" in held, held
    assert scenarios.lesson_text(project, project.pytest_slug) in held
    assert "Output:" not in held
    # The retry ran (pytest failed on the bad calc.py) and carries no lesson.
    assert "Exit Code: 1" in retried and "lessonbank" not in retried, retried
    # The cost: one more model request than the same work without the hold-back (5, not 4).
    assert len(run.main_requests) == 5, run.explain()
