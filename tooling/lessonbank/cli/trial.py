"""`bank on`, `bank off`, `bank test`, `bank trial status|report|reset|export|analyze` and `bank ledger`."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from lessonbank.bank.store import Bank, write_atomic
from lessonbank.cli import get_bank, main
from lessonbank.cli.output import emit_json
from lessonbank.errors import BankError
from lessonbank.trial import chart, ledger, report, stats, turns

T = TypeVar("T")
MEANING = {
    "on": "lessons are learned and injected (the default)",
    "off": "from the next hook call nothing is injected, nothing is learned and no agent is nudged",
    "test": "each new session goes to the with or the without arm; without gets no lessons, only a log",
}
PLANNED_HELP = f"Sessions in each arm before the verdict (at least {stats.MIN_PLANNED}; default {stats.DEFAULT_PLANNED})."


def _set_mode(ctx: click.Context, mode: str, dry_run: bool, size: int | None = None) -> None:
    bank = get_bank(ctx)
    before = ledger.read_mode(bank)
    running = ledger.running(bank)
    written = _call(ledger.set_mode, bank, mode, dry_run, size)
    for rel, action in written:
        click.echo(f"{action:9} {rel}")
    click.echo(
        f"mode: {mode} (was {before}): {MEANING[mode]}" + (" (dry run: nothing written)" if dry_run else "")
    )
    if mode != "test":
        return
    if running:
        assigned = len(turns.assignments(bank))
        click.echo(
            f"trial: resuming, planned {ledger.planned(bank)} sessions in each arm, {assigned} sessions "
            "assigned so far; `bank trial status` shows how far it is"
        )
        return
    chosen = stats.DEFAULT_PLANNED if size is None else size
    click.echo(
        f"trial: started, planned {chosen} sessions in each arm; a fresh random seed (kept in "
        f".lessonbank/trial/settings, not shown) and blocks of 2, 4 or 6 sessions"
    )
    for line in report.power_lines(chosen):
        click.echo(line)


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
@click.option("--planned", "size", type=int, help=PLANNED_HELP)
@click.option("--dry-run", is_flag=True, help="Say what would change; write nothing.")
@click.pass_context
def test_command(ctx: click.Context, size: int | None, dry_run: bool) -> None:
    """Run the on/off trial: each new session goes at random to a with or a without arm."""
    _set_mode(ctx, "test", dry_run, size)


@main.group()
def trial() -> None:
    """The on/off trial: its verdict under a rule fixed in advance, reset, export and offline analysis."""


def _call(function: Callable[..., T], *args: Any) -> T:
    """A call into the trial; its BankError becomes the CLI's error message."""
    try:
        return function(*args)
    except BankError as exc:
        raise click.ClickException(str(exc)) from None


def _judge(ctx: click.Context, lessons: bool = True) -> tuple[Bank, stats.Verdict, list[stats.Session]]:
    bank = get_bank(ctx)
    verdict, sessions = _call(ledger.judge, bank, None, lessons)
    return bank, verdict, sessions


@trial.command()
@click.pass_context
def status(ctx: click.Context) -> None:
    """Two lines: the mode, and how far the trial is (or its verdict)."""
    bank, verdict, _ = _judge(ctx, lessons=False)
    click.echo(f"mode: {ledger.read_mode(bank)}")
    click.echo(report.status_line(verdict))


