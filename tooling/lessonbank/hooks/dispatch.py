"""The hook entry point: read the payload once, adapt it, dispatch by event, never break the agent.

`entry.py [agent [event]]`: the agent (claude when none) picks the adapter in hooks/agents that
turns its payload into the internal event and the answer back into its output shape.

Any error (bad JSON, an unknown event, a bug) ends in exit 0 with no output; the error is
appended to `<bank>/.lessonbank/hook.log` (nowhere when there is no bank). A folder without
a bank costs only the interpreter start and a few `stat` calls.
"""

import sys

from lessonbank.kernel import jsonio
from lessonbank.kernel import statedir as state

# The agents with an adapter in hooks/agents (the hook command's first argument; claude by default).
AGENTS = ("claude", "codex", "copilot", "gemini", "cursor")


def load(agent: str):  # noqa: ANN201 - a module
    """The adapter module for `agent` (hooks/agents; ValueError for an unknown name)."""
    if agent not in AGENTS:
        raise ValueError(f"unknown agent {agent!r}")
    return _module("lessonbank.hooks.agents." + agent)


def _module(name: str):  # noqa: ANN201 - a module
    # The built-in __import__, not importlib: nothing more to load. fromlist makes it return the
    # submodule itself rather than the top package.
    return __import__(name, fromlist=("_",))


# Event -> (hooks module, its handler: payload, bank root, state folder, mode -> stdout). The module
# is imported when its event comes, so a hook process loads only the one it runs.
EVENTS = {
    "PreToolUse": ("pre_tool", "pre_tool_use"),
    "UserPromptSubmit": ("prompt", "user_prompt_submit"),
    "SessionStart": ("session_start", "session_start"),
    "PostToolUse": ("post_tool", "post_tool_use"),
    "Stop": ("stop", "stop"),
}


def handle(raw: bytes, raise_errors: bool = False, agent: str = "claude", named: str | None = None) -> str:
    """The hook's stdout for one payload of `agent` ("" for none).

    `named` is the event name the installed command passed (agents whose payloads have none).
    The agent's adapter (hooks/agents) turns the payload into the internal event and the
    handler's answer into the agent's shape; nothing between the two knows the agent.
    """
    state_dir = None
    event = named or "?"
    try:
        payload = jsonio.loads(raw.decode("utf-8", "replace"))
        if not isinstance(payload, dict):
            return ""
        cwd = payload.get("cwd")
        if not isinstance(cwd, str) or not cwd:
            roots = payload.get("workspace_roots")
            if isinstance(roots, list) and roots and isinstance(roots[0], str):
                cwd = roots[0]
            else:
                import posix

                cwd = posix.getcwd()
        root = state.find_root(cwd)
        if root is None:
            return ""
        state_dir = root + "/" + state.STATE
        mode = state.mode(state_dir)
        if mode == "off":
            return ""
        adapter = load(agent)
        internal = adapter.event(payload, named)
        if internal is None:
            return ""
        event = str(internal.get("hook_event_name"))
        handler = EVENTS.get(event)
        if handler is None:
            return ""
        module, function = handler
        out = getattr(_module("lessonbank.hooks." + module), function)(internal, root, state_dir, mode)
        return adapter.answer(event, out) if out else ""
    except Exception as exc:
        if raise_errors:
            raise
        state.log_error(state_dir, event, exc)
        return ""


def main() -> None:
    """Run one hook call: stdin in, stdout out, exit status 0 whatever happens."""
    try:
        args = sys.argv[1:]
        agent = args[0] if args else "claude"
        out = handle(sys.stdin.buffer.read(), agent=agent, named=args[1] if len(args) > 1 else None)
        if out:
            sys.stdout.write(out + "\n")
            sys.stdout.flush()
    except BaseException:  # even KeyboardInterrupt or a closed stdout: the agent goes on
        pass
