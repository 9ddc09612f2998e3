"""The hooks' records, one JSON object per line, appended in the bank's state folder.

`<bank>/.lessonbank/ledger.jsonl`: one line per lesson handed over (or, in the trial's
without arm, one that would have been), in this key order:

    {"session": "<session_id>", "turn": "<turn>", "lesson": "<slug>",
     "event": "PreToolUse" | "UserPromptSubmit", "bytes": <UTF-8 bytes of its text>,
     "arm": "on" | "with" | "without", "injected": true | false}

`arm` is "on" in the normal mode and the trial's arm in `test` mode; `injected` is false only
for the without arm. A lesson is written once per session (its claim is taken either way).
PreToolUse lines also carry the call's "tool_use_id" last, so a check that fails in that very
call can be tied to the lessons handed over before it.

`<bank>/.lessonbank/sessions/<session>/checks.jsonl`: one line per check run by Bash
(PostToolUse = passed, PostToolUseFailure = failed; interrupted calls are not checks):

    {"turn": "<turn>", "command": "<the command, at most 2000 characters>",
     "check": "<normalized name, e.g. pytest, npm test, ruff + mypy>", "ok": true | false,
     "tool_use_id": "<id>"}

A turn is the payload's `prompt_id` when present (Claude Code 2.1.197 sends it), else the
session's prompt counter as a decimal string, advanced at each UserPromptSubmit.
"""

from lessonbank.kernel import jsonio
from lessonbank.kernel import statedir as state

MAX_COMMAND = 2000


def record_injection(
    state_dir: str,
    session: str,
    turn: str,
    slug: str,
    event: str,
    size: int,
    arm: str,
    injected: bool,
    tool_use_id: str = "",
) -> None:
    """Append one ledger line."""
    row = {
        "session": session,
        "turn": turn,
        "lesson": slug,
        "event": event,
        "bytes": size,
        "arm": arm,
        "injected": injected,
    }
    if tool_use_id:
        row["tool_use_id"] = tool_use_id
    line = jsonio.dumps(row)
    state.append_line(state_dir + "/" + state.LEDGER, line)


def record_check(
    session_dir: str, turn: str, command: str, check: str, ok: bool, tool_use_id: str
) -> None:
    """Append one line to the session's checks.jsonl."""
    line = jsonio.dumps(
        {
            "turn": turn,
            "command": command[:MAX_COMMAND],
            "check": check,
            "ok": ok,
            "tool_use_id": tool_use_id,
        }
    )
    state.append_line(session_dir + "/" + state.CHECKS, line)


def read_checks(session_dir: str) -> list[dict]:
    """Every check recorded in this session, in order (unreadable lines are skipped)."""
    return read_jsonl(session_dir + "/" + state.CHECKS)


def read_ledger(state_dir: str) -> list[dict]:
    """Every ledger line, in order (unreadable lines are skipped)."""
    return read_jsonl(state_dir + "/" + state.LEDGER)


def read_jsonl(path: str) -> list[dict]:
    """The JSON objects of a .jsonl file, skipping lines that are not one."""
    rows = []
    for line in (state.read_text(path) or "").splitlines():
        try:
            row = jsonio.loads(line)
        except ValueError:
            continue
        if isinstance(row, dict):
            rows.append(row)
    return rows
