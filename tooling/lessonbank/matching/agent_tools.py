"""The Copilot CLI's, the Gemini CLI's and Qwen Code's names: their tools (and what each is in Claude
Code's terms), and the project files that hold our hooks for them.

The tool tables are read by the hook adapters (hooks/agents/copilot.py, gemini.py, qwen.py) to turn
a tool call into the internal one, by the transcript scan (scan/streams.py) to tell shell and edit
calls apart, and by install/hookfiles.py for Gemini's and Qwen's tool matchers. The file paths are written by
install/hookfiles.py and looked for by groom/rulesync.py (which agents a project uses).
"""

# Project-relative, with "/" as the separator on every system.
COPILOT_HOOKS = ".github/hooks/lessonbank.json"
GEMINI_SETTINGS = ".gemini/settings.json"
QWEN_SETTINGS = ".qwen/settings.json"

# Their tool -> (internal tool, ((their argument, internal argument), ...)).
COPILOT = {
    "bash": ("Bash", (("command", "command"),)),
    "view": ("Read", (("path", "file_path"),)),
    "create": ("Write", (("path", "file_path"),)),
    "edit": ("Edit", (("path", "file_path"),)),
    "str_replace_editor": ("Edit", (("path", "file_path"),)),
    "glob": ("Glob", (("pattern", "pattern"), ("path", "path"))),
    "grep": ("Grep", (("pattern", "pattern"), ("path", "path"), ("glob", "glob"))),
}
GEMINI = {
    "run_shell_command": ("Bash", (("command", "command"),)),
    "read_file": ("Read", (("file_path", "file_path"), ("absolute_path", "file_path"))),
    "write_file": ("Write", (("file_path", "file_path"),)),
    "replace": ("Edit", (("file_path", "file_path"),)),
    "glob": ("Glob", (("pattern", "pattern"), ("dir_path", "path"), ("path", "path"))),
    "search_file_content": (
        "Grep",
        (("pattern", "pattern"), ("dir_path", "path"), ("path", "path"), ("include", "glob")),
    ),
    "grep_search": ("Grep", (("pattern", "pattern"), ("dir_path", "path"), ("include", "glob"))),
}
# Qwen Code 0.24.4's tools, as its requests to the model declare them.
QWEN = {
    "run_shell_command": ("Bash", (("command", "command"),)),
    "read_file": ("Read", (("file_path", "file_path"),)),
    "write_file": ("Write", (("file_path", "file_path"),)),
    "edit": ("Edit", (("file_path", "file_path"),)),
    "notebook_edit": ("NotebookEdit", (("notebook_path", "notebook_path"),)),
    "glob": ("Glob", (("pattern", "pattern"), ("path", "path"))),
    "grep_search": ("Grep", (("pattern", "pattern"), ("path", "path"), ("glob", "glob"))),
}


def shell_tools() -> "frozenset[str]":
    """Their tools that run a shell command."""
    return frozenset(
        name for table in (COPILOT, GEMINI) for name, (ours, _) in table.items() if ours == "Bash"
    )


def edit_tools() -> "dict[str, str]":
    """Their tools that write a file -> the argument naming the file."""
    out: dict[str, str] = {}
    for table in (COPILOT, GEMINI):
        for name, (ours, args) in table.items():
            if ours in ("Write", "Edit"):
                out[name] = next(theirs for theirs, internal in args if internal == "file_path")
    return out
