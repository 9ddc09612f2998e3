"""The repository as a Claude Code plugin marketplace: `claude plugin validate --strict` accepts the
marketplace and the plugin (with its /bank command), and the pre-commit hooks name real commands."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from lessonbank.cli import main

from .claude_harness import REPO, find_claude

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("target", [".", ".claude-plugin/plugin.json"])
def test_claude_validates_the_marketplace_and_the_plugin_strictly(target: str, tmp_path: Path) -> None:
    binary = find_claude()
    assert binary is not None
    done = subprocess.run(
        [str(binary), "plugin", "validate", "--strict", target],
        cwd=REPO,
        capture_output=True,
        text=True,
        env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "DISABLE_AUTOUPDATER": "1"},
        timeout=60,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Validation passed" in done.stdout


def test_the_bank_command_and_pre_commit_hooks_use_real_commands() -> None:
    command = (REPO / "commands" / "bank.md").read_text(encoding="utf-8")
    assert command.startswith("---\ndescription: ") and "$ARGUMENTS" in command
    hooks = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    assert [h["id"] for h in hooks] == ["bank-check", "bank-index-check"]
    for hook in hooks:
        args = hook["entry"].split()[1:] + ["--help"]
        assert CliRunner().invoke(main, args).exit_code == 0, hook["entry"]
