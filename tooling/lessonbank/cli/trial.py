"""`bank on`, `bank off`, `bank test`, `bank trial status|report` and `bank ledger`."""

from __future__ import annotations

from pathlib import Path

import click

from lessonbank.bank.store import write_atomic
from lessonbank.cli import get_bank, main
from lessonbank.cli.output import emit_json
from lessonbank.errors import BankError
from lessonbank.kernel import arms
from lessonbank.trial import chart, ledger, stats, turns

MEANING = {
    "on": "lessons are learned and injected (the default)",
    "off": "from the next hook call nothing is injected, nothing is learned and no agent is nudged",
    "test": "each turn a lesson fits goes to the with or the without arm; without gets nothing, only a log",
}


def _set_mode(ctx: click.Context, mode: str, dry_run: bool) -> None:
    bank = get_bank(ctx)
    before = ledger.read_mode(bank)
    try:
        written = ledger.set_mode(bank, mode, dry_run)
    except BankError as exc:
        raise click.ClickException(str(exc)) from None
    for rel, action in written:
        click.echo(f"{action:9} {rel}")
    click.echo(
        f"mode: {mode} (was {before}): {MEANING[mode]}" + (" (dry run: nothing written)" if dry_run else "")
    )
    if mode == "test":
        seed, size = arms.read_settings(str(turns.trial_dir(bank)))
        assigned = len(turns.assignments(bank))
        if dry_run and not assigned:
            seed, size = int(bank.config.get("trial.seed")), int(bank.config.get("trial.block_size"))
        click.echo(
            f"trial: seed {seed}, permuted blocks of {arms.block_size(size)}; "
            + (f"resuming with {assigned} turns already assigned" if assigned else "no turns assigned yet")
            + "; `bank trial status` shows the verdict so far"
        )


@main.command("on")
@click.option("--dry-run", is_flag=True, help="Say what would change; write nothing.")
@click.pass_context
def on_command(ctx: click.Context, dry_run: bool) -> None:
    """Learn and inject lessons (the default mode)."""
    _set_mode(ctx, "on", dry_run)


@main.command("off")
@click.option("--dry-run", is_flag=True, help="Say what would change; write nothing.")
@click.pass_context
def off_command(ctx: click.Context, dry_run: bool) -> None:
    """Inject nothing, learn nothing, nudge no agent, from the hooks' next call."""
    _set_mode(ctx, "off", dry_run)


@main.command("test")
@click.option("--dry-run", is_flag=True, help="Say what would change; write nothing.")
@click.pass_context
def test_command(ctx: click.Context, dry_run: bool) -> None:
    """Run the on/off trial: turns a lesson fits go at random to a with or a without arm."""
    _set_mode(ctx, "test", dry_run)


@main.group()
def trial() -> None:
    """The on/off trial's verdict, under a rule fixed in advance."""


@trial.command()
@click.pass_context
def status(ctx: click.Context) -> None:
    """One line: the mode, and the verdict so far."""
    bank = get_bank(ctx)
    try:
        result, _ = ledger.judge(bank, permutations=0)  # one line needs no permutation test
    except BankError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"mode: {ledger.read_mode(bank)}")
    click.echo(stats.status_line(result))


@trial.command()
@click.option(
    "--chart", "chart_path", type=click.Path(dir_okay=False, path_type=Path), help="Write an SVG chart here."
)
@click.option("--json", "as_json", is_flag=True, help="Print the verdict as JSON.")
@click.option("--dry-run", is_flag=True, help="Do not write the chart; say what would be written.")
@click.pass_context
def report(ctx: click.Context, chart_path: Path | None, as_json: bool, dry_run: bool) -> None:
    """The rule, the verdict, the effect estimate with its interval, and per-lesson attribution."""
    if chart_path is not None and chart_path.suffix.lower() != ".svg":
        raise click.BadParameter(
            "only SVG charts are written (no image library is a dependency); give a path ending in .svg",
            param_hint="--chart",
        )
    bank = get_bank(ctx)
    try:
        result, judged = ledger.judge(bank)
        action = None
        if chart_path is not None:
            action = write_atomic(chart_path, chart.svg(result, stats.running(judged)), dry_run)
    except BankError as exc:
        raise click.ClickException(str(exc)) from None
    if as_json:
        data = stats.verdict_json(result)
        data["mode"] = ledger.read_mode(bank)
        data["chart"] = {"path": str(chart_path), "action": action} if chart_path is not None else None
        emit_json(data)
        return
    click.echo(f"mode: {ledger.read_mode(bank)}")
    for line in stats.report_lines(result):
        click.echo(line)
    if chart_path is not None:
        click.echo(f"{action:9} {chart_path}" + (" (dry run: nothing written)" if dry_run else ""))


@main.command("ledger")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@click.pass_context
def ledger_command(ctx: click.Context, as_json: bool) -> None:
    """What the hooks put in front of the agent: per lesson, per session, estimated tokens, never-fired."""
    bank = get_bank(ctx)
    try:
        summary = ledger.summarise(bank)
    except BankError as exc:
        raise click.ClickException(str(exc)) from None
    if as_json:
        emit_json(ledger.summary_json(summary))
        return
    for line in ledger.summary_lines(summary):
        click.echo(line)
