"""`bank install claude`, the plugin layout, and the demo step."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from lessonbank.cli import main
from lessonbank.install import claude, launcher
from tests.hook_support import bash, lesson, make_bank

REPO = Path(__file__).resolve().parents[2]
USER_SETTINGS = {
    "permissions": {"allow": ["Bash(ls:*)"]},
    "hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "echo mine"}]}],
        "Notification": [{"hooks": [{"type": "command", "command": "notify-send hi"}]}],
    },
}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    make_bank(tmp_path / "proj", [lesson("pytest-lesson", commands=[r"\bpytest\b"])])
    return tmp_path / "proj"


def settings(root: Path) -> dict:
    return json.loads((root / ".claude" / "settings.json").read_text(encoding="utf-8"))


def ours(data: dict) -> dict[str, list[dict]]:
    return {
        event: [g for g in groups if any(claude.is_ours(h) for h in g["hooks"])]
        for event, groups in data.get("hooks", {}).items()
        if any(claude.is_ours(h) for g in groups for h in g["hooks"])
    }


def test_install_merges_and_keeps_the_users_hooks(root: Path) -> None:
    (root / ".claude").mkdir()
    (root / ".claude" / "settings.json").write_text(json.dumps(USER_SETTINGS), encoding="utf-8")
    result = claude.install(root)
    assert result.action == "update"
    data = settings(root)
    assert data["permissions"] == USER_SETTINGS["permissions"]
    assert data["hooks"]["Notification"] == USER_SETTINGS["hooks"]["Notification"]
    assert data["hooks"]["PreToolUse"][0] == USER_SETTINGS["hooks"]["PreToolUse"][0]
    command = launcher.COMMAND
    assert ours(data) == {
        event: [{**({"matcher": matcher} if matcher else {}), "hooks": [{"type": "command", "command": command, "timeout": timeout}]}]
        for event, matcher, timeout in claude.EVENTS
    }  # fmt: skip
    assert command == launcher.COMMAND  # the same bytes on every machine: the file can be committed
    assert launcher.path().read_text(encoding="utf-8").startswith(f"#!{sys.executable} -IS\n")


def test_install_is_idempotent(root: Path) -> None:
    assert claude.install(root).action == "create"
    before = (root / ".claude" / "settings.json").read_bytes()
    assert claude.install(root).action == "unchanged"
    assert (root / ".claude" / "settings.json").read_bytes() == before


def test_reinstall_replaces_an_old_command_of_ours(root: Path) -> None:
    old = {"type": "command", "command": f"/old/python3 -I -S {launcher.entry_script()}", "timeout": 10}
    (root / ".claude").mkdir(exist_ok=True)
    (root / ".claude" / "settings.json").write_text(
        json.dumps({"hooks": {"Stop": [{"hooks": [old]}]}}), encoding="utf-8"
    )
    assert claude.install(root).action == "update"
    commands = [h["command"] for gs in settings(root)["hooks"].values() for g in gs for h in g["hooks"]]
    assert commands == [launcher.COMMAND] * len(claude.EVENTS)


def test_uninstall_removes_only_ours(root: Path) -> None:
    (root / ".claude").mkdir()
    (root / ".claude" / "settings.json").write_text(json.dumps(USER_SETTINGS), encoding="utf-8")
    claude.install(root)
    assert claude.install(root, uninstall=True).action == "update"
    assert settings(root) == USER_SETTINGS
    assert claude.install(root, uninstall=True).action == "unchanged"


def test_uninstall_of_a_fresh_install_leaves_an_empty_object(root: Path) -> None:
    claude.install(root)
    claude.install(root, uninstall=True)
    assert settings(root) == {}


def test_dry_run_writes_nothing(root: Path) -> None:
    assert claude.install(root, dry_run=True).action == "create"
    assert not (root / ".claude").exists()


def test_cli_output(root: Path) -> None:
    runner = CliRunner()
    first = runner.invoke(main, ["--root", str(root), "install", "claude", "--dry-run"])
    assert first.exit_code == 0, first.output
    assert first.output.splitlines()[0] == "would create .claude/settings.json"
    done = runner.invoke(main, ["--root", str(root), "install", "claude"])
    assert done.output == (
        "create    .claude/settings.json\n"
        "hooks: SessionStart, UserPromptSubmit, PreToolUse, PostToolUse, PostToolUseFailure, Stop\n"
        f"command: {launcher.COMMAND}\n"
    )
    again = runner.invoke(main, ["--root", str(root), "install", "claude"])
    assert again.output.splitlines()[0] == "unchanged .claude/settings.json"
    gone = runner.invoke(main, ["--root", str(root), "install", "claude", "--uninstall"])
    assert gone.output == "update    .claude/settings.json\nlessonbank hooks removed\n"


def test_cli_refuses_a_broken_settings_file(root: Path) -> None:
    (root / ".claude").mkdir()
    (root / ".claude" / "settings.json").write_text("{not json", encoding="utf-8")
    done = CliRunner().invoke(main, ["--root", str(root), "install", "claude"])
    assert done.exit_code == 1
    assert "is not valid JSON" in done.output and "fix it, then run again" in done.output
    assert (root / ".claude" / "settings.json").read_text(encoding="utf-8") == "{not json"


def test_cli_hook_debug_command(root: Path) -> None:
    done = CliRunner().invoke(main, ["--root", str(root), "hook", "PreToolUse", "--command", "pytest -x"])
    assert done.exit_code == 0
    assert json.loads(done.output)["hookSpecificOutput"]["additionalContext"].endswith(
        "remember pytest-lesson"
    )
    quiet = CliRunner().invoke(main, ["--root", str(root), "hook", "PreToolUse", "--command", "ls"])
    assert quiet.output == "(no output)\n"


def test_paths_with_spaces_work(root: Path, tmp_path: Path) -> None:
    spaced = tmp_path / "with space"
    shutil.copytree(REPO / "tooling" / "lessonbank", spaced / "tooling" / "lessonbank",
                    ignore=shutil.ignore_patterns("__pycache__"))  # fmt: skip
    python = spaced / "bin dir" / "python3"
    python.parent.mkdir()
    python.symlink_to(sys.executable)
    claude.install(root, python=str(python))
    written = launcher.path().read_text(encoding="utf-8")
    assert written.startswith("#!/bin/sh\n") and shlex.quote(str(python)) in written  # no #! line holds a space
    launcher.path().write_text(
        launcher.text(str(python), spaced / "tooling" / "lessonbank" / "hooks" / "entry.py"), encoding="utf-8"
    )
    code, out = claude.run_hook(launcher.COMMAND, bash(root, "pytest"), root)
    assert code == 0 and "pytest-lesson" in out


def test_plugin_hooks_match_the_installed_ones() -> None:
    data = json.loads((REPO / "hooks" / "hooks.json").read_text(encoding="utf-8"))
    command = 'python3 -I -S "${CLAUDE_PLUGIN_ROOT}/hooks/bank-hook"'
    assert data["hooks"] == {
        event: [{**({"matcher": matcher} if matcher else {}), "hooks": [{"type": "command", "command": command, "timeout": timeout}]}]
        for event, matcher, timeout in claude.EVENTS
    }  # fmt: skip
    assert claude.is_ours(data["hooks"]["Stop"][0]["hooks"][0])
    manifest = json.loads((REPO / ".claude-plugin" / "plugin.json").read_text(encoding="utf-8"))
    assert manifest["name"] == "lessonbank"


def test_plugin_hook_runs_from_the_plugin_folder_without_install(root: Path, tmp_path: Path) -> None:
    data = json.loads((REPO / "hooks" / "hooks.json").read_text(encoding="utf-8"))
    command = data["hooks"]["PreToolUse"][0]["hooks"][0]["command"].replace(
        "python3", shlex.quote(sys.executable), 1
    )
    env = {"PATH": os.environ.get("PATH", ""), "CLAUDE_PLUGIN_ROOT": str(REPO), "HOME": str(tmp_path)}
    done = subprocess.run(
        ["/bin/sh", "-c", command], input=json.dumps(bash(root, "pytest")), capture_output=True,
        text=True, cwd=tmp_path, env=env, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0 and "pytest-lesson" in done.stdout


def test_a_reinstall_makes_a_launcher_that_lost_its_execute_bit_runnable_again() -> None:
    """The committed command skips a launcher that is not executable (`[ -x ] || exit 0`): an
    unchanged text must not leave it that way."""
    launcher.write()
    launcher.path().chmod(0o644)
    assert launcher.write() == "unchanged"
    assert launcher.path().stat().st_mode & 0o111 == 0o111