@trial.command("report")
@click.option(
    "--chart", "chart_path", type=click.Path(dir_okay=False, path_type=Path), help="Write an SVG chart here."
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option("--dry-run", is_flag=True, help="Do not write the chart; say what would be written.")
@click.pass_context
def report_command(ctx: click.Context, chart_path: Path | None, as_json: bool, dry_run: bool) -> None:
    """The rule, the verdict, the estimate with its interval, and the per-lesson harm tests."""
    if chart_path is not None and chart_path.suffix.lower() != ".svg":
        raise click.BadParameter(
            "only SVG charts are written (no image library is a dependency); give a path ending in .svg",
            param_hint="--chart",
        )
    bank, verdict, sessions = _judge(ctx)
    action = None
    if chart_path is not None:
        svg = chart.svg(verdict, stats.running(sessions, verdict.planned))
        action = _call(write_atomic, chart_path, svg, dry_run)
    if as_json:
        data = report.verdict_json(verdict)
        data["mode"] = ledger.read_mode(bank)
        data["chart"] = {"path": str(chart_path), "action": action} if chart_path is not None else None
        emit_json(data)
        return
    click.echo(f"mode: {ledger.read_mode(bank)}")
    for line in report.report_lines(verdict):
        click.echo(line)
    if chart_path is not None:
        click.echo(f"{action:9} {chart_path}" + (" (dry run: nothing written)" if dry_run else ""))


@trial.command()
@click.option("--planned", "size", type=int, help=PLANNED_HELP + " Default: the running trial's.")
@click.option("--dry-run", is_flag=True, help="Say what would change; write nothing.")
@click.pass_context
def reset(ctx: click.Context, size: int | None, dry_run: bool) -> None:
    """Archive the running trial and start a new one with a fresh seed (the log keeps both)."""
    bank = get_bank(ctx)
    done = _call(ledger.reset_trial, bank, size, dry_run)
    for rel, action in done:
        click.echo(f"{action:9} {rel}")
    chosen = ledger.planned(bank) if not dry_run else (size or ledger.planned(bank))
    click.echo(
        f"trial: a new trial, planned {chosen} sessions in each arm, with a fresh seed; mode: {ledger.read_mode(bank)}"
        + (" (dry run: nothing written)" if dry_run else "")
    )
    if ledger.read_mode(bank) != "test":
        click.echo("(sessions are assigned only in test mode: `bank test` runs it)")


@trial.command()
@click.option(
    "--json", "as_json", is_flag=True, help="One JSON document with the planned size, not JSON lines."
)
@click.pass_context
def export(ctx: click.Context, as_json: bool) -> None:
    """The trial's per-turn records, one JSON object a line, for `bank trial analyze`."""
    bank = get_bank(ctx)
    rows = _call(turns.trial_records, bank)
    if as_json:
        emit_json({"planned": ledger.planned(bank), "records": [r.to_json() for r in rows]})
        return
    for row in rows:
        click.echo(json.dumps(row.to_json(), ensure_ascii=False))


@trial.command()
@click.argument("file", type=click.Path(dir_okay=False, allow_dash=True, path_type=Path))
@click.option(
    "--planned", "size", type=int, help="Sessions in each arm for the verdict (overrides the file's)."
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def analyze(file: Path, size: int | None, as_json: bool) -> None:
    """Analyse exported records (FILE, or - for stdin) with the same rule and code as `bank trial report`."""
    try:
        text = sys.stdin.read() if str(file) == "-" else file.read_text(encoding="utf-8")
    except OSError as exc:
        raise click.ClickException(f"cannot read {file}: {exc.strerror}") from None
    try:
        rows, carried = turns.parse_records(text, str(file))
        chosen = ledger.check_planned(size if size is not None else carried or stats.DEFAULT_PLANNED)
    except BankError as exc:
        raise click.ClickException(str(exc)) from None
    verdict = stats.decide(stats.sessions_of(rows), chosen)
    if as_json:
        emit_json(report.verdict_json(verdict))
        return
    for line in report.report_lines(verdict):
        click.echo(line)


@main.command("ledger")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@click.pass_context
def ledger_command(ctx: click.Context, as_json: bool) -> None:
    """What the hooks put in front of the agent: per lesson, per session, estimated tokens, never-fired."""
    summary = _call(ledger.summarise, get_bank(ctx))
    if as_json:
        emit_json(ledger.summary_json(summary))
        return
    for line in ledger.summary_lines(summary):
        click.echo(line)
