"""The hook entry point: read the payload once, dispatch by event, never break the agent.

Any error (bad JSON, an unknown event, a bug) ends in exit 0 with no output; the error is
appended to `<bank>/.lessonbank/hook.log` (nowhere when there is no bank). A folder without
a bank costs only the interpreter start and a few `stat` calls.
"""

import sys

from lessonbank.hot import jsonio, state

EVENTS = {
    "PreToolUse": ("match", "pre_tool_use"),
    "UserPromptSubmit": ("recall", "user_prompt_submit"),
    "SessionStart": ("session", "session_start"),
    "PostToolUse": ("post", "post_tool_use"),
    "PostToolUseFailure": ("post", "post_tool_use"),
    "Stop": ("stop", "stop"),
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
        target = EVENTS.get(event)
        if target is None:
            return ""
        mode = state.mode(state_dir)
        if mode == "off":
            return ""
        module = __import__("lessonbank.hot." + target[0], fromlist=[target[1]])
        return getattr(module, target[1])(payload, root, state_dir, mode) or ""
    except Exception as exc:
        if raise_errors:
            raise
        log(state_dir, event, exc)
        return ""


def log(state_dir: str | None, event: str, exc: BaseException) -> None:
    """Append an error and its traceback to hook.log; never raise."""
    if state_dir is None:
        return
    try:
        import time
        import traceback

        stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
        trace = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        state.append_line(state_dir + "/hook.log", f"{stamp} {event}: {trace.rstrip()}")
    except Exception:
        pass


def main() -> None:
    """Run one hook call: stdin in, stdout out, exit status 0 whatever happens."""
    try:
        out = handle(sys.stdin.buffer.read())
        if out:
            sys.stdout.write(out + "\n")
            sys.stdout.flush()
    except BaseException:  # even KeyboardInterrupt or a closed stdout: the agent goes on
        pass
