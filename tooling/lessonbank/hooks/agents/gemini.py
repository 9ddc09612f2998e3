"""Google Gemini CLI (0.61): its own event and tool names, the exit status inside `llmContent`.

Events: SessionStart, BeforeAgent (the prompt), BeforeTool, AfterTool, AfterAgent (the stop,
with `prompt_response` as the last message). The prompt arrives with earlier hooks' context
prepended as `<hook_context>…</hook_context>`; that is cut off before recall reads it.

BeforeTool cannot add context (its output may only deny, or rewrite the arguments), so a tool
call's lessons go out at AfterTool, whose `additionalContext` is appended to the tool's result
(`deliver: "after"`): the model reads them after the first matching call, before its next one.
BeforeTool answers only for a lesson a person marked `guard: true` (`deliver: "guards"`): the
call is denied once with the lesson as the reason (the model gets `Tool execution blocked:
<reason>`), and the claim lets the retry pass. BeforeAgent's context is appended to the prompt.
AfterAgent's block is `decision: "deny"`.
"""

from lessonbank.hooks.agents.shapes import context_of, tool_call
from lessonbank.matching import agent_tools
from lessonbank.matching.exit_status import gemini, without_hook_context
from lessonbank.state import jsonio

EVENTS = {
    "SessionStart": "SessionStart",
    "BeforeAgent": "UserPromptSubmit",
    "BeforeTool": "PreToolUse",
    "AfterTool": "PostToolUse",
    "AfterAgent": "Stop",
}
OURS = {ours: theirs for theirs, ours in EVENTS.items()}
TOOLS = agent_tools.GEMINI


def event(payload: dict, named: "str | None") -> "dict | None":
    name = EVENTS.get(str(named or payload.get("hook_event_name")))
    if name is None:
        return None
    out: dict = {
        "hook_event_name": name,
        "session_id": payload.get("session_id"),
        "cwd": payload.get("cwd"),
    }
    if name == "SessionStart":
        out["source"] = payload.get("source")
    elif name == "UserPromptSubmit":
        prompt = payload.get("prompt")
        out["prompt"] = without_hook_context(prompt) if isinstance(prompt, str) else None
    elif name in ("PreToolUse", "PostToolUse"):
        args = payload.get("tool_input")
        call = tool_call(TOOLS, payload.get("tool_name"), args)
        if call is None:
            return None
        out["tool_name"], out["tool_input"] = call
        if name == "PostToolUse":
            out["exit_status"] = exit_status(payload.get("tool_response"))
        out["deliver"] = "after" if name == "PostToolUse" else "guards"
    else:
        out["stop_hook_active"] = payload.get("stop_hook_active") is True
        out["last_assistant_message"] = payload.get("prompt_response")
    return out


def exit_status(response: object) -> "int | None":
    """The shell's exit status from `llmContent` (see matching/exit_status), or None when it does not say."""
    text = response.get("llmContent") if isinstance(response, dict) else None
    return gemini(text) if isinstance(text, str) else None


def answer(event: str, out: str) -> str:
    kind, text = context_of(out)
    if kind == "block":
        return jsonio.dumps({"decision": "deny", "reason": text})
    if kind != "context":
        return ""
    return jsonio.dumps({"hookSpecificOutput": {"hookEventName": OURS[event], "additionalContext": text}})
