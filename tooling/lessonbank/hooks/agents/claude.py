"""Claude Code: its payloads are the internal event's shape; only the outcome needs naming.

PostToolUse fires for a Bash call that exited 0, PostToolUseFailure for one that did not (its
`error` says "Exit code N"); both become PostToolUse with `exit_status`. Answers pass unchanged.
"""


def event(payload: dict, named: "str | None") -> dict:
    name = payload.get("hook_event_name")
    if name == "PostToolUse":
        payload["exit_status"] = 0
    elif name == "PostToolUseFailure":
        payload["hook_event_name"] = "PostToolUse"
        from lessonbank.matching import exit_status  # only a failure reads it: most calls are PreToolUse

        error = payload.get("error")
        code = exit_status.after(error, "Exit code") if isinstance(error, str) else None
        payload["exit_status"] = code if code else 1  # it failed: never 0, whatever the text says
    return payload


def answer(event: str, out: str) -> str:
    return out
