"""`bank install claude`: merge the bank's hooks into a project's .claude/settings.json, or take them out.

The merge is idempotent and keeps every hook the user wrote; our entries are recognised by the
hook script in their command (`lessonbank/hooks/entry.py`, or the plugin's `hooks/bank-hook`).
Each command runs the script with an absolute interpreter path and `-I -S` (no site-packages
scan, no version-manager shim), paths quoted for the shell so spaces work.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lessonbank.bank.store import write_atomic
from lessonbank.errors import BankError
from lessonbank.install import launcher

TOOL_MATCHER = "Bash|Read|Edit|Write|MultiEdit|Glob|Grep|NotebookEdit"
# (event, matcher or None, timeout in seconds): Stop may run `bank capture`, hence its longer timeout.
EVENTS: tuple[tuple[str, str | None, int], ...] = (
    ("SessionStart", None, 10),
    ("UserPromptSubmit", None, 10),
    ("PreToolUse", TOOL_MATCHER, 10),
    ("PostToolUse", "Bash", 10),
    ("PostToolUseFailure", "Bash", 10),
    ("Stop", None, 60),
)
MARKERS = ("lessonbank/hooks/entry.py", "hooks/bank-hook", launcher.MARKER)
SETTINGS = Path(".claude") / "settings.json"
LOCAL_SETTINGS = Path(".claude") / "settings.local.json"


@dataclass
class Result:
    """What `install` did to one settings file."""

    path: Path
    action: str
    command: str
    events: list[str]


def is_ours(hook: Any) -> bool:
    """Is this settings entry one of lessonbank's hooks?"""
    if not isinstance(hook, dict):
        return False
    command = str(hook.get("command", "")).replace("\\", "/")
    return any(marker in command for marker in MARKERS)


def _without_ours(groups: list[Any]) -> list[Any]:
    out = []
    for group in groups:
        if isinstance(group, dict) and isinstance(group.get("hooks"), list):
            kept = [h for h in group["hooks"] if not is_ours(h)]
            if not kept and group["hooks"]:
                continue  # the group held only our hooks
            group = {**group, "hooks": kept}
        out.append(group)
    return out


def hooks_table(settings: dict[str, Any], path: Path) -> dict[str, Any]:
    """The `hooks` table of an agent's hook file, refused with the file's name unless each event maps to a list."""
    hooks = settings.get("hooks", {})
    if not isinstance(hooks, dict):
        raise BankError(f"{path}: `hooks` must be an object; fix it, then run again")
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            raise BankError(f"{path}: hooks.{event} must be a list; fix it, then run again")
    return hooks


def with_our_groups(
    hooks: dict[str, Any],
    events: Sequence[tuple[str, str | None, int]],
    hook_for: Callable[[str, int], dict[str, Any]],
) -> dict[str, Any]:
    """A hooks table of groups (Claude Code's shape, also Codex's and Gemini's) with one group of
    ours per (event, matcher, timeout), older ones of ours dropped and the user's kept.

    `hook_for(event, timeout)` is our hook entry for that event.
    """
    out = dict(hooks)
    for event, matcher, timeout in events:
        groups = _without_ours(list(out.get(event, [])))
        group: dict[str, Any] = {"matcher": matcher} if matcher else {}
        group["hooks"] = [hook_for(event, timeout)]
        out[event] = groups + [group]
    return out


def merged(settings: dict[str, Any], command: str, path: Path = SETTINGS) -> dict[str, Any]:
    """`settings` with our hook entries (replacing any older ones of ours), the user's kept."""
    hooks = with_our_groups(
        hooks_table(settings, path),
        EVENTS,
        lambda _event, timeout: {"type": "command", "command": command, "timeout": timeout},
    )
    return {**settings, "hooks": hooks}


def removed(
    settings: dict[str, Any], path: Path = SETTINGS, without: Callable[[list[Any]], list[Any]] | None = None
) -> dict[str, Any]:
    """`settings` without our hook entries (events and `hooks` left empty by that are dropped).

    `without` drops ours from one event's list (default: Claude Code's groups of hooks).
    """
    if "hooks" not in settings:
        return dict(settings)
    hooks = {}
    for event, groups in hooks_table(settings, path).items():
        kept = (without or _without_ours)(groups)
        if kept or not groups:
            hooks[event] = kept
    out = dict(settings)
    if hooks:
        out["hooks"] = hooks
    else:
        del out["hooks"]
    return out


def read_settings(path: Path) -> dict[str, Any] | None:
    """The settings object in `path`, or None when the file does not exist."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise BankError(f"cannot read {path}: {exc.strerror}") from None
    try:
        data = json.loads(text) if text.strip() else {}
    except json.JSONDecodeError as exc:
        raise BankError(
            f"{path} is not valid JSON ({exc.msg}, line {exc.lineno}); fix it, then run again"
        ) from None
    if not isinstance(data, dict):
        raise BankError(f"{path} must hold a JSON object; fix it, then run again")
    return data


def install(
    project: Path, uninstall: bool = False, dry_run: bool = False, python: str | None = None, local: bool = False
) -> Result:
    """Merge (or remove) our hooks in `project`/.claude/settings.json (settings.local.json with
    `local`: the file teams do not commit, for hooks only this machine runs); write only when it changes."""
    path = project / (LOCAL_SETTINGS if local else SETTINGS)
    if not uninstall:
        launcher.write(python, dry_run=dry_run)
    command = launcher.COMMAND
    current = read_settings(path)
    base = current if current is not None else {}
    new = removed(base, path) if uninstall else merged(base, command, path)
    events = [] if uninstall else [event for event, _, _ in EVENTS]
    if current is not None and new == current:
        return Result(path, "unchanged", command, events)
    if current is None and uninstall:
        return Result(path, "unchanged", command, events)
    text = json.dumps(new, indent=2, ensure_ascii=False) + "\n"
    return Result(path, write_atomic(path, text, dry_run=dry_run), command, events)


def installed_command(project: Path, event: str = "PreToolUse") -> str | None:
    """The command our hook entry for `event` runs in this project, if installed."""
    settings = read_settings(project / SETTINGS) or {}
    for group in settings.get("hooks", {}).get(event, []):
        for hook in group.get("hooks", []) if isinstance(group, dict) else []:
            if is_ours(hook):
                return str(hook["command"])
    return None


def run_hook(command: str, payload: dict[str, Any], cwd: Path) -> tuple[int, str]:
    """Run an installed hook command as the agent does: through the shell, payload on stdin."""
    done = subprocess.run(
        ["/bin/sh", "-c", command],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=60,
    )
    return done.returncode, done.stdout
