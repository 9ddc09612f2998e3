"""The `bank` command: thin click commands over every other package, one module per verb group.

Commands parse their options, call the package that owns the work, and turn its errors into
click errors with a message that says what to do next (exit 1; bad usage exits 2). Command
modules load lazily, so `bank --help` imports none of them. `demo` owns every demo step and its
data. The only package that imports click; it may import everything below it.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import TYPE_CHECKING

import click

from lessonbank import __version__
from lessonbank.errors import BankError, NoBankError

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
    **dict.fromkeys(("groom", "rules", "schedule"), "groom"),
    **dict.fromkeys(("scan", "review"), "scan"),
    **dict.fromkeys(("on", "off", "test", "trial", "ledger"), "trial"),
    **dict.fromkeys(("install", "hook"), "hooks"),
}


class LazyGroup(click.Group):
    """A group whose commands are imported from their module on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(COMMANDS))

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


def get_bank(ctx: click.Context) -> Bank:
    """The bank for this invocation, or a click error that says what to do next."""
    from lessonbank.bank.store import Bank

    obj = ctx.find_root().obj or {}
    try:
        return Bank.find(root=obj.get("root"))
    except NoBankError as exc:
        raise click.ClickException(str(exc)) from None
    except BankError as exc:
        raise click.ClickException(str(exc)) from None
