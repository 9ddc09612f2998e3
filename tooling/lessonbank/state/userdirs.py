"""The user's own folders (XDG data, state, cache, config), each with a `lessonbank` folder in it.

They are outside every repository and hold what only the user writes: the hook launcher and the
team banks (data), blocks the Stop hook could not save (state), what can be worked out again
(cache) and the user's own settings (config). `posix` and `sys` only: the hooks call these too.
"""

import posix
import sys

from lessonbank.state.statedir import safe_name

# In the user's cache folder: the templates Jinja compiled (its bytecode cache, keyed by each
# template's path and source). Never in a repository: Jinja loads the cache as code.
TEMPLATE_CACHE = "compiled-templates"


def user_dir(variable: str, default: str) -> "str | None":
    """The user's lessonbank folder of one XDG kind: `$<variable>/lessonbank`, else
    `$HOME/<default>/lessonbank`; None when neither is an absolute path."""
    # posix.environ is a copy taken at start-up; a process that imported `os` (the CLI, tests) may
    # have changed its environment since, and os.environb sees that. The hook process never has `os`.
    loaded = sys.modules.get("os")
    env = loaded.environb if loaded is not None else posix.environ
    base = env.get(variable.encode(), b"").decode("utf-8", "surrogateescape")
    if not base.startswith("/"):
        home = env.get(b"HOME", b"").decode("utf-8", "surrogateescape")
        if not home.startswith("/"):
            return None
        base = home.rstrip("/") + "/" + default
    return base.rstrip("/") + "/lessonbank"


def user_pending(root: str) -> "str | None":
    """Where the Stop hook keeps the #lesson blocks of bank `root` when the bank's own folders
    cannot be written (a read-only checkout, a full disk): the user's state folder,
    `$XDG_STATE_HOME/lessonbank/pending/` (default `~/.local/state/...`), one file per bank, named
    by the bank's real path (the hook finds it from the cwd, capture from its resolved root)."""
    import os.path  # only on this failure path: the hook process otherwise never loads os

    folder = user_dir("XDG_STATE_HOME", ".local/state")
    return None if folder is None else folder + "/pending/" + safe_name(os.path.realpath(root)) + ".jsonl"


def user_cache(name: str) -> "str | None":
    """A file in the user's cache folder, `$XDG_CACHE_HOME/lessonbank/` (default `~/.cache/...`):
    what can be worked out again at any time (deleting it costs only speed)."""
    folder = user_dir("XDG_CACHE_HOME", ".cache")
    return None if folder is None else folder + "/" + name
