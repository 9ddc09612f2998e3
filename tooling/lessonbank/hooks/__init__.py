"""The hook process: one payload in, the lessons that fit out, in milliseconds, failing open.

entry (the script agents run; it puts `loader` first on sys.meta_path, which loads this package's
modules from their current bytecode cache without importlib's generic search) -> dispatch (the agent's adapter in hooks/agents turns its payload into
the one internal event, and the answer back into its shape; an explicit event -> handler table) -> one module per
event (session_start, prompt, pre_tool, post_tool, stop), with handover (the byte budget, the
once-per-session claim, the trial's arm, the ledger line). The session's claims and turns, the
records (`state`) and the compiled index (`index`) are formats of the standard-library packages, shared with the CLI;
so are the layers (index.layers): the project's index, the personal bank's and each team bank's, read in one call.
Standard library only: it imports `matching`, `state`, `index`, `errors` and `config`, never anything that loads
click, yaml, jinja2 or git.
"""
