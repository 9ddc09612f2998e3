"""The `bank` command: thin click commands over every other package, one module per verb group.

Commands parse their options, call the package that owns the work, and turn its errors into
click errors with a message that says what to do next (exit 1; bad usage exits 2). Command
modules load lazily, so `bank --help` imports none of them. `demo` owns every demo step and its
data. The only package that imports click; it may import everything below it.
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
    **dict.fromkeys(("groom", "rules", "schedule"), "groom"),
    **dict.fromkeys(("scan", "review"), "scan"),
    **dict.fromkeys(("on", "off", "test", "trial", "ledger"), "trial"),
    **dict.fromkeys(("install", "hook"), "hooks"),
    **dict.fromkeys(("remote", "pull"), "layers"),
}


# What `bank --help` says of each command: the first line of its docstring, written here so that
# listing the commands imports none of their modules (tests/cli/test_startup.py keeps the two equal).
SUMMARIES = {
    "add": 'Add a typed lesson: "<situation> => <what to do>"; tags and keywords come from its words.',
    "capture": "Add a lesson through the gates (flags, --json or --blocks on stdin); a repeat bumps seen.",
    "check": "Validate every lesson; print each problem as path:line: message and exit 1 if any.",
    "config": "Print the effective settings (defaults overlaid by bank.toml); a retired key still set is warned about.",
    "demo": "Build a bundled example bank in a fresh git repository and show each feature working.",
    "forget": "Delete a lesson by slug or id (git keeps its history) and regenerate the index.",
    "groom": "Re-verify lessons seen in two sessions; promote them into rules/skills/docs or delete stale ones.",
    "hook": "Run one hook event here and print its answer; a dry run unless --record (errors are shown).",
    "index": "Regenerate INDEX.md, BANK.md and the hooks' compiled index from lessons/.",
    "init": "Set up a bank in PATH (default: here); never overwrites an existing file.",
    "install": "Connect the bank to a coding agent's hooks.",
    "ledger": "What the hooks put in front of the agent: per lesson, per session, estimated tokens, never-fired.",
    "list": "List the lessons as a table.",
    "off": "Inject nothing, learn nothing, nudge no agent, from the hooks' next call.",
    "on": "Learn and inject lessons (the default mode).",
    "pull": "Fetch the team banks and fast-forward their clones; a diverged or dirty clone is left as it is.",
    "remote": "Follow team banks (git repositories holding a bank): add, list, remove.",
    "review": "Walk the scan's candidates one by one: accept (through the capture gates), edit, reject or skip.",
    "rules": "Bring every agent's files in line with rules/: CLAUDE.md or .claude/rules, AGENTS.md, GEMINI.md, Copilot's, Cursor's.",
    "scan": "Mine agent transcripts (Claude Code, Codex, Copilot CLI, Gemini CLI) for mistakes that were fixed; keep them for review.",
    "schedule": "Print the crontab line that grooms this bank weekly on a new branch.",
    "show": "Show one lesson by slug or id.",
    "stats": "Counts by status, source, type and tag, and how many lessons groom would consider.",
    "test": "Run the on/off trial: each new session goes at random to a with or a without arm.",
    "trial": "The on/off trial: its verdict under a rule fixed in advance, reset, export and offline analysis.",
}


class LazyGroup(click.Group):
    """A group whose commands are imported from their module on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(COMMANDS))

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The command list of `bank --help`, from SUMMARIES for the commands not imported yet."""
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
        bank = Bank.find(root=obj.get("root"))
    except BankError as exc:  # NoBankError among them: its message says to run `bank init`
        raise click.ClickException(str(exc)) from None
    if not obj.get("warned"):  # retired bank.toml keys: once per invocation, on stderr
        for line in bank.config.warnings:
            click.echo(f"warning: {line}", err=True)
        obj["warned"] = True
    return bank
