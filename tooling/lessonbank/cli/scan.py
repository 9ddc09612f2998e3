"""`bank scan` and `bank review`: mine agent transcripts for fixed mistakes, then review the candidates."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import click

from lessonbank.cli import get_bank, main
from lessonbank.cli.output import emit_json, table
from lessonbank.cli.scan_report import candidate_json, report_json, summary
from lessonbank.errors import BankError, GateRefusal

if TYPE_CHECKING:  # the scanner is imported when a scan command runs, not with every `bank` command
    from lessonbank.bank.store import Bank
    from lessonbank.scan.candidates import Store
    from lessonbank.scan.events import Candidate

PROGRESS_BYTES = 32 << 20  # show a progress bar when a scan has more than this to read
DEMO_TRANSCRIPTS = Path(__file__).resolve().parents[1] / "demo" / "transcripts"
DISTILL_WITH = click.option(
    "--distill-with", "distill_with", metavar="COMMAND", default=None,
    help="--distill with this headless agent command (the prompt is appended), e.g. 'claude -p'.",
)  # fmt: skip


@main.command()
@click.option("--path", "paths", multiple=True, type=click.Path(exists=True, path_type=Path),
              help="Scan this transcript file or folder instead (repeatable).")  # fmt: skip
@click.option("--all-projects", is_flag=True, help="Scan every project's transcripts, not only this bank's.")
@click.option("--accept-above", type=click.FloatRange(0.0, 1.01), default=None,
              help="Accept candidates at or above this confidence without asking (e.g. 0.8).")  # fmt: skip
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.option("--dry-run", is_flag=True, help="Show what would be found and accepted; write nothing.")
@click.option("--distill", is_flag=True, help="Ask your headless agent (--distill-with, your config.toml, else claude -p) for each new candidate's lesson.")
@DISTILL_WITH
@click.option("--compliance", is_flag=True,
              help="Print how many fixed checks came with a #lesson block, per agent and week; scan nothing.")  # fmt: skip
@click.option("--scheduled", is_flag=True, hidden=True,
              help="Run as the SessionStart hook's scheduled scan: honour scan.every and the mode.")  # fmt: skip
@click.pass_context
def scan(
    ctx: click.Context,
    paths: tuple[Path, ...],
    all_projects: bool,
    accept_above: float | None,
    as_json: bool,
    dry_run: bool,
    distill: bool, distill_with: str | None,
    compliance: bool,
    scheduled: bool,
) -> None:
    """Mine agent transcripts (Claude Code, Codex, Copilot CLI, Gemini CLI) for mistakes that were fixed; keep them for review."""
    from lessonbank.scan import sources
    from lessonbank.scan.candidates import Store, run_scan

    bank = get_bank(ctx)
    if compliance:
        _compliance(bank, as_json)
        return
    if scheduled and not _schedule(bank):
        return
    if not (dry_run or paths or all_projects or scheduled):
        _schedule(bank)  # a scan by hand counts: the next scheduled one waits a full period
    try:
        with Store(bank).locked(dry_run) as store:
            store.load()
            cache = store.state.setdefault("codex_cwd", {})
            files = sources.locate(bank.root, all_projects, paths, cache)
            total = sources.pending_bytes(files, store.state)
            if total > PROGRESS_BYTES and sys.stderr.isatty() and not as_json:
                with click.progressbar(length=total, label="scanning", file=sys.stderr) as bar:
                    report = run_scan(bank, files, store, accept_above, dry_run, bar.update)
            else:
                report = run_scan(bank, files, store, accept_above, dry_run)
    except BankError as err:
        raise click.ClickException(str(err)) from None
    if (distill or distill_with) and not dry_run:
        fresh = [store.candidates[k] for k in report.new if k in store.candidates]
        _distill(bank, store, [c for c in fresh if c.status == "pending"], as_json, distill_with)
    if as_json:
        emit_json(report_json(report, store, dry_run))
        return
    if not files:
        click.echo(f"no transcripts found for {bank.root} (try --all-projects or --path)")
    stamp = f"{time.strftime('%Y-%m-%dT%H:%M:%S')} scheduled scan: " if scheduled else ""
    for line in summary(report, store, dry_run):
        click.echo(stamp + line)


def _compliance(bank: Bank, as_json: bool) -> None:
    """The #lesson protocol's record: fixed checks and those with a block, per agent and ISO week."""
    from lessonbank.scan import compliance
    from lessonbank.scan.candidates import scan_dir

    rows = compliance.table(scan_dir(bank))
    fixed, said = sum(r.fixed for r in rows), sum(r.with_block for r in rows)
    if as_json:
        emit_json({
            "rows": [{"agent": r.agent, "week": r.week, "fixed": r.fixed, "with_block": r.with_block} for r in rows],
            "total": {"fixed": fixed, "with_block": said},
        })  # fmt: skip
        return
    if not rows:
        click.echo("no fixed checks recorded yet: `bank scan` records them as it reads transcripts")
        return
    cells = [[r.agent, r.week, str(r.fixed), str(r.with_block), r.share] for r in rows]
    cells.append(["all", "", str(fixed), str(said), compliance.Row("all", "", fixed, said).share])
    click.echo(table(["agent", "week", "fixed checks", "with #lesson", "share"], cells))


