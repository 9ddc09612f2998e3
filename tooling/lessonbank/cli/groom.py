"""`bank groom`, `bank rules` and `bank schedule`: curation as a reviewable git change.

Each command imports what it uses in its body: `bank schedule` and `bank rules` load no gitpython,
no planner and no trial statistics.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from lessonbank.cli import get_bank, main
from lessonbank.cli.output import emit_json, table
from lessonbank.errors import BankError

if TYPE_CHECKING:
    from lessonbank.bank.git import GitRepo
    from lessonbank.bank.store import Bank
    from lessonbank.groom.plan import Plan


def _rows(plan: Plan) -> list[list[str]]:
    return [[d.slug, d.outcome, d.reason, destination] for d, destination in plan.ordered()]


def _summary(plan: Plan) -> str:
    from lessonbank.groom.decide import OUTCOMES

    return ", ".join(f"{outcome} {plan.count(outcome)}" for outcome in OUTCOMES)


@main.command()
@click.option("--dry-run", is_flag=True, help="Print the plan as a table; write nothing.")
@click.option("--commit", "do_commit", is_flag=True, help="Commit the result, listing what changed and why.")
@click.option(
    "--branch", metavar="NAME",
    help="Commit onto a new branch NAME, grooming HEAD in a temporary worktree (your checkout is not touched).",
)  # fmt: skip
@click.option("--allow-dirty", is_flag=True, help="Run even when the bank's files have uncommitted changes.")
@click.option("--run-commands", is_flag=True, help="Run each lesson's verify.command (never by default).")
@click.option("--timeout", type=click.FloatRange(min=0.1), help="Seconds per verify.command.")
@click.option(
    "--min-seen", type=click.IntRange(min=1), help="Sessions before a lesson counts (groom.min_seen)."
)
@click.option("--gather", metavar="TOOL", help="Send every lesson tagged tool:TOOL to skill:TOOL first.")
@click.option("--json", "as_json", is_flag=True, help="Print the decisions as JSON.")
@click.pass_context
def groom(ctx: click.Context, **opts: Any) -> None:
    """Re-verify lessons seen in two sessions; promote them into rules/skills/docs or delete stale ones.

    All or nothing: a failure or a kill leaves the checkout as it was (the next run rolls back or
    completes an interrupted groom).
    """
    from lessonbank.bank.git import GitRepo
    from lessonbank.groom import apply, transaction

    bank = get_bank(ctx)
    try:
        repo = GitRepo(bank.root)
        try:
            with transaction.exclusive(bank, repo) as notes:
                for note in notes:
                    click.echo(note, err=True)
                if opts["branch"]:
                    repo.check_new_branch(opts["branch"])
                    with apply.branch_worktree(bank, repo) as (wt_bank, wt_repo):
                        _groom(wt_bank, wt_repo, local=bank, **opts)
                    return
                _groom(bank, repo, local=bank, **opts)
        finally:
            repo.close()
    except BankError as err:
        raise click.ClickException(str(err)) from None


def _groom(
    bank: Bank, repo: GitRepo, local: Bank, dry_run: bool, do_commit: bool, branch: str | None,
    allow_dirty: bool, run_commands: bool, timeout: float | None, min_seen: int | None,
    gather: str | None, as_json: bool,
) -> None:  # fmt: skip
    from lessonbank.groom import apply
    from lessonbank.groom.plan import command_runner, commit_message, plan_groom
    from lessonbank.trial import ledger

    runner = None
    if run_commands:
        seconds = timeout if timeout is not None else float(bank.config.get("groom.command_timeout"))
        runner = command_runner(bank.root, seconds)
    plan = plan_groom(bank, repo, min_seen=min_seen, run_command=runner, gather=gather)
    for problem in bank.load_problems:
        click.echo(
            f"warning: skipped {bank.relative(problem.path)}:{problem.line}: {problem.message}", err=True
        )
    # On a branch the groom starts from HEAD in its own worktree: uncommitted files cannot mix in.
    if not dry_run and not allow_dirty and not branch:
        apply.refuse_if_dirty(bank, repo, plan)
    if as_json:
        emit_json([
            {"lesson": d.slug, "id": d.lesson_id, "decision": d.outcome, "reason": d.reason,
             "reasons": list(d.reasons), "destination": destination}
            for d, destination in plan.ordered()
        ])  # fmt: skip
    else:
        click.echo(table(["lesson", "decision", "reason", "destination"], _rows(plan), max_width=90))
        click.echo(_summary(plan))
    say = (lambda text: click.echo(text, err=True)) if as_json else click.echo
    # The trial and the ledger know which lessons do not help; a person decides what to do about it.
    # They are local state: read from the user's bank, also when the groom runs in a worktree.
    for slug, reason in sorted(ledger.flagged_lessons(local).items()):
        say(f"flagged: {slug}: {reason}")
    for tool, slugs in plan.offers:
        say(
            f"offer: {len(slugs)} lessons share tool:{tool} ({', '.join(slugs)}); "
            f"`bank groom --gather {tool}` sends them all to skill:{tool}"
        )
    if dry_run:
        _echo_dry(plan, say)
        return
    applied = apply.carry_out(bank, repo, plan, branch=branch, commit=do_commit)
    if applied.nothing:
        say("nothing to change" + ("; no branch created" if branch else ""))
        return
    for rel, action in applied.results:
        if action != "unchanged":
            say(f"{action:9} {rel}")
    if applied.sha:
        where = f" on branch {branch}" if branch else ""
        say(f"committed {applied.sha[:7]}{where}: {commit_message(plan).splitlines()[0]}")


def _echo_dry(plan: Plan, say: Callable[[str], None]) -> None:
    for rel in sorted(plan.writes):
        action = plan.writes[rel].action
        if action != "unchanged":
            say(f"would {action:6} {rel}")
    for rel in sorted(plan.edits):
        say(f"would update {rel}")
    for rel in sorted(plan.removals):
        say(f"would delete {rel}")
    say("dry run: nothing written")


@main.command()
@click.option(
    "--cursor/--no-cursor", default=None, help="Also write .cursor/rules/<name>.mdc (groom.cursor)."
)
@click.option("--dry-run", is_flag=True, help="Show what would change; write nothing.")
@click.pass_context
def rules(ctx: click.Context, cursor: bool | None, dry_run: bool) -> None:
    """Bring every agent's files in line with rules/: CLAUDE.md or .claude/rules, AGENTS.md, GEMINI.md, Copilot's, Cursor's."""
    from lessonbank.groom import rulesync

    bank = get_bank(ctx)
    try:
        results = rulesync.sync(bank, cursor=cursor, dry_run=dry_run)
    except BankError as err:
        raise click.ClickException(str(err)) from None
    for rel, action in results:
        click.echo(f"{action:9} {rel}")
    if not results:
        click.echo("no rules yet: nothing to write")
    if dry_run:
        click.echo("dry run: nothing written")


@main.command()
@click.pass_context
def schedule(ctx: click.Context) -> None:
    """Print the crontab line that grooms this bank weekly on a new branch."""
    from lessonbank.bank import scaffold

    bank = get_bank(ctx)
    click.echo(scaffold.crontab_line(Path(bank.root)))
