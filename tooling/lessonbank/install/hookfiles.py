"""`bank install codex | copilot | gemini | qwen | cursor`: each agent's hook file gains or loses our entries.

One hook program serves every agent: the command runs `entry.py <agent>` (and the event's name for
agents whose payloads carry none), and the adapter in hooks/agents does the rest. The merge is
idempotent and keeps the user's own hooks, as for Claude Code (install/claude.py, whose helpers
this reuses); each agent's file keeps its own shape:

- codex:   .codex/hooks.json, Claude Code's shape (event -> [{matcher, hooks: [{command, timeout}]}]);
- gemini:  .gemini/settings.json `hooks`, the same shape with Gemini's event and tool names and
           timeouts in milliseconds;
- qwen:    .qwen/settings.json `hooks`, Claude Code's event names with Qwen's tool names, timeouts in
           seconds (Qwen adds `"$version"` to the file on its first run; the merge keeps it);
- copilot: .github/hooks/lessonbank.json, {"version": 1, "hooks": {event: [{type, bash, timeoutSec}]}};
- cursor:  .cursor/hooks.json, {"version": 1, "hooks": {event: [{command}]}} (documented shape only).
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lessonbank.bank.store import write_atomic
from lessonbank.errors import BankError
from lessonbank.install import claude, launcher
from lessonbank.install.claude import Result, is_ours, read_settings
from lessonbank.matching import agent_tools

GEMINI_TOOLS = "|".join(agent_tools.GEMINI)
QWEN_TOOLS = "|".join(agent_tools.QWEN)
# Claude Code's events and timeouts (Qwen Code took its hooks from it), with Qwen's tool names
# where Claude's have a matcher: a call's lessons come with its result, so every tool is matched.
QWEN_EVENTS = tuple((event, QWEN_TOOLS if matcher else None, timeout) for event, matcher, timeout in claude.EVENTS)


@dataclass(frozen=True)
class Agent:
    """Where an agent keeps its project hooks, in which shape, for which events."""

    name: str
    path: Path
    shape: str  # "grouped" (Claude Code's), "copilot" or "cursor"
    events: tuple[tuple[str, str | None, int], ...]  # (event, matcher or None, timeout in seconds)
    named: bool = False  # the command passes the event's name (the payload has none)
    millis: bool = False  # timeouts in milliseconds
    binaries: tuple[str, ...] = ()
    home: str = ""
    note: str = ""


AGENTS: dict[str, Agent] = {
    "codex": Agent(
        "codex",
        Path(".codex") / "hooks.json",
        "grouped",
        (
            ("SessionStart", None, 10),
            ("UserPromptSubmit", None, 10),
            ("PreToolUse", "Bash", 10),
            ("PostToolUse", "Bash", 10),
            ("Stop", None, 60),
        ),
        binaries=("codex",),
        home=".codex",
        note=(
            "Codex runs project hooks only once trusted: approve them in /hooks (or pass "
            "--dangerously-bypass-hook-trust) in a trusted project (codex --trust)."
        ),
    ),
    "gemini": Agent(
        "gemini",
        Path(agent_tools.GEMINI_SETTINGS),
        "grouped",
        (
            ("SessionStart", None, 10),
            ("BeforeAgent", None, 10),
            ("BeforeTool", GEMINI_TOOLS, 10),
            ("AfterTool", GEMINI_TOOLS, 10),  # a call's lessons go out with its result
            ("AfterAgent", None, 60),
        ),
        millis=True,
        binaries=("gemini",),
        home=".gemini",
        note="Gemini runs project hooks in a trusted folder (trust it when asked, or GEMINI_CLI_TRUST_WORKSPACE=true).",
    ),
    "qwen": Agent(
        "qwen",
        Path(agent_tools.QWEN_SETTINGS),
        "grouped",
        QWEN_EVENTS,
        binaries=("qwen",),
        home=".qwen",
    ),
    "copilot": Agent(
        "copilot",
        Path(agent_tools.COPILOT_HOOKS),
        "copilot",
        (
            ("sessionStart", None, 10),
            ("userPromptSubmitted", None, 10),
            ("preToolUse", None, 10),
            ("postToolUse", None, 10),
            ("agentStop", None, 60),
        ),
        named=True,
        binaries=("copilot",),
        home=".copilot",
    ),
    "cursor": Agent(
        "cursor",
        Path(".cursor") / "hooks.json",
        "cursor",
        (
            ("beforeSubmitPrompt", None, 10),
            ("beforeShellExecution", None, 10),
            ("beforeReadFile", None, 10),
            ("stop", None, 60),
        ),
        named=True,
        binaries=("cursor-agent", "cursor"),
        home=".cursor",
        note="Cursor support follows its documented hook shapes; no Cursor CLI proved it here.",
    ),
}


def command(agent: Agent, event: str) -> str:
    """The shell command the agent runs for `event` (the same on every machine)."""
    base = f"{launcher.COMMAND} {agent.name}"
    return f"{base} {event}" if agent.named else base


def _ours(entry: Any) -> bool:
    return isinstance(entry, dict) and (is_ours(entry) or is_ours({"command": entry.get("bash", "")}))


def merged(agent: Agent, data: dict[str, Any], path: Path) -> dict[str, Any]:
    """`data` with our entries for every event (older ones of ours replaced), the user's kept."""
    if agent.shape == "grouped":
        grouped = claude.with_our_groups(
            claude.hooks_table(data, path),
            agent.events,
            lambda event, timeout: {
                "type": "command",
                "command": command(agent, event),
                "timeout": timeout * 1000 if agent.millis else timeout,
            },
        )
        return {**data, "hooks": grouped}
    hooks = dict(claude.hooks_table(data, path))
    for event, _, timeout in agent.events:
        kept = [e for e in hooks.get(event, []) if not _ours(e)]
        entry: dict[str, Any]
        if agent.shape == "copilot":
            entry = {"type": "command", "bash": command(agent, event), "timeoutSec": timeout}
        else:
            entry = {"command": command(agent, event)}
        hooks[event] = kept + [entry]
    return {"version": data.get("version", 1), **data, "hooks": hooks}


