"""The `bank` command: thin click commands over every other package, one module per verb group.

Commands parse their options, call the package that owns the work, and turn its errors into
click errors with a message that says what to do next (exit 1; bad usage exits 2). `app` is the
click group; command modules load lazily, so `bank --help` imports none of them, and `bank
--help` and `bank --version` are answered here from `summaries` (generated from the commands'
docstrings by `helptext`) before click is even imported: the same bytes click would print.
`demo` owns every demo step and its data. The only package that imports click; it may import
everything below it.
"""

import os
import sys

TYPE_CHECKING = False  # typing is not imported: `bank --help` does without it (mypy reads this as typing's)
if TYPE_CHECKING:
    from typing import Any

class Entry:
    """`bank` as the console script and `python -m lessonbank` call it: `--help`, `-h` and
    `--version` alone are answered from the generated text; anything else (and every attribute:
    `command`, `commands`, `main`, ...) goes to the click group, `app.main`, imported then."""

    def __call__(self, args: "list[str] | None" = None, prog_name: "str | None" = None, **extra: "Any") -> "Any":
        answer = quick_answer(sys.argv[1:] if args is None else list(args), prog_name, extra)
        if answer is not None:
            sys.stdout.write(answer)
            sys.stdout.flush()
            raise SystemExit(0)
        from lessonbank.cli import app

        return app.main(args, prog_name, **extra)

    def __getattr__(self, name: str) -> "Any":
        from lessonbank.cli import app

        return getattr(app.main, name)


main = Entry()


def __getattr__(name: str) -> "Any":
    """What the command modules take from here besides `main` (get_bank, COMMANDS, ...): app's."""
    if name in ("get_bank", "disk_error", "LazyGroup", "COMMANDS"):
        from lessonbank.cli import app

        return getattr(app, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def quick_answer(args: "list[str]", prog_name: "str | None", extra: "dict[str, Any]") -> "str | None":
    """What click would print for `--help`, `-h` or `--version` given alone, at the usual width
    (78: a terminal of 80 columns or more, or none), with no completion requested; else None."""
    if extra or len(args) != 1 or args[0] not in ("--help", "-h", "--version"):
        return None
    if args[0] == "--version":
        from lessonbank import __version__

        return f"bank, version {__version__}\n"
    prog = detect_program_name() if prog_name is None else prog_name
    complete = "_" + prog.replace("-", "_").replace(".", "_").upper() + "_COMPLETE"
    if complete in os.environ or len(prog) > 40 or help_width() != 78:
        return None
    from lessonbank.cli import summaries

    return f"Usage: {prog}{summaries.USAGE}\n{summaries.BODY}\n"


def detect_program_name() -> str:
    """The program name click gives the help's usage line (click.utils._detect_program_name)."""
    path = sys.argv[0]
    package = getattr(sys.modules["__main__"], "__package__", None)
    if package in (None, ""):
        return os.path.basename(path)
    name = os.path.splitext(os.path.basename(path))[0]
    module = package if name == "__main__" else f"{package}.{name}"
    return f"python -m {module.lstrip('.')}"


def help_width() -> int:
    """The width click's help formatter takes: the terminal's columns as shutil.get_terminal_size
    gives them, at most 80, less 2, at least 50."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
        columns = columns or 80
    return max(min(columns, 80) - 2, 50)
