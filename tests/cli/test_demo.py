"""`bank demo` end to end: every feature's step runs on the bundled example."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from lessonbank.bank.store import Bank
from lessonbank.cli import demo, main
from tests.conftest import git
from tests.hook_support import lesson, make_bank


def test_demo_runs_every_step(tmp_path: Path, isolated_home: Path) -> None:
    root = tmp_path / "demo"
    result = CliRunner().invoke(main, ["demo", "--dir", str(root)])
    assert result.exit_code == 0, result.output
    headers = [ln for ln in result.output.splitlines() if ln[:2] in {f"{n}." for n in range(1, 10)}]
    assert headers == [
        "1. Capture through the gates",
        "2. Recall: the hooks, as Claude Code and the other agents run them",
        "3. Scan: lessons from an old transcript",
        "4. Groom: a lesson seen in two sessions graduates into a rule",
        "5. Proof: an on/off trial through the real hooks, and the ledger",
        "6. Layers: a team bank shared through git reaches this project's hooks",
    ]
    assert "redacted before writing: 1 stripe key" in result.output
    assert "format gate: refused: triggers.commands[0] '(a+)+$': nested quantifier" in result.output
    assert "groom again: nothing to change" in result.output
    layers_step = result.output.split("6. Layers")[1].splitlines()
    assert layers_step[3:7] == [
        "   PreToolUse Bash `docker build -t app .` in the project: exit 0",
        "     - [docker-build-in-ci-needs-the-classic-builder] (team:demo-team) docker build in CI needs the classic "
        "builder. When building the images with docker build on the team's CI runners: set DOCKER_BUILDKIT=0: the "
        "runners' BuildKit cache corrupts multi-stage builds",
        "   PreToolUse Bash `DOCKER_BUILDKIT=0 docker build -t app .` in the project: exit 0",
        "     (nothing handed over)",
    ]
    assert git(root, "status", "--porcelain") == ""  # the team bank and its data folder stay in .lessonbank/
    assert not (isolated_home / ".local/share/lessonbank").exists()  # nor does it join the user's layers
    assert result.output.endswith(f"The demo bank is at {root.resolve()}: try `cd {root.resolve()} && bank list`.\n")
    assert not (root / ".lessonbank" / "hook.log").exists()


def test_demo_refuses_a_folder_that_is_not_empty(tmp_path: Path) -> None:
    (tmp_path / "x").write_text("mine", encoding="utf-8")
    result = CliRunner().invoke(main, ["demo", "--dir", str(tmp_path)])
    assert result.exit_code == 1
    assert result.output == f"Error: {tmp_path} is not empty: pass a new folder to `bank demo --dir`\n"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    make_bank(tmp_path / "proj", [lesson("pytest-lesson", commands=[r"\bpytest\b"])])
    return tmp_path / "proj"


def test_the_hooks_step_shows_a_lesson_once_per_session_and_not_for_a_commit_message(root: Path) -> None:
    lines = demo.step_hooks(Bank.open(root), command="pytest -x")
    assert lines[0] == "$ bank install claude  ->  create .claude/settings.json"
    assert lines[1] == "PreToolUse Bash `pytest -x` (first call): exit 0"
    assert (
        lines[3] == "  - [pytest-lesson] pytest lesson. When working on pytest lesson: remember pytest-lesson"
    )
    assert lines[4:] == [
        "PreToolUse Bash `pytest -x` (same call again, same session): exit 0",
        "  (nothing handed over)",
        'PreToolUse Bash `git commit -m "fix pytest hang"` (a commit message that only mentions it): exit 0',
        "  (nothing handed over)",
        "the same first call from the other agents, through the same hook program (new sessions):",
        "  codex PreToolUse: exit 0; hookSpecificOutput.additionalContext: pytest-lesson",
        "  copilot preToolUse: exit 0; additionalContext: pytest-lesson",
        "  gemini AfterTool: exit 0; hookSpecificOutput.additionalContext: pytest-lesson",
        "  qwen PostToolUseFailure: exit 0; hookSpecificOutput.additionalContext: pytest-lesson",
    ]
    assert demo.step_hooks(Bank.open(root), command="pytest -x")[0].endswith(
        "unchanged .claude/settings.json"
    )


def test_the_groom_step_graduates_a_lesson_into_a_rule(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The demo's capture step, then this one (the other features' steps are theirs to test).
    monkeypatch.setattr(demo, "STEPS", [demo.STEPS[0], ("Groom", demo.step_groom)])
    root = tmp_path / "demo"
    lines = [ln.strip() for ln in demo.run(root)]
    lines = lines[lines.index("2. Groom") + 1 :]
    slug = "pytest-hangs-when-something-under-test-waits-for-a-tty"
    assert any(ln.startswith(f"promote      {slug}: seen in 2 sessions") for ln in lines), lines
    assert "create    rules/testing.md" in lines
    assert "CLAUDE.md imports: @rules/testing.md" in lines
    assert lines[-1] == "groom again: nothing to change"
    assert not (root / "lessons" / f"{slug}.md").exists()
    rule = (root / "rules" / "testing.md").read_text()
    assert "## pytest hangs when something under test waits for a TTY" in rule
    assert git(root, "log", "-1", "--format=%s") == "bank groom: promote 1, delete 0, review 0\n"
    assert git(root, "status", "--porcelain") == ""
