"""`bank install <agent>` and `bank hook`: connect the bank to a coding agent, and try a hook by hand."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import click

from lessonbank.cli import get_bank, main
from lessonbank.errors import BankError
from lessonbank.install import claude


@main.group(invoke_without_command=True)
@click.pass_context
def install(ctx: click.Context) -> None:
    """Connect the bank to a coding agent's hooks.

    With no agent: list the agents found on this machine, and whether each is installed here.
    """
    if ctx.invoked_subcommand is not None:
        return
    from lessonbank.install import hookfiles

    bank = get_bank(ctx)
    for name, where, done in hookfiles.found(bank.root, Path.home()):
        state = "installed" if done else f"bank install {name}"
        click.echo(f"{name:8} {where or 'not found':50} {state}")


def _install_agent(name: str) -> None:
    from lessonbank.install import hookfiles

    agent = hookfiles.AGENTS[name]

    @install.command(name, help=f"Merge the hooks into {agent.path} (idempotent; your own hooks stay).")
    @click.option("--uninstall", is_flag=True, help="Remove lessonbank's hooks (and only those).")
    @click.option("--dry-run", is_flag=True, help="Show what would change; write nothing.")
    @click.option(
        "--project",
        type=click.Path(file_okay=False, path_type=Path),
        help=f"The project whose {agent.path} to change (default: the bank root).",
    )
    @click.pass_context
    def run(ctx: click.Context, uninstall: bool, dry_run: bool, project: Path | None) -> None:
        bank = get_bank(ctx)
        target = (project or bank.root).resolve()
        try:
            result = hookfiles.install(target, name, uninstall=uninstall, dry_run=dry_run)
        except BankError as err:
            raise click.ClickException(str(err)) from None
        _report(result, target, uninstall, dry_run, agent.note)


def _report(result: claude.Result, target: Path, uninstall: bool, dry_run: bool, note: str = "") -> None:
    """What `bank install <agent>` did, in the same lines for every agent."""
    shown = result.path.relative_to(target) if result.path.is_relative_to(target) else result.path
    verb = f"would {result.action}" if dry_run and result.action != "unchanged" else result.action
    click.echo(f"{verb:9} {shown}")
    if uninstall:
        click.echo("lessonbank hooks removed" if result.action != "unchanged" else "no lessonbank hooks here")
        return
    click.echo(f"hooks: {', '.join(result.events)}")
    click.echo(f"command: {result.command}")
    if note:
        click.echo(note)


for _name in ("codex", "copilot", "gemini", "qwen", "cursor"):
    _install_agent(_name)


@install.command("claude")
@click.option("--uninstall", is_flag=True, help="Remove lessonbank's hooks (and only those).")
@click.option("--dry-run", is_flag=True, help="Show what would change; write nothing.")
@click.option(
    "--project",
    type=click.Path(file_okay=False, path_type=Path),
    help="The project whose .claude/settings.json to change (default: the bank root).",
)
@click.option(
    "--local",
    is_flag=True,
    help="Use .claude/settings.local.json (not committed: the interpreter path is this machine's).",
)
@click.pass_context
def install_claude(ctx: click.Context, uninstall: bool, dry_run: bool, project: Path | None, local: bool) -> None:
    """Merge the hooks into .claude/settings.json (idempotent; your own hooks stay)."""
    bank = get_bank(ctx)
    target = (project or bank.root).resolve()
    try:
        result = claude.install(target, uninstall=uninstall, dry_run=dry_run, local=local)
    except BankError as err:
        raise click.ClickException(str(err)) from None
    _report(result, target, uninstall, dry_run)


def _hook_root(ctx: click.Context) -> Path:
    """The bank root as the hook finds it (bank.toml is not parsed here; see `hook`)."""
    from lessonbank.state import statedir

    given = (ctx.find_root().obj or {}).get("root") or os.environ.get("BANK_ROOT")
    start = Path(given).expanduser().resolve() if given else Path.cwd().resolve()
    found = statedir.find_root(str(start))
    if found is None or (given and Path(found) != start):
        raise click.ClickException("No bank here: run `bank init`, or pass --root")
    return Path(found)


@main.command("hook")
@click.argument("event", type=click.Choice([e for e, _, _ in claude.EVENTS]))
@click.option("--command", "command", help="PreToolUse/PostToolUse: the Bash command.")
@click.option("--path", "file_path", help="PreToolUse: a file path (an Edit call).")
@click.option("--prompt", help="UserPromptSubmit: the prompt.")
@click.option("--session", default="bank-hook-debug", show_default=True, help="The session id.")
@click.option("--stdin", "from_stdin", is_flag=True, help="Read the whole payload as JSON on stdin.")
@click.option(
    "--record",
    is_flag=True,
    help="Act as the agent's call would: claim lessons, write the ledger and checks, capture.",
)
@click.pass_context
def hook(
    ctx: click.Context,
    event: str,
    command: str | None,
    file_path: str | None,
    prompt: str | None,
    session: str,
    from_stdin: bool,
    record: bool,
) -> None:
    """Run one hook event here and print its answer; a dry run unless --record (errors are shown)."""
    import json

    from lessonbank import config
    from lessonbank.hooks import dispatch
    from lessonbank.state import statedir

    root = _hook_root(ctx)
    # bank.toml read as the installed hook reads it: a broken file warns and the defaults apply.
    problem = config.lenient(statedir.read_text(str(root / statedir.MARKER)))[1]
    if problem:
        click.echo(f"warning: {problem}", err=True)
    if from_stdin:
        raw = sys.stdin.read()
    else:
        payload: dict[str, Any] = {
            "session_id": session,
            "cwd": str(root),
            "hook_event_name": event,
            "tool_use_id": "toolu_debug",
        }
        if command is not None:
            payload.update(tool_name="Bash", tool_input={"command": command})
        elif file_path is not None:
            payload.update(tool_name="Edit", tool_input={"file_path": file_path})
        if prompt is not None:
            payload["prompt"] = prompt
        if event == "SessionStart":
            payload["source"] = "startup"
        raw = json.dumps(payload)
    statedir.READ_ONLY = not record
    try:
        out = dispatch.handle(raw.encode("utf-8"), raise_errors=True)
    except Exception as exc:
        raise click.ClickException(f"the {event} hook failed: {type(exc).__name__}: {exc}") from None
    finally:
        statedir.READ_ONLY = False
    if not out:
        click.echo("(no output)")
        return
    click.echo(json.dumps(json.loads(out), indent=2, ensure_ascii=False))
