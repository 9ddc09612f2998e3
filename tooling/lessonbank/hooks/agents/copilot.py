"""GitHub Copilot CLI (1.0.102): camelCase payloads without an event name, context at the top level.

The installed command names the event (`entry.py copilot preToolUse`). Tools are `bash`, `view`,
`create`, `edit`, `grep`, `glob`; postToolUse says `resultType: "success"` even for a command that
exited 5, so the status is read from `textResultForLlm` ("<shellId: 0 completed with exit code
5>"). agentStop has no message: the last `assistant.message` in `transcriptPath` (events.jsonl) is
read instead, once the file has caught up with the hook call. Answers: {"additionalContext": text} at the top
level; a stop block keeps Claude Code's {"decision": "block", "reason"}.
"""

from lessonbank.hooks.agents.shapes import context_of, tail_lines, tool_call
from lessonbank.matching import agent_tools
from lessonbank.matching.exit_status import copilot
from lessonbank.state import jsonio

EVENTS = {
    "sessionStart": "SessionStart",
    "userPromptSubmitted": "UserPromptSubmit",
    "preToolUse": "PreToolUse",
    "postToolUse": "PostToolUse",
    "agentStop": "Stop",
}
TOOLS = agent_tools.COPILOT
WAIT = 3.0
SOURCES = {"new": "startup", "startup": "startup", "resume": "resume", "clear": "clear"}


def event(payload: dict, named: "str | None") -> "dict | None":
    name = EVENTS.get(named or str(payload.get("hookEventName") or payload.get("hook_event_name")))
    if name is None:
        return None
    out: dict = {"hook_event_name": name, "session_id": payload.get("sessionId"), "cwd": payload.get("cwd")}
    if name == "SessionStart":
        out["source"] = SOURCES.get(str(payload.get("source")), "startup")
    elif name == "UserPromptSubmit":
        out["prompt"] = payload.get("prompt")
    elif name in ("PreToolUse", "PostToolUse"):
        args = payload.get("toolArgs")
        if isinstance(args, str):  # some builds send the arguments JSON-encoded
            try:
                args = jsonio.loads(args)
            except ValueError:
                args = None
        call = tool_call(TOOLS, payload.get("toolName"), args)
        if call is None:
            return None
        out["tool_name"], out["tool_input"] = call
        if name == "PostToolUse":
            out["exit_status"] = exit_status(payload.get("toolResult"))
    else:
        out["stop_hook_active"] = payload.get("stop_hook_active") is True
        out["last_assistant_message"] = last_message(payload.get("transcriptPath"), payload.get("timestamp"))
    return out


def exit_status(result: object) -> "int | None":
    """The shell's exit status from the result text, or None when the text names none."""
    text = result.get("textResultForLlm") if isinstance(result, dict) else None
    if not isinstance(text, str):
        return None
    return copilot(text)


def last_message(transcript: object, stamp: object = None) -> "str | None":
    """The text of the last assistant message with text in the session's events.jsonl.

    Copilot appends to events.jsonl a moment after it runs the hook, so this first waits (up to
    WAIT seconds) for the file to log this very agentStop call (its `timestamp`): by then the
    message before it is written too.
    """
    if not isinstance(transcript, str):
        return None
    if isinstance(stamp, int) and not isinstance(stamp, bool):
        import time

        mark = f'"timestamp":{stamp}'
        deadline = time.monotonic() + WAIT
        while not any(mark in line for line in tail_lines(transcript, '"agentStop"', 1 << 20)):
            if time.monotonic() > deadline:
                break
            time.sleep(0.02)
    for line in tail_lines(transcript, '"assistant.message"'):
        try:
            entry = jsonio.loads(line)
        except ValueError:
            continue
        if not isinstance(entry, dict) or entry.get("type") != "assistant.message":
            continue
        data = entry.get("data")
        if isinstance(data, dict):
            content = data.get("content")
            if isinstance(content, str) and content.strip():
                return content
    return None


def answer(event: str, out: str) -> str:
    kind, text = context_of(out)
    if kind == "context":
        return jsonio.dumps({"additionalContext": text})
    if kind == "block":
        return jsonio.dumps({"decision": "block", "reason": text})
    return ""
