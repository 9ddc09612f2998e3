"""The edge: one adapter per agent turns its hook payload into the one internal event, and the
answer back into that agent's output shape. Nothing past the edge knows which agent called.

The internal event is a dict with these keys (each optional unless said):
  hook_event_name   SessionStart | UserPromptSubmit | PreToolUse | PostToolUse | Stop (required)
  session_id, prompt_id (the turn, when the agent names one), cwd, source (startup | clear | compact)
  tool_name         Bash | Read | Edit | Write | Glob | Grep | NotebookEdit (shell calls are Bash)
  tool_input        {"command"} for Bash; {"file_path"} for file tools; {"path", "pattern", "glob"}
  tool_use_id, prompt, stop_hook_active, last_assistant_message, is_interrupt
  exit_status       PostToolUse: the shell's real exit status (int), or None when the agent gave none
  deliver           when the agent's model reads a tool call's lessons: unset, before the call
                    (PreToolUse answers them); "guards" on PreToolUse for an agent whose before-call
                    hook cannot add context (only guard lessons, answered as a block: a deny);
                    "after" on PostToolUse, the call's lessons with its result
The answer is the handlers' JSON text: {"hookSpecificOutput": {"hookEventName", "additionalContext"}}
to add context, or {"decision": "block", "reason"} to keep the agent going; `answer` reshapes it.

Each adapter module has `event(payload, named) -> dict | None` (`named`: the event name the
installed command passed, for agents whose payload lacks one) and `answer(event, out) -> str`.
`shapes` holds what several adapters read (answers, transcript tails); matching/exit_status reads
each agent's exit status in text, for the scan too. Standard library only, like the rest of the
hook process: adapters import the standard-library packages (`matching`, `state`) and `shapes` only.
"""
