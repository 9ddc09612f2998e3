"""The hook entry point: read the payload once, adapt it, dispatch by event, never break the agent.

`entry.py [agent [event]]`: the agent (claude when none) picks the adapter in hooks/agents that
turns its payload into the internal event and the answer back into its output shape.

Any error (bad JSON, an unknown event, a bug) ends in exit 0 with no output; the error is
appended to `<bank>/.lessonbank/hook.log` (nowhere when there is no bank). A folder without
a bank costs only the interpreter start and a few `stat` calls.
"""

import sys

from lessonbank.state import jsonio, statedir

# Texts matched against the lessons are cut to this many characters first: a command, a path or
# any other string in tool_input, and a prompt. Matching time then does not grow with a payload
# (a 50 MB command took 13 s to match); a trigger that needs more than 8 KiB of a command to
# decide is not one a lesson should have. Stop's message is not cut: its #lesson blocks are kept.
MAX_TEXT = 8192

# Both tables below are written as plain imports inside functions, not module names handed to
# __import__: readers, `grep` and the architecture test's import walker can follow them, and a
# hook process still loads only the adapter and the handler it runs.


def load(agent: str):  # noqa: ANN201 - a module
    """The adapter module for `agent` (hooks/agents; ValueError for an unknown name)."""
    if agent == "claude":
        from lessonbank.hooks.agents import claude

        return claude
    if agent == "codex":
        from lessonbank.hooks.agents import codex

        return codex
    if agent == "copilot":
        from lessonbank.hooks.agents import copilot

        return copilot
    if agent == "gemini":
        from lessonbank.hooks.agents import gemini

        return gemini
    if agent == "qwen":
        from lessonbank.hooks.agents import qwen

        return qwen
    if agent == "cursor":
        from lessonbank.hooks.agents import cursor

        return cursor
    raise ValueError(f"unknown agent {agent!r}")


def run(event: str, internal: dict, root: str, state_dir: str, mode: str) -> str | None:
    """The handler's stdout for an internal event, or None for an event no handler takes."""
    if event == "PreToolUse":
        from lessonbank.hooks import pre_tool

        return pre_tool.pre_tool_use(internal, root, state_dir, mode)
    if event == "UserPromptSubmit":
        from lessonbank.hooks import prompt

        return prompt.user_prompt_submit(internal, root, state_dir, mode)
    if event == "SessionStart":
        from lessonbank.hooks import session_start

        return session_start.session_start(internal, root, state_dir, mode)
    if event == "PostToolUse":
        from lessonbank.hooks import post_tool

        post_tool.post_tool_use(internal, root, state_dir, mode)  # records a check; answers nothing
        if internal.get("deliver") != "after":
            return ""
        from lessonbank.hooks import pre_tool  # the agent hands a call's lessons over with its result

        return pre_tool.pre_tool_use(internal, root, state_dir, mode)
    if event == "Stop":
        from lessonbank.hooks import stop

        return stop.stop(internal, root, state_dir, mode)
    return None


def cut(internal: dict) -> None:
    """Cut the texts the handlers match (see MAX_TEXT) in place."""
    tool_input = internal.get("tool_input")
    if isinstance(tool_input, dict):
        for key, value in tool_input.items():
            if isinstance(value, str) and len(value) > MAX_TEXT:
                tool_input[key] = value[:MAX_TEXT]
    prompt = internal.get("prompt")
    if isinstance(prompt, str) and len(prompt) > MAX_TEXT:
        internal["prompt"] = prompt[:MAX_TEXT]


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
        root = statedir.find_root(cwd)
        if root is None:
            return ""
        state_dir = root + "/" + statedir.STATE
        mode = statedir.mode(state_dir)
        if mode == "off":
            return ""
        adapter = load(agent)
        internal = adapter.event(payload, named)
        if internal is None:
            return ""
        event = str(internal.get("hook_event_name"))
        cut(internal)
        out = run(event, internal, root, state_dir, mode)
        return adapter.answer(event, out) if out else ""
    except Exception as exc:
        if raise_errors:
            raise
        statedir.log_error(state_dir, event, exc)
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
