"""The `bank` click group: its options, the commands' lazy loading, and what every command shares.

A command module is imported only when one of its commands runs (`COMMANDS` says which module
holds which command); `bank --help` at another width than the usual lists the
commands not imported from the generated `summaries`.
"""

from __future__ import annotations

import errno
import importlib
from pathlib import Path
from typing import TYPE_CHECKING

import click

from lessonbank import __version__
from lessonbank.errors import BankError

if TYPE_CHECKING:
    from lessonbank.bank.store import Bank


# Each command and the module that defines it: a module is imported only when one of its
# commands runs, so `bank list` does not pay for gitpython, jinja2 or the scanner (~0.4 s).
COMMANDS = {
    **dict.fromkeys(
        ("add", "capture", "check", "config", "forget", "index", "init", "list", "show", "stats"),
        "commands",
    ),
    "demo": "demo",
    "replay": "replay",
    **dict.fromkeys(("groom", "rules", "schedule"), "groom"),
    **dict.fromkeys(("scan", "review"), "scan"),
    **dict.fromkeys(("on", "off", "test", "trial", "ledger"), "trial"),
    **dict.fromkeys(("install", "hook"), "hooks"),
    **dict.fromkeys(("remote", "pull"), "layers"),
}


class LazyGroup(click.Group):
    """A group whose commands are imported from their module on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(COMMANDS))

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The command list of `bank --help`, from SUMMARIES for the commands not imported yet."""
        from lessonbank.cli.summaries import SUMMARIES

        names = self.list_commands(ctx)
        if not names:
            return
        limit = formatter.width - 6 - max(len(name) for name in names)
        rows = []
        for name in names:
            command = self.commands.get(name)
            if command is None:
                # A stand-in command shortens the summary exactly as click shortens a docstring.
                rows.append((name, click.Command(name, help=SUMMARIES[name]).get_short_help_str(limit)))
            elif not command.hidden:
                rows.append((name, command.get_short_help_str(limit)))
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def invoke(self, ctx: click.Context) -> object:
        """Run the command; a file system error (read-only, full disk, no permission) ends in one
        line naming the path, exit 1, not a traceback."""
        try:
            return super().invoke(ctx)
        except OSError as exc:
            if isinstance(exc, BrokenPipeError):
                raise
            raise click.ClickException(disk_error(exc)) from None

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            importlib.import_module(f"lessonbank.cli.{COMMANDS[cmd_name]}")
        return super().get_command(ctx, cmd_name)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--root",
    type=click.Path(file_okay=False, path_type=Path),
    envvar="BANK_ROOT",
    help="The bank's root folder (default: found by walking up from here).",
)
@click.version_option(__version__, prog_name="bank")
@click.pass_context
def main(ctx: click.Context, root: Path | None) -> None:
    """Keep what coding agents learned in this project, and hand it back at the right moment."""
    ctx.ensure_object(dict)
    ctx.obj["root"] = root


def disk_error(exc: OSError) -> str:
    """One line for a failed file operation: the path(s) and the system's reason."""
    where = " -> ".join(str(p) for p in (exc.filename, exc.filename2) if p) or "a file"
    reason = exc.strerror or exc.__class__.__name__
    verb = "write" if exc.errno in (errno.EROFS, errno.ENOSPC, errno.EDQUOT) else "use"
    return f"cannot {verb} {where}: {reason}"


def get_bank(ctx: click.Context) -> Bank:
    """The bank for this invocation, or a click error that says what to do next."""
    from lessonbank.bank.store import Bank

    obj = ctx.find_root().obj or {}
    try:
        return Bank.find(root=obj.get("root"))
    except BankError as exc:  # NoBankError among them: its message says to run `bank init`
        raise click.ClickException(str(exc)) from None
