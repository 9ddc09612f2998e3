"""Connecting a bank to an agent: its settings file gets the hook commands, or loses them.

claude (.claude/settings.json) and hookfiles (Codex, Copilot CLI, Gemini CLI, Cursor: each its own
file and shape), all pointing at the one hook program with the agent's name.

It may import `bank`, the standard-library packages (`matching`, `state`, `index`), `errors` and `config`.
"""