def removed(agent: Agent, data: dict[str, Any], path: Path) -> dict[str, Any]:
    """`data` without our entries; events (and `hooks`) left empty by that are dropped."""
    if agent.shape == "grouped":
        return claude.removed(data, path)
    return claude.removed(data, path, without=lambda entries: [e for e in entries if not _ours(e)])


def install(
    project: Path, name: str, uninstall: bool = False, dry_run: bool = False, python: str | None = None
) -> Result:
    """Merge (or remove) our hooks in the agent's project file; write only when it changes."""
    agent = AGENTS[name]
    path = project / agent.path
    current = read_settings(path)
    base = current if current is not None else {}
    new = removed(agent, base, path) if uninstall else merged(agent, base, path)
    events = [] if uninstall else [event for event, _, _ in agent.events]
    if not uninstall:
        launcher.write(python, dry_run=dry_run)
    shown = command(agent, "<event>" if agent.named else "").rstrip()
    if (current is not None and new == current) or (current is None and uninstall):
        return Result(path, "unchanged", shown, events)
    if uninstall and agent.path.name == "lessonbank.json" and not new.get("hooks"):
        if not dry_run:
            path.unlink()
        return Result(path, "delete", shown, events)
    text = json.dumps(new, indent=2, ensure_ascii=False) + "\n"
    return Result(path, write_atomic(path, text, dry_run=dry_run), shown, events)


def installed(project: Path, name: str) -> bool:
    """Are our hooks in this project's file for the agent?"""
    agent = AGENTS[name]
    try:
        data = read_settings(project / agent.path) or {}
    except BankError:
        return False
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return False
    for entries in hooks.values():
        for entry in entries if isinstance(entries, list) else []:
            inner = entry.get("hooks") if isinstance(entry, dict) and "hooks" in entry else [entry]
            if any(_ours(h) for h in inner or []):
                return True
    return False


def found(project: Path, home: Path) -> list[tuple[str, str, bool]]:
    """(agent, where it was found or "", installed in this project) for every supported agent."""
    rows = []
    claude_bin = shutil.which("claude")
    where = claude_bin or (str(home / ".claude") if (home / ".claude").is_dir() else "")
    rows.append(("claude", where, claude.installed_command(project) is not None))
    for name, agent in AGENTS.items():
        binary = next((b for b in map(shutil.which, agent.binaries) if b), None)
        where = binary or (str(home / agent.home) if agent.home and (home / agent.home).is_dir() else "")
        rows.append((name, where, installed(project, name)))
    return rows
