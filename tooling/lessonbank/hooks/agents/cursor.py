"""Cursor, from its documented hook shapes only (no CLI here to prove it; unit tests only).

The installed command names the event (`entry.py cursor beforeShellExecution`). Payloads carry
`conversation_id` (the session), `generation_id` (the turn) and `workspace_roots`.
beforeShellExecution and beforeReadFile pass the lessons to the agent (`agent_message`, also
spelled `agentMessage`, with `permission: "allow"`). beforeSubmitPrompt cannot add context, so it only counts the turn (no
recall by prompt). No documented event gives a shell exit status, so no check is recorded and
the recovery nudge never fires; `stop` has no last message, so no capture (its block would be
answered as `followup_message`).
"""

from lessonbank.hooks.agents.shapes import context_of
from lessonbank.state import jsonio

EVENTS = {
    "beforeSubmitPrompt": "UserPromptSubmit",
    "beforeShellExecution": "PreToolUse",
    "beforeReadFile": "PreToolUse",
    "stop": "Stop",
}


def event(payload: dict, named: "str | None") -> "dict | None":
    name = EVENTS.get(str(named or payload.get("hook_event_name")))
    if name is None:
        return None
    roots = payload.get("workspace_roots")
    cwd = payload.get("cwd")
    if not isinstance(cwd, str) and isinstance(roots, list) and roots and isinstance(roots[0], str):
        cwd = roots[0]
    out: dict = {
        "hook_event_name": name,
        "session_id": payload.get("conversation_id"),
        "prompt_id": payload.get("generation_id"),
        "cwd": cwd,
    }
    if name == "UserPromptSubmit":
        out["prompt"] = None  # its answer cannot carry context: count the turn, hand nothing over
    elif name == "PreToolUse":
        if isinstance(payload.get("command"), str):
            out["tool_name"], out["tool_input"] = "Bash", {"command": payload["command"]}
        elif isinstance(payload.get("file_path"), str):
            out["tool_name"], out["tool_input"] = "Read", {"file_path": payload["file_path"]}
        else:
            return None
    else:
        out["stop_hook_active"] = isinstance(payload.get("loop_count"), int) and payload["loop_count"] > 0
    return out


def answer(event: str, out: str) -> str:
    kind, text = context_of(out)
    if kind == "block" and event == "Stop":
        return jsonio.dumps({"followup_message": text})
    if kind == "context" and event == "PreToolUse":
        # Third-party write-ups spell the field both ways; Cursor reads the one it knows.
        return jsonio.dumps({"permission": "allow", "agent_message": text, "agentMessage": text})
    return ""
