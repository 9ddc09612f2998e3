"""The hook entry point: read the payload once, dispatch by event, never break the agent.

Any error (bad JSON, an unknown event, a bug) ends in exit 0 with no output; the error is
appended to `<bank>/.lessonbank/hook.log` (nowhere when there is no bank). A folder without
a bank costs only the interpreter start and a few `stat` calls.
"""

import sys

from lessonbank.kernel import jsonio
from lessonbank.kernel import statedir as state


# Each handler imports its module when called, so a hook process loads only the one it runs.
def _pre_tool(payload: dict, root: str, state_dir: str, mode: str) -> str:
    from lessonbank.hooks import pre_tool

    return pre_tool.pre_tool_use(payload, root, state_dir, mode)


def _prompt(payload: dict, root: str, state_dir: str, mode: str) -> str:
    from lessonbank.hooks import prompt

    return prompt.user_prompt_submit(payload, root, state_dir, mode)


def _session_start(payload: dict, root: str, state_dir: str, mode: str) -> str:
    from lessonbank.hooks import session_start

    return session_start.session_start(payload, root, state_dir, mode)


def _post_tool(payload: dict, root: str, state_dir: str, mode: str) -> str:
    from lessonbank.hooks import post_tool

    return post_tool.post_tool_use(payload, root, state_dir, mode)


def _stop(payload: dict, root: str, state_dir: str, mode: str) -> str:
    from lessonbank.hooks import stop

    return stop.stop(payload, root, state_dir, mode)


# The event -> handler table (each handler: payload, bank root, state folder, mode -> stdout).
EVENTS = {
    "PreToolUse": _pre_tool,
    "UserPromptSubmit": _prompt,
    "SessionStart": _session_start,
    "PostToolUse": _post_tool,
    "PostToolUseFailure": _post_tool,
    "Stop": _stop,
}


def handle(raw: bytes, raise_errors: bool = False) -> str:
    """The hook's stdout for one payload ("" for none)."""
    state_dir = None
    event = "?"
    try:
        payload = jsonio.loads(raw.decode("utf-8", "replace"))
        if not isinstance(payload, dict):
            return ""
        cwd = payload.get("cwd")
        if not isinstance(cwd, str) or not cwd:
            import posix

            cwd = posix.getcwd()
        root = state.find_root(cwd)
        if root is None:
            return ""
        state_dir = root + "/" + state.STATE
        event = str(payload.get("hook_event_name"))
        handler = EVENTS.get(event)
        if handler is None:
            return ""
        mode = state.mode(state_dir)
        if mode == "off":
            return ""
        return handler(payload, root, state_dir, mode) or ""
    except Exception as exc:
        if raise_errors:
            raise
        state.log_error(state_dir, event, exc)
        return ""


def main() -> None:
    """Run one hook call: stdin in, stdout out, exit status 0 whatever happens."""
    try:
        out = handle(sys.stdin.buffer.read())
        if out:
            sys.stdout.write(out + "\n")
            sys.stdout.flush()
    except BaseException:  # even KeyboardInterrupt or a closed stdout: the agent goes on
        pass
