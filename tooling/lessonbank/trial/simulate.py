"""Synthetic sessions through the real hook processes: a trial whose true effect is known in advance.

Each session starts with a SessionStart payload (the hook assigns the session's arm in test mode),
then runs one turn per trigger (a prompt or a Bash call that a lesson fits), each spawned through
the hook command exactly as `bank install claude` wrote it. A turn's checks are then drawn from a
seeded RNG with the failure probability of the session's arm and fed back as PostToolUse /
PostToolUseFailure payloads (modelled on Claude Code 2.1.197's), so the hooks record the checks.
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lessonbank.errors import BankError
from lessonbank.install import claude
from lessonbank.state import arms, statedir


@dataclass(frozen=True)
class Trigger:
    """What starts a turn: a prompt (UserPromptSubmit) or a Bash command (PreToolUse)."""

    event: str
    text: str
    check: str = "pytest -q"


@dataclass
class Call:
    """One hook process: the event, its turn, its payload and what it printed."""

    event: str
    session: str
    turn: str
    payload: dict[str, Any]
    stdout: str


@dataclass
class Outcome:
    """One simulated turn: the arm the hooks gave its session ("" when none) and its checks."""

    session: str
    turn: str
    arm: str
    checks: list[bool] = field(default_factory=list)


@dataclass
class Run:
    """Everything a simulation did, for tests and the demo to compare with the ledger."""

    calls: list[Call] = field(default_factory=list)
    turns: list[Outcome] = field(default_factory=list)


def commands(project: Path) -> dict[str, str]:
    """The hook command of each event as `bank install claude` wrote it into .claude/settings.json."""
    out = {}
    for event, _, _ in claude.EVENTS:
        command = claude.installed_command(project, event)
        if command is None:
            raise BankError(
                f"no lessonbank hook for {event} in {project / claude.SETTINGS}: run `bank install claude`"
            )
        out[event] = command
    return out


def spawn(hooks: Mapping[str, str], sent: Mapping[str, Any], cwd: Path) -> str:
    """Run the installed hook of the payload's event as the agent does (sh -c, payload on stdin)."""
    code, out = claude.run_hook(hooks[str(sent["hook_event_name"])], dict(sent), cwd)
    if code != 0:
        raise BankError(f"the {sent['hook_event_name']} hook exited {code}")
    return out.strip()


def payload(event: str, session: str, turn: str, cwd: Path, **fields: Any) -> dict[str, Any]:
    """A payload shaped like Claude Code 2.1.197's for `event`."""
    base: dict[str, Any] = {
        "session_id": session,
        "transcript_path": f"{cwd}/.claude-sim/{session}.jsonl",
        "cwd": str(cwd),
        "prompt_id": turn,
        "permission_mode": "default",
        "hook_event_name": event,
    }
    base.update(fields)
    return base


def bash_payload(
    event: str, session: str, turn: str, cwd: Path, command: str, call_id: str
) -> dict[str, Any]:
    """PreToolUse, PostToolUse (passed) or PostToolUseFailure (failed) for one Bash call."""
    fields: dict[str, Any] = {
        "tool_name": "Bash",
        "tool_input": {"command": command, "description": "run the check"},
        "tool_use_id": call_id,
    }
    if event == "PostToolUse":
        fields["tool_response"] = {"stdout": "ok", "stderr": "", "interrupted": False, "isImage": False}
    elif event == "PostToolUseFailure":
        fields.update({"error": "Exit code 1", "is_interrupt": False})
    return payload(event, session, turn, cwd, **fields)


def arm_of(state_dir: Path, session: str) -> str:
    """The arm the hooks recorded for a session ("" when it was never assigned)."""
    path = Path(arms.arm_file(str(state_dir), session))
    try:
        return path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return ""


def simulate(
    project: Path,
    sessions: Sequence[str],
    triggers: Sequence[Trigger],
    fail: Mapping[str, float],
    checks_per_turn: int = 2,
    seed: int = 1,
) -> Run:
    """Each session starts, then runs one turn per trigger; each check fails with probability fail[arm]."""
    rng = random.Random(seed)
    hooks = commands(project)
    state_dir = project / statedir.STATE
    run = Run()
    for session in sessions:
        sent = payload("SessionStart", session, f"{session}-start", project, source="startup")
        run.calls.append(Call("SessionStart", session, "", sent, spawn(hooks, sent, project)))
        for number, trigger in enumerate(triggers):
            turn = f"{session}-prompt-{number}"
            if trigger.event == "UserPromptSubmit":
                sent = payload("UserPromptSubmit", session, turn, project, prompt=trigger.text)
            else:
                sent = bash_payload("PreToolUse", session, turn, project, trigger.text, f"{turn}-call-0")
            run.calls.append(Call(trigger.event, session, turn, sent, spawn(hooks, sent, project)))
            arm = arm_of(state_dir, session)
            outcome = Outcome(session, turn, arm)
            for k in range(checks_per_turn):
                failed = rng.random() < fail.get(arm, fail.get("", 0.0))
                event = "PostToolUseFailure" if failed else "PostToolUse"
                sent = bash_payload(event, session, turn, project, trigger.check, f"{turn}-call-{k + 1}")
                run.calls.append(Call(event, session, turn, sent, spawn(hooks, sent, project)))
                outcome.checks.append(not failed)
            run.turns.append(outcome)
    return run


def emitted(stdout: str) -> list[tuple[str, int]]:
    """(slug, bytes) of each lesson line a hook's answer handed to the agent."""
    if not stdout:
        return []
    context = json.loads(stdout).get("hookSpecificOutput", {}).get("additionalContext", "")
    out = []
    for line in context.splitlines():
        if line.startswith("- [") and "] " in line:
            out.append((line[3 : line.index("] ")], len(line.encode("utf-8"))))
    return out
