"""`bank install codex | copilot | gemini | qwen | cursor`: merged, idempotent, the user's hooks kept."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from lessonbank.cli import main
from lessonbank.install import hookfiles, launcher
from tests.hook_support import lesson, make_bank

MINE_GROUPED = {"matcher": "Bash", "hooks": [{"type": "command", "command": "echo mine"}]}
MINE_COPILOT = {"type": "command", "bash": "echo mine", "timeoutSec": 5}
MINE_CURSOR = {"command": "echo mine"}
USER_FILES = {
    "codex": {"hooks": {"PreToolUse": [MINE_GROUPED], "Notification": [MINE_GROUPED]}},
    "gemini": {"general": {"vimMode": True}, "hooks": {"BeforeTool": [MINE_GROUPED]}},
    "qwen": {"hooks": {"PreToolUse": [MINE_GROUPED]}, "$version": 4},
    "copilot": {"version": 1, "hooks": {"preToolUse": [MINE_COPILOT]}},
    "cursor": {"version": 1, "hooks": {"beforeShellExecution": [MINE_CURSOR]}},
}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    make_bank(tmp_path / "proj", [lesson("pytest-lesson", commands=[r"\bpytest\b"])])
    return tmp_path / "proj"


def read(root: Path, name: str) -> dict:
    return json.loads((root / hookfiles.AGENTS[name].path).read_text(encoding="utf-8"))


def commands(data: dict) -> list[str]:
    found = []
    for entries in data.get("hooks", {}).values():
        for entry in entries:
            for hook in entry.get("hooks", [entry]):
                found.append(hook.get("command") or hook.get("bash"))
    return found


@pytest.mark.parametrize("name", sorted(hookfiles.AGENTS))
def test_install_keeps_the_users_hooks_and_is_idempotent(root: Path, name: str) -> None:
    path = root / hookfiles.AGENTS[name].path
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(USER_FILES[name]), encoding="utf-8")

    first = hookfiles.install(root, name)
    text = path.read_text(encoding="utf-8")
    second = hookfiles.install(root, name)

    assert (first.action, second.action) == ("update", "unchanged")
    assert path.read_text(encoding="utf-8") == text
    data = read(root, name)
    assert "echo mine" in commands(data)
    ours = [c for c in commands(data) if c != "echo mine"]
    assert len(ours) == len(hookfiles.AGENTS[name].events)
    assert all(c.startswith(f"{launcher.COMMAND} {name}") for c in ours)
    for key, value in USER_FILES[name].items():
        if key != "hooks":
            assert data[key] == value

    removed = hookfiles.install(root, name, uninstall=True)
    assert removed.action == "update"
    assert read(root, name) == USER_FILES[name]


def test_codex_uses_claude_codes_shape_with_its_own_command(root: Path) -> None:
    hookfiles.install(root, "codex")
    data = read(root, "codex")
    assert list(data["hooks"]) == ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop"]
    (group,) = data["hooks"]["PreToolUse"]
    assert group["matcher"] == "Bash"
    assert group["hooks"] == [{"type": "command", "command": launcher.COMMAND + " codex", "timeout": 10}]


def test_gemini_timeouts_are_milliseconds(root: Path) -> None:
    hookfiles.install(root, "gemini")
    hooks = read(root, "gemini")["hooks"]
    assert hooks["BeforeTool"][0]["matcher"].startswith("run_shell_command|")
    assert hooks["BeforeTool"][0]["hooks"][0]["timeout"] == 10_000
    assert hooks["AfterAgent"][0]["hooks"][0]["timeout"] == 60_000


def test_qwen_hooks_both_outcomes_and_leaves_its_own_version_alone(root: Path) -> None:
    hookfiles.install(root, "qwen")
    path = root / ".qwen" / "settings.json"
    data = read(root, "qwen")
    assert list(data["hooks"]) == [
        "SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PostToolUseFailure", "Stop",
    ]  # fmt: skip
    tools = "run_shell_command|read_file|write_file|edit|notebook_edit|glob|grep_search"
    assert [g["matcher"] for g in data["hooks"]["PostToolUseFailure"]] == [tools]
    assert data["hooks"]["Stop"][0]["hooks"] == [{"type": "command", "command": launcher.COMMAND + " qwen", "timeout": 60}]
    # Qwen's first run rewrites the file with its settings version; a later install changes nothing.
    path.write_text(json.dumps({**data, "$version": 4}, indent=2) + "\n", encoding="utf-8")
    text = path.read_text(encoding="utf-8")
    assert hookfiles.install(root, "qwen").action == "unchanged"
    assert path.read_text(encoding="utf-8") == text


def test_copilot_and_cursor_commands_name_the_event(root: Path) -> None:
    hookfiles.install(root, "copilot")
    hookfiles.install(root, "cursor")
    copilot = read(root, "copilot")
    assert copilot["version"] == 1
    assert copilot["hooks"]["postToolUse"] == [
        {"type": "command", "bash": launcher.COMMAND + " copilot postToolUse", "timeoutSec": 10}
    ]
    assert read(root, "cursor")["hooks"]["stop"] == [{"command": launcher.COMMAND + " cursor stop"}]


def test_copilots_own_file_goes_when_only_ours_was_in_it(root: Path) -> None:
    hookfiles.install(root, "copilot")
    path = root / hookfiles.AGENTS["copilot"].path
    assert hookfiles.install(root, "copilot", uninstall=True, dry_run=True).action == "delete"
    assert path.exists()
    assert hookfiles.install(root, "copilot", uninstall=True).action == "delete"
    assert not path.exists()
    assert hookfiles.install(root, "copilot", uninstall=True).action == "unchanged"


def test_dry_run_writes_nothing(root: Path) -> None:
    result = hookfiles.install(root, "gemini", dry_run=True)
    assert result.action == "create"
    assert not (root / ".gemini").exists()


def test_a_broken_file_is_refused_with_its_path(root: Path) -> None:
    path = root / ".codex" / "hooks.json"
    path.parent.mkdir()
    path.write_text('{"hooks": {"PreToolUse": {}}}', encoding="utf-8")
    result = CliRunner().invoke(main, ["--root", str(root), "install", "codex"])
    assert result.exit_code == 1
    assert ".codex/hooks.json" in result.output and "fix it" in result.output


def test_cli_install_explains_codex_trust_and_lists_agents(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(root))  # no agent binaries on it
    runner = CliRunner()
    done = runner.invoke(main, ["--root", str(root), "install", "codex"])
    assert done.exit_code == 0, done.output
    lines = done.output.splitlines()
    assert lines[0] == "create    .codex/hooks.json"
    assert lines[1] == "hooks: SessionStart, UserPromptSubmit, PreToolUse, PostToolUse, Stop"
    assert lines[2] == f"command: {launcher.COMMAND} codex"
    assert lines[3].startswith("Codex runs project hooks only once trusted")
    assert len(lines) == 4

    listed = runner.invoke(main, ["--root", str(root), "install"])
    assert listed.exit_code == 0, listed.output
    rows = {line.split()[0]: line for line in listed.output.splitlines()}
    assert set(rows) == {"claude", "codex", "copilot", "gemini", "qwen", "cursor"}
    assert rows["codex"].endswith("installed")
    assert rows["gemini"].endswith("bank install gemini")

    gone = runner.invoke(main, ["--root", str(root), "install", "codex", "--uninstall"])
    assert gone.output == "update    .codex/hooks.json\nlessonbank hooks removed\n"


def test_claude_local_settings_are_not_the_committed_ones(root: Path) -> None:
    done = CliRunner().invoke(main, ["--root", str(root), "install", "claude", "--local"])
    assert done.exit_code == 0, done.output
    assert done.output.startswith("create    .claude/settings.local.json\n")
    assert not (root / ".claude" / "settings.json").exists()
    data = json.loads((root / ".claude" / "settings.local.json").read_text())
    assert launcher.COMMAND in [h["command"] for gs in data["hooks"].values() for g in gs for h in g["hooks"]]
    gone = CliRunner().invoke(main, ["--root", str(root), "install", "claude", "--local", "--uninstall"])
    assert gone.output.startswith("update    .claude/settings.local.json\n")