def _schedule(bank: Bank) -> bool:
    """Set when the next scheduled scan is due (now + scan.every); False when it should not run now."""
    from lessonbank.config import period_seconds
    from lessonbank.state import statedir

    state_dir = str(bank.state_dir)
    every = period_seconds(bank.config.get("scan.every"))
    off = every is None or statedir.mode(state_dir) == "off"
    # Off: the hook asks again in a day, so turning scan.every back on needs no other step.
    statedir.postpone_scan(state_dir, time.time() + (86400.0 if off else every or 0.0))
    return not off


def _triggers(cand: Candidate) -> str:
    parts = [f"command `{c}`" for c in cand.commands] + [f"path {p}" for p in cand.paths]
    if cand.keywords:
        parts.append("keywords " + ", ".join(cand.keywords))
    return "; ".join(parts) or "none (recalled by its words only)"


def _verify(cand: Candidate) -> str:
    parts = [f"{key} {', '.join(f'`{v}`' for v in values)}" for key, values in sorted(cand.verify.items()) if values]
    return "; ".join(parts) or ("none from the evidence (accepting adds what its words name that the repository holds; "
                                "with none, groom waits until a person sets `verified: {by: <name>}`)")


def _distill(bank: Bank, store: Store, cands: list[Candidate], quiet: bool, given: str | None) -> None:
    """Hand each candidate to the configured headless agent; its answer waits for review like any."""
    import shlex

    from lessonbank.scan import agent
    from lessonbank.scan.candidates import short_id

    try:
        argv, source = agent.command(bank, given)
    except BankError as err:
        raise click.ClickException(str(err)) from None
    if not agent.available(argv):
        name = argv[0] if argv else "(none)"
        click.echo(f"distill: `{name}` not found; the candidates keep their mechanical lessons "
                   "(name one with --distill-with)", err=quiet)  # fmt: skip
        return
    if cands:
        click.echo(f"distill: running `{shlex.join(argv)} <prompt>` (from {source}) for {len(cands)} candidate(s)", err=True)
    for cand in cands:
        verdict = agent.distill(bank, cand, argv)
        if verdict.outcome == "failed":
            click.echo(f"distill {short_id(cand.key)} failed ({verdict.detail}); it keeps its mechanical lesson",
                       err=quiet)  # fmt: skip
            continue
        store.record(cand)
        said = "the agent found no lesson" if verdict.outcome == "no-lesson" else cand.title or cand.when[:72]
        click.echo(f"distilled {short_id(cand.key)}: {said}", err=quiet)


def describe(cand: Candidate, bank: Bank) -> list[str]:
    """A candidate as the reviewer sees it: the lesson it would write, then its evidence."""
    from lessonbank.scan.candidates import explain, short_id, weights

    lines = [
        f"{short_id(cand.key)}  {cand.kind}, tier {cand.tier}, seen in {len(cand.sessions)} session(s), "
        + explain(cand, weights(bank)),
    ]
    if cand.title:
        lines.append(f"  title: {cand.title}")
    lines += [
        f"  when: {cand.when}",
        f"  do:   {cand.do}",
        f"  triggers: {_triggers(cand)}",
        f"  verify: {_verify(cand)}",
        f"  promote-to: {cand.promote_to}",
    ]
    if cand.notes:
        lines.append(f"  the agent said: {cand.notes}")
    for item in cand.evidence[-2:]:
        lines.append(f"  evidence: session {item.get('session', '?')} at {item.get('time', '?')}")
        for label in ("failing", "passing", "rerun", "correction", "diagnosis", "summary"):
            if item.get(label):
                lines.append(f"    {label}: {item[label]}")
        for excerpt in item.get("excerpt", [])[:2]:
            lines.append(f"    error: {excerpt}")
    return lines


def _edit_in_editor(bank: Bank, cand: Candidate, editor: str) -> None:
    """Open the lesson the candidate would write in $EDITOR; read it back onto the candidate."""
    from dataclasses import fields, replace

    from lessonbank.bank.lesson import LessonContent, parse, render
    from lessonbank.capture.draft import to_lesson
    from lessonbank.scan.candidates import body, scan_dir, short_id

    path = scan_dir(bank) / f"edit-{short_id(cand.key)}.md"
    if not path.exists():  # an edit left by a review that stopped is taken up again, never overwritten
        lesson = to_lesson(replace(cand, body=body(cand)), set(), "", int(bank.config.get("capture.default_priority")))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(render(lesson), encoding="utf-8")
    click.edit(filename=str(path), editor=editor)
    try:
        edited = parse(path.read_text(encoding="utf-8"))
    except (ValueError, OSError) as exc:
        click.echo(f"cannot read the edited lesson ({exc}); it stays in {bank.relative(path)} for the next edit")
        return
    # What the reviewer edits: what the lesson says (bank.lesson's one list) but the scan's own source
    # and body, and its priority.
    said = [f.name for f in fields(LessonContent) if f.name not in ("source", "body")]
    for name in [*said, "priority"]:
        value = getattr(edited, name)
        setattr(cand, name, value.copy() if isinstance(value, (list, dict)) else value)
    path.unlink()


