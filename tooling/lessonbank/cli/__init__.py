"""The `bank` command: thin click commands over the core and the adapters."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from lessonbank import __version__
from lessonbank.errors import BankError, NoBankError

if TYPE_CHECKING:
    from lessonbank.store import Bank


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
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
    from lessonbank.store import Bank

    obj = ctx.find_root().obj or {}
    try:
        return Bank.find(root=obj.get("root"))
    except NoBankError as exc:
        raise click.ClickException(str(exc)) from None
    except BankError as exc:
        raise click.ClickException(str(exc)) from None


# Feature modules register their commands on `main` when imported.
# --- registrations (one line per feature module) ---
from lessonbank.cli import commands  # noqa: E402,F401

from lessonbank.cli import groom  # noqa: E402,F401  # isort: skip
from lessonbank.cli import scan  # noqa: E402,F401  # isort: skip
from lessonbank.cli import trial  # noqa: E402,F401  # isort: skip
from lessonbank.cli import hooks  # noqa: E402,F401  # isort: skip
