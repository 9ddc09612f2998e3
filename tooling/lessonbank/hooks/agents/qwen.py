"""Qwen Code (0.24.4): Claude Code's event names and payload shape, with its own tool names and shell output.

PreToolUse's `additionalContext` never reaches the model (0.24.4 reads it only for telemetry), so a
tool call's lessons go out at PostToolUse and PostToolUseFailure, whose `additionalContext` is
appended to the tool's result (`deliver: "after"`). PreToolUse answers only for a lesson marked
as a guard (`deliver: "guards"`): `permissionDecision: "deny"`, the lesson as the reason, which
the model gets as the call's error. Exit 0 fires PostToolUse (`tool_response.llmContent` says
"Exit Code: 0"); any other status fires PostToolUseFailure (its `error` says "Exit Code: N").
A headless run fires UserPromptSubmit again for each tool result it sends, with an empty prompt
and no `submitted_prompt`: those are not prompts, so they are dropped. Stop carries
`last_assistant_message`; its block is Claude Code's.
"""

from lessonbank.hooks.agents.shapes import context_of, tool_call
from lessonbank.matching import agent_tools
from lessonbank.matching.exit_status import after
from lessonbank.state import jsonio

TOOLS = agent_tools.QWEN
TOOL_EVENTS = ("PreToolUse", "PostToolUse", "PostToolUseFailure")


def event(payload: dict, named: "str | None") -> "dict | None":
    name = payload.get("hook_event_name")
    if name not in ("SessionStart", "UserPromptSubmit", "Stop", *TOOL_EVENTS):
        return None
    out: dict = {
        "hook_event_name": "PostToolUse" if name == "PostToolUseFailure" else name,
        "session_id": payload.get("session_id"),
        "prompt_id": payload.get("prompt_id"),
        "cwd": payload.get("cwd"),
    }
    if name == "SessionStart":
        out["source"] = payload.get("source")
    elif name == "UserPromptSubmit":
        submitted = payload.get("submitted_prompt")
        prompt = submitted if isinstance(submitted, str) else payload.get("prompt")
        if not isinstance(prompt, str) or not prompt.strip():
            return None  # a tool result sent back to the model, not a prompt
        out["prompt"] = prompt
    elif name in TOOL_EVENTS:
        args = payload.get("tool_input")
        call = tool_call(TOOLS, payload.get("tool_name"), args)
        if call is None:
            return None
        out["tool_name"], out["tool_input"] = call
        out["tool_use_id"] = payload.get("tool_use_id")
        if name == "PreToolUse":
            out["deliver"] = "guards"
        else:
            out["deliver"] = "after"
            out["is_interrupt"] = payload.get("is_interrupt") is True
            out["exit_status"] = exit_status(name, payload)
    else:
        out["stop_hook_active"] = payload.get("stop_hook_active") is True
        out["last_assistant_message"] = payload.get("last_assistant_message")
    return out


def exit_status(name: str, payload: dict) -> "int | None":
    """The shell's status from the text Qwen gives the model ("Exit Code: N"), or None when it names none."""
    if name == "PostToolUseFailure":
        text = payload.get("error")
    else:
        response = payload.get("tool_response")
        text = response.get("llmContent") if isinstance(response, dict) else None
    code = after(text, "Exit Code:") if isinstance(text, str) else None
    if name == "PostToolUseFailure" and code == 0:
        return None  # a failure that says 0 is no status to trust
    return code


def answer(event: str, out: str) -> str:
    kind, text = context_of(out)
    if kind == "block" and event == "PreToolUse":
        decision = {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": text}
        return jsonio.dumps({"hookSpecificOutput": decision})
    if kind == "block":
        return jsonio.dumps({"decision": "block", "reason": text})
    if kind == "context":
        return jsonio.dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}})
    return ""
