"""Every agent's hooks, end to end with the real OpenAI Codex (0.171), GitHub Copilot (1.0.102), Google
Gemini (0.61) and Qwen Code (0.24.4) CLIs, each installed by its `.ci/install-<agent>` script (see
agent_scenarios).

- codex: `bank install codex` writes .codex/hooks.json; the runs pass
  `--dangerously-bypass-hook-trust` and mark the project trusted in a throwaway CODEX_HOME, as a
  user approves the hooks once in /hooks. The server speaks the Responses API (`exec_command`).
- copilot: .github/hooks/lessonbank.json; the same Responses server (`bash`), COPILOT_OFFLINE.
- gemini: `hooks` in .gemini/settings.json (timeouts in milliseconds), the folder trusted by
  GEMINI_CLI_TRUST_WORKSPACE; the server answers streamGenerateContent (`run_shell_command`).
  BeforeTool cannot add context in 0.61: a call's lessons come appended to its result (AfterTool),
  and only a lesson marked `guard: true` holds the call back once.
- qwen: `hooks` in .qwen/settings.json, run with no trust step; the server answers Chat Completions
  (`run_shell_command`). PreToolUse context never reaches the model in 0.24.4: a call's lessons
  come with its result (PostToolUse, PostToolUseFailure), and a guard is a `permissionDecision` deny.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from . import agent_scenarios
from .agent_harness import run_agent
from .model_server import Bash, Text
from .test_hooks_e2e import BAD_CALC, SESSION_ENV, Banked, bank, lesson_files

pytestmark = pytest.mark.e2e
AGENTS = ("codex", "copilot", "gemini", "qwen")


@pytest.mark.parametrize("agent", AGENTS)
def test_recall_checks_and_capture(agent: str, tmp_path: Path) -> None:
    agent_scenarios.recall_and_capture(agent, tmp_path, tmp_path / "home")


@pytest.mark.parametrize("agent", AGENTS)
def test_a_recovered_check_gets_one_nudge_at_the_stop(agent: str, tmp_path: Path) -> None:
    agent_scenarios.recovery_nudge(agent, tmp_path, tmp_path / "home")


@pytest.mark.parametrize("agent", AGENTS)
def test_no_bank_and_bank_off_stay_silent(agent: str, tmp_path: Path) -> None:
    agent_scenarios.silent_without_a_bank_or_when_off(agent, tmp_path, tmp_path / "home")


def last_function_response(body: dict[str, Any]) -> str:
    """The last function response a Gemini request carries, as JSON text."""
    parts = [p for c in body["contents"] for p in c.get("parts", []) if "functionResponse" in p]
    return json.dumps(parts[-1]["functionResponse"]["response"]) if parts else ""


@pytest.mark.parametrize("agent", ["gemini"])
def test_gemini_appends_the_lesson_to_the_calls_result(agent: str, tmp_path: Path) -> None:
    project, run = agent_scenarios.recall_and_capture(agent, tmp_path, tmp_path / "home")
    first = last_function_response(run.main_requests[1])
    lesson = agent_scenarios.lesson_text(project, project.pytest_slug)
    # The call ran (pytest failed on the bad calc.py) and its result carries the lesson after the output.
    assert "Exit Code: 1" in first and "1 failed" in first, first
    assert first.index("Exit Code: 1") < first.index("hook_context") < first.index(lesson), first
    assert "Tool execution blocked" not in run.everything()
    assert len(run.main_requests) == 4, run.explain()  # nothing held back: one request per step


@pytest.mark.parametrize("agent", ["gemini"])
def test_gemini_holds_a_call_back_once_for_a_guard(agent: str, tmp_path: Path) -> None:
    project = Banked(tmp_path / "project", calc=BAD_CALC, agent=agent)
    path = next(p for p in lesson_files(project.root) if project.pytest_slug in p.name)
    path.write_text(path.read_text().replace("\ntags:", "\nguard: true\ntags:", 1))
    bank(project.root, "index")
    script = [Bash("pytest -q"), Bash("pytest -q"), Text("Done.")]  # the model makes the held-back call again

    run = run_agent(agent, project.root, "run the checks", script, home=tmp_path / "home", env=SESSION_ENV)

    assert run.returncode == 0, run.explain()
    held = last_function_response(run.main_requests[1])
    retried = last_function_response(run.main_requests[2])
    lesson = agent_scenarios.lesson_text(project, project.pytest_slug)
    # Request 1 answers the held-back call: the lesson, and no output of a command that never ran.
    assert "Tool execution blocked: lessonbank held this Bash call back once" in held and lesson in held, held
    assert "Output:" not in held
    # The retry ran (pytest failed on the bad calc.py) and carries no lesson: it was claimed.
    assert "Exit Code: 1" in retried and "lessonbank" not in retried, retried
    assert agent_scenarios.checks(project.root) == [("pytest", False)]


def last_tool_result(body: dict[str, Any]) -> str:
    """The last tool result a Chat Completions request carries, as JSON text."""
    results = [m for m in body["messages"] if m.get("role") == "tool"]
    return json.dumps(results[-1]["content"]) if results else ""


@pytest.mark.parametrize("agent", ["qwen"])
def test_qwen_appends_the_lesson_to_the_failed_calls_result(agent: str, tmp_path: Path) -> None:
    project, run = agent_scenarios.recall_and_capture(agent, tmp_path, tmp_path / "home")
    first = last_tool_result(run.main_requests[1])
    lesson = agent_scenarios.lesson_text(project, project.pytest_slug)
    # pytest failed (PostToolUseFailure): its error text, then the lesson after a blank line.
    assert "Exit Code: 1" in first and "1 failed" in first, first
    assert first.index("Exit Code: 1") < first.index("lessonbank: lessons this project learned") < first.index(lesson)
    assert len(run.main_requests) == 4, run.explain()
    # Qwen wrote its settings version into the file; installing again leaves the file as it is.
    settings = project.root / ".qwen" / "settings.json"
    assert '"$version"' in settings.read_text()
    before = settings.read_text()
    assert bank(project.root, "install", agent).stdout.startswith("unchanged .qwen/settings.json\n")
    assert settings.read_text() == before


@pytest.mark.parametrize("agent", ["qwen"])
def test_qwen_denies_a_call_once_for_a_guard(agent: str, tmp_path: Path) -> None:
    project = Banked(tmp_path / "project", calc=BAD_CALC, agent=agent)
    path = next(p for p in lesson_files(project.root) if project.pytest_slug in p.name)
    path.write_text(path.read_text().replace("\ntags:", "\nguard: true\ntags:", 1))
    bank(project.root, "index")
    script = [Bash("pytest -q"), Bash("pytest -q"), Text("Done.")]

    run = run_agent(agent, project.root, "run the checks", script, home=tmp_path / "home", env=SESSION_ENV)

    assert run.returncode == 0, run.explain()
    held = last_tool_result(run.main_requests[1])
    retried = last_tool_result(run.main_requests[2])
    lesson = agent_scenarios.lesson_text(project, project.pytest_slug)
    assert "lessonbank held this Bash call back once" in held and lesson in held, held
    assert "Exit Code" not in held  # it never ran
    assert "Exit Code: 1" in retried and "lessonbank" not in retried, retried
    assert agent_scenarios.checks(project.root) == [("pytest", False)]  # the held-back call is no check