def _edit(cand: Candidate) -> None:
    cand.title = click.prompt("title", default=cand.title or " ").strip()
    cand.when = click.prompt("when", default=cand.when)
    cand.do = click.prompt("do", default=cand.do)
    cand.promote_to = click.prompt("promote-to", default=cand.promote_to)


@main.command()
@click.option("--list", "list_only", is_flag=True, help="Print the candidates without prompting.")
@click.option("--json", "as_json", is_flag=True, help="With --list: print them as JSON.")
@click.option("--dry-run", is_flag=True, help="Show what accepting would do; write nothing.")
@click.option("--distill", is_flag=True, help="First ask your headless agent (--distill-with, your config.toml, else claude -p) for each candidate's lesson.")
@DISTILL_WITH
@click.pass_context
def review(ctx: click.Context, list_only: bool, as_json: bool, dry_run: bool, distill: bool, distill_with: str | None) -> None:
    """Walk the scan's candidates one by one: accept (through the capture gates), edit, reject or skip."""
    from lessonbank.scan.candidates import Store, short_id

    bank = get_bank(ctx)
    try:
        store = Store(bank).load()
    except BankError as err:
        raise click.ClickException(str(err)) from None
    pending = store.pending()
    if (distill or distill_with) and not dry_run:
        _distill(bank, store, [c for c in pending if not c.signals.get("distilled")], as_json, distill_with)
        pending = store.pending()
    if as_json:
        emit_json([candidate_json(c) for c in pending])
        return
    if list_only:
        rows = [
            [short_id(c.key), f"{c.confidence:.2f}", str(c.priority), str(c.tier), c.kind,
             str(len(c.sessions)), c.when]
            for c in pending
        ]  # fmt: skip
        click.echo(table(["id", "conf", "prio", "tier", "kind", "seen", "when"], rows, max_width=72))
        return
    if not pending:
        click.echo("nothing waits for review (run `bank scan` first)")
        return
    counts = {"accepted": 0, "rejected": 0, "skipped": 0}
    written = {"written": 0, "repeats": 0}
    for index, cand in enumerate(pending, 1):
        if _review_one(bank, store, cand, f"[{index}/{len(pending)}]", dry_run, counts, written) == "quit":
            break
    line = ", ".join(f"{n} {k}" for k, n in counts.items())
    if written["repeats"]:  # say what was really written: a repeat only counts on a banked lesson
        line += f" ({written['written']} new lessons, {written['repeats']} repeats of banked ones)"
    click.echo(line)


def _review_one(
    bank: Bank, store: Store, cand: Candidate, label: str, dry_run: bool, counts: dict[str, int],
    written: dict[str, int],
) -> str:
    from lessonbank.scan.candidates import accept, short_id

    lines = describe(cand, bank)
    click.echo(f"{label} {lines[0]}")
    for line in lines[1:]:
        click.echo(line)
    while True:
        choice = click.prompt(
            "[a]ccept, [e]dit, [r]eject, [s]kip, [q]uit",
            type=click.Choice(["a", "e", "r", "s", "q"]),
            show_choices=False,
            default="s",
        )
        if choice == "e":
            editor = os.environ.get("VISUAL") or os.environ.get("EDITOR")
            if editor:
                _edit_in_editor(bank, cand, editor)
            else:
                _edit(cand)
            cand.signals.pop("needs_words", None)  # a person wrote (or kept) the instruction
            if not dry_run:
                store.record(cand)  # kept now: quitting the review loses no edit
            for line in describe(cand, bank)[1:6]:
                click.echo(line)
            continue
        if choice == "a" and cand.signals.get("needs_words"):
            click.echo("this candidate has no instruction yet: [e]dit it (or `bank review --distill`) before accepting")
            continue
        if choice == "a":
            try:
                outcomes = accept(bank, cand, dry_run=dry_run)
            except GateRefusal as refusal:
                click.echo(str(refusal))
                continue  # edit it, reject it or skip it
            for outcome in outcomes:
                for line in outcome.lines():
                    click.echo(line)
            counts["accepted"] += 1
            written["written" if outcomes[0].action not in ("bump", "unchanged") else "repeats"] += 1
        elif choice == "r":
            click.echo(f"rejected {short_id(cand.key)}: it will not be proposed again")
            counts["rejected"] += 1
        elif choice == "s":
            counts["skipped"] += 1
        if choice in "ar" and not dry_run:
            store.record(cand, rejected=choice == "r")
        return "quit" if choice == "q" else "next"
