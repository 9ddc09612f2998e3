"""Where each agent writes a shell command's exit status in text, read the same way by the hooks
(at the call) and the scan (in transcripts). Standard library only, no `re`.

- Codex: "Process exited with code N" (function_call_output), "Exit code: N" before 0.80;
- Copilot CLI: "<shellId: 0 completed with exit code N>" (the tool result text);
- Gemini CLI: "Exit Code: N" in the shell tool's output, written only when N is not 0: a command
  that ran has its "Output:" line, and no exit code, signal or error line, when it exited 0.

Also what Gemini CLI adds to text: `without_hook_context` takes out the `<hook_context>` blocks
it puts in a user message, for the hook (a prompt) and the scan (a transcript) alike.
"""


def after(text: str, marker: str) -> "int | None":
    """The integer right after the last `marker` in `text` ("exit code 5" -> 5), or None."""
    at = text.rfind(marker)
    if at < 0:
        return None
    i = at + len(marker)
    while i < len(text) and text[i] == " ":
        i += 1
    j = i + 1 if i < len(text) and text[i] == "-" else i
    while j < len(text) and text[j].isdigit():
        j += 1
    digits = text[i:j]
    return int(digits) if digits and digits != "-" else None


def codex(text: str) -> "int | None":
    """Codex 0.80 and later: "Process exited with code N"; 0.77-0.79: "Exit code: N"."""
    code = after(text, "Process exited with code")
    return code if code is not None else after(text, "Exit code:")


def copilot(text: str) -> "int | None":
    return after(text, "completed with exit code")


def gemini(text: str) -> "int | None":
    """The status of a Gemini shell tool's output, or None when it does not say (blocked, cancelled)."""
    code = after(text, "Exit Code:")
    if code is not None:
        return code
    lines = [line.strip() for line in text.splitlines()]
    if not any(line.startswith("Output:") for line in lines):
        return None
    if any(line.startswith("Signal:") or (line.startswith("Error:") and line != "Error: (none)") for line in lines):
        return None
    return 0


def without_hook_context(text: str) -> str:
    """`text` without the `<hook_context>…</hook_context>` blocks Gemini CLI puts in a user message."""
    while True:
        start = text.find("<hook_context>")
        end = text.find("</hook_context>", start)
        if start < 0 or end < 0:
            return text.strip()
        text = text[:start] + text[end + len("</hook_context>") :]
