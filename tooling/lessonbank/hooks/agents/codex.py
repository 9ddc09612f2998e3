"""OpenAI Codex CLI (0.171): Claude Code's payload shape, `turn_id` for the turn, and no exit status.

Its PostToolUse carries the command's output only; the status is in the rollout file at
`transcript_path`: an `item_completed` event whose item id is the call id holds `exit_code`
(written before the hook runs), and the `function_call_output` for the call id says
"Process exited with code N". Answers: the same JSON as Claude Code's (context becomes a
developer message; a Stop block's reason comes back as a user message).
"""

from lessonbank.hooks.agents.shapes import tail_lines
from lessonbank.matching.exit_status import codex
from lessonbank.state import jsonio


def event(payload: dict, named: "str | None") -> dict:
    if "prompt_id" not in payload and isinstance(payload.get("turn_id"), str):
        payload["prompt_id"] = payload["turn_id"]
    if payload.get("hook_event_name") == "PostToolUse":
        payload["exit_status"] = exit_status(payload.get("transcript_path"), payload.get("tool_use_id"))
    return payload


def exit_status(transcript: object, call_id: object) -> "int | None":
    """The exit status the rollout file recorded for this call, or None when it has none."""
    if not isinstance(transcript, str) or not isinstance(call_id, str) or not call_id:
        return None
    quoted = jsonio.dumps(call_id)
    for line in tail_lines(transcript, quoted):
        try:
            entry = jsonio.loads(line)
        except ValueError:
            continue
        body = entry.get("payload") if isinstance(entry, dict) else None
        if not isinstance(body, dict):
            continue
        item = body.get("item")
        if body.get("type") == "item_completed" and isinstance(item, dict) and item.get("id") == call_id:
            code = item.get("exit_code")
            if isinstance(code, int) and not isinstance(code, bool):
                return code
        if body.get("type") == "function_call_output" and body.get("call_id") == call_id:
            output = body.get("output")
            if isinstance(output, str):
                found = codex(output)
                if found is not None:
                    return found
    return None


def answer(event: str, out: str) -> str:
    return out
