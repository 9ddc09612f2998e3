"""Rules in the agents' own scoped forms, read by the real CLIs: `bank rules` writes them, the CLI
loads a scoped rule only once it works on a matching file and an unscoped one from the start."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .agent_harness import run_agent
from .claude_harness import Runner
from .model_server import Bash, Read, Text
from .test_hooks_e2e import GOOD_CALC, SESSION_ENV, bank, git_project

pytestmark = pytest.mark.e2e

SCOPED = "SCOPED-RULE-7f3a: keep calc.add pure"
ALWAYS = "ALWAYS-RULE-2b9c: answer briefly"
RULES = {
    "rules/python.md": (
        "# Rules: python\n\n<!-- lessonbank:begin 01JPY -->\n## Pure functions\n\n"
        f"**When** editing calc: {SCOPED}\n\n**Applies to:** `*.py`\n<!-- lessonbank:end 01JPY -->\n"
    ),
    "rules/style.md": (
        f"# Rules: style\n\n<!-- lessonbank:begin 01JST -->\n## Brief\n\n**When** answering: {ALWAYS}\n"
        "<!-- lessonbank:end 01JST -->\n"
    ),
}


def ruled_project(root: Path) -> Path:
    project = git_project(root, GOOD_CALC)
    bank(project, "init")
    for rel, text in RULES.items():
        (project / rel).write_text(text)
    bank(project, "rules")
    return project


def test_claude_code_loads_a_scoped_rule_only_for_a_matching_file(tmp_path: Path, claude: Runner) -> None:
    project = ruled_project(tmp_path / "project")
    assert (project / ".claude" / "rules" / "python.md").is_file()
    assert "@rules/style.md" in (project / "CLAUDE.md").read_text()
    script = [Read(str(project / "calc.py")), Text("Done.")]

    run = claude(project, "look at calc.py", script, extra_args=["--allowedTools", "Read"])

    assert run.returncode == 0, run.explain()
    first, second = (json.dumps(body) for body in run.main_requests[:2])
    assert ALWAYS in first, run.explain()  # CLAUDE.md's import: loaded from the start
    assert SCOPED not in first, run.explain()  # .claude/rules/python.md: not before a .py file is read
    assert SCOPED in second, run.explain()  # ...and there once calc.py was


def test_copilot_lists_the_scoped_rule_by_its_apply_to(tmp_path: Path) -> None:
    project = git_project(tmp_path / "project", GOOD_CALC)
    bank(project, "init")
    bank(project, "install", "copilot")  # the project uses Copilot: its instructions are kept
    for rel, text in RULES.items():
        (project / rel).write_text(text)
    bank(project, "rules")
    own = (project / ".github" / "copilot-instructions.md").read_text()
    assert ALWAYS in own and SCOPED not in own  # the scoped rule is not in Copilot's always-on file

    run = run_agent("copilot", project, "look at calc.py", [Bash("cat calc.py"), Text("Done.")], home=tmp_path / "home", env=SESSION_ENV)

    assert run.returncode == 0, run.explain()
    text = json.dumps(run.main_requests[0]).replace("\\n", "\n")
    # Copilot CLI read .github/instructions/python.instructions.md as scoped to its applyTo.
    assert "| **/*.py | '.github/instructions/python.instructions.md' |" in text, run.explain()


@pytest.mark.parametrize("agent", ["codex", "gemini", "qwen"])
def test_agents_that_cannot_scope_get_every_rules_text(agent: str, tmp_path: Path) -> None:
    project = git_project(tmp_path / "project", GOOD_CALC)
    bank(project, "init")
    bank(project, "install", agent)
    for rel, text in RULES.items():
        (project / rel).write_text(text)
    bank(project, "rules")

    run = run_agent(agent, project, "look at calc.py", [Text("Done.")], home=tmp_path / "home", env=SESSION_ENV)

    assert run.returncode == 0, run.explain()
    first = json.dumps(run.main_requests[0])
    assert SCOPED in first and ALWAYS in first, run.explain()  # AGENTS.md (Codex, Qwen), GEMINI.md (Gemini)
