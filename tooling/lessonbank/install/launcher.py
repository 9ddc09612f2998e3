"""This machine's hook program, `<data>/lessonbank/bank-hook`: what a committed hook file runs.

A project's hook files (.claude/settings.json and the other agents') are committed and shared, so
the command in them names nothing of one machine: it runs the launcher in the user's own data
folder when there is one, and exits 0 silently when there is none (a teammate who has not
installed lessonbank). `bank install` writes the launcher on each machine: a Python file whose
first line is this machine's interpreter with `-IS` (no site-packages scan, no PYTHON* variables,
no version-manager shim) and which runs this installation's hook entry script. The launcher lives
outside every repository, like the user's own config: nothing a repository holds can change it.
"""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

from lessonbank.bank.store import write_atomic
from lessonbank.errors import BankError
from lessonbank.state import userdirs

NAME = "bank-hook"
# The committed command: the same bytes on every machine. POSIX sh (every agent runs hook
# commands through a shell); the agent's name and event are appended by the caller. A folder
# is taken as userdirs.user_dir takes it: XDG_DATA_HOME only when absolute, else HOME's, and
# nothing at all when that is not absolute either. A relative one would be looked up in the
# folder the agent runs the hook in, the repository, which could hold a `bank-hook` of its own.
COMMAND = (
    'd="${XDG_DATA_HOME-}"; case "$d" in /*) ;; *) d="$HOME/.local/share";; esac; '
    'h="$d/lessonbank/' + NAME + '"; case "$h" in /*) [ -x "$h" ] || exit 0;; *) exit 0;; esac; exec "$h"'
)
MARKER = "lessonbank/" + NAME
# Linux reads at most 127 bytes of a `#!` line on older kernels, and no line may hold a space.
SHEBANG_MOST = 120


def entry_script() -> Path:
    """The hook entry script of this installation of the package."""
    return Path(__file__).resolve().parents[1] / "hooks" / "entry.py"


def path() -> Path:
    """Where this user's launcher lives (`$XDG_DATA_HOME/lessonbank/bank-hook`)."""
    folder = userdirs.user_dir("XDG_DATA_HOME", ".local/share")
    if folder is None:
        raise BankError("neither XDG_DATA_HOME nor HOME is an absolute path: set HOME, then run again")
    return Path(folder) / NAME


def text(python: str | None = None, script: Path | None = None) -> str:
    """The launcher's text for this interpreter and entry script."""
    interpreter = python or sys.executable
    entry = str(script or entry_script())
    if len(interpreter) + 6 <= SHEBANG_MOST and not any(c.isspace() for c in interpreter):
        return (
            f"#!{interpreter} -IS\n"
            "# Written by `bank install`: this machine's lessonbank hook program.\n"
            f"__file__ = {entry!r}\n"
            "with open(__file__, 'rb') as f:\n"
            "    exec(compile(f.read(), __file__, 'exec'))\n"
        )
    # An interpreter path a `#!` line cannot hold: a shell launcher (one more exec, about 1 ms).
    return (
        "#!/bin/sh\n"
        "# Written by `bank install`: this machine's lessonbank hook program.\n"
        f'exec {shlex.quote(interpreter)} -I -S {shlex.quote(entry)} "$@"\n'
    )


def write(python: str | None = None, dry_run: bool = False) -> str:
    """Write (or refresh) this machine's launcher; return what was done (create, update, unchanged)."""
    target = path()
    action = write_atomic(target, text(python), dry_run=dry_run)
    if not dry_run:  # even when unchanged: the committed command skips a launcher it cannot execute
        os.chmod(target, 0o755)
    return action
