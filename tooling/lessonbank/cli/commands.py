"""The bank's own commands: init, add, capture, list, show, forget, check, stats, index, config.

Each command imports what only it uses (capture the gates, index the jinja2 renderer) in its body:
`bank list` reads the lessons and nothing more.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from lessonbank.bank import fields
from lessonbank.bank.catalog import S_PRIORITY, S_SEEN, S_SLUG, S_SOURCE, S_STATUS, S_TAGS, S_TITLE, S_TYPE
from lessonbank.bank.store import Bank
from lessonbank.cli import get_bank, main
from lessonbank.cli.output import emit_json, keep_row, table, table_of_columns, warn_problems
from lessonbank.errors import BankError, GateRefusal

if TYPE_CHECKING:
    from lessonbank.bank.lesson import Lesson
    from lessonbank.capture import pipeline
    from lessonbank.capture.draft import Draft


def _fail(err: BankError) -> click.ClickException:
    return click.ClickException(str(err))


@main.command()
@click.argument("path", required=False, type=click.Path(file_okay=False, path_type=Path))
@click.option("--ci", is_flag=True, help="Also write a weekly `bank groom` GitHub Actions workflow.")
@click.option("--personal", is_flag=True, help="Set up your personal bank (in your data folder) instead.")
@click.option("--dry-run", is_flag=True, help="Show what would be written; write nothing.")
def init(path: Path | None, ci: bool, personal: bool, dry_run: bool) -> None:
    """Set up a bank in PATH (default: here); never overwrites an existing file."""
    from lessonbank.bank import scaffold

    if personal and (path or ci):
        raise click.UsageError("--personal sets up the bank in your data folder: give no PATH and no --ci")
    if personal:
        from lessonbank.bank import remotes
        from lessonbank.index import layers

        try:
            path = Path(layers.personal_root(str(remotes.data_dir())))
        except BankError as err:
            raise _fail(err) from None
    root = (path or Path.cwd()).resolve()
    try:
        results = scaffold.init(root, ci=ci, dry_run=dry_run)
    except BankError as err:
        raise _fail(err) from None
    for rel, action in results:
        click.echo(f"{action:9} {rel}")
    if ci and not scaffold.install_source(root):
        click.echo(
            f"note: {scaffold.WORKFLOW} installs `lessonbank`, which is not on PyPI: {scaffold.install_hint()}, "
            "then delete the workflow and run `bank init --ci` again (or edit its Install step)"
        )
    click.echo(f"bank ready at {root}" + (" (dry run: nothing written)" if dry_run else ""))


def _print_outcome(outcome: pipeline.Outcome) -> None:
    for line in outcome.lines():
        click.echo(line)


@main.command()
@click.argument("text")
@click.option("--promote-to", required=True, help="rule:<name>, skill:<name> or doc:<path>.")
@click.option("--session", help="The session this was learned in.")
@click.option("--priority", type=click.IntRange(1, 10), help="1-10, higher first.")
@click.option("--dry-run", is_flag=True, help="Show the decision; write nothing.")
@click.pass_context
def add(ctx: click.Context, text: str, promote_to: str, session: str | None, priority: int | None,
        dry_run: bool) -> None:  # fmt: skip
    """Add a typed lesson: "<situation> => <what to do>"; tags and keywords come from its words."""
    from lessonbank.capture.draft import Draft, derive_tags

    when, sep, do = text.partition("=>")
    if not sep or not when.strip() or not do.strip():
        raise click.UsageError('write the lesson as "<situation> => <what to do>"')
    tags = derive_tags(text)
    tools = [t.partition(":")[2] for t in tags if t.startswith("tool:")]
    draft = Draft(
        when=when.strip(), do=do.strip(), promote_to=promote_to, tags=tags, session=session,
        tools=["Bash"] if tools else [], commands=[rf"\b{t}\b" for t in tools], priority=priority,
    )  # fmt: skip
    _run_capture(get_bank(ctx), [draft], dry_run)


def _run_capture(bank: Bank, drafts: list[Draft], dry_run: bool, pending: bool = False) -> None:
    """Capture each draft; refusals are listed at the end (exit 1), any other error stops at once.

    With `pending` the drafts were taken from the Stop hook's pending blocks: a refusal names the
    draft, and the taken blocks are dropped once every draft went through the gates (on an error
    the rest stay pending for the next run: nothing is lost).
    """
    from lessonbank.capture import gates, pipeline

    refused = []
    for draft in drafts:
        try:
            _print_outcome(pipeline.capture(bank, draft, dry_run=dry_run))
        except GateRefusal as err:
            if pending:  # name the draft, as the gates wrote it: redacted, never the raw text
                shown, _ = gates.scrub_draft(draft)
                refused.append(f"{err} (when: {shown.when!r}; do: {shown.do!r})")
            else:
                refused.append(str(err))
        except BankError as err:
            raise _fail(err) from None
    if pending:
        pipeline.drop_taken(bank)
    if refused:
        raise click.ClickException("\n".join(refused))


@main.command()
@click.option("--when", "when", help="The situation, completing 'When …'.")
@click.option("--do", "do", help="What to do in it.")
@click.option("--promote-to", default="", help="rule:<name>, skill:<name> or doc:<path>.")
@click.option("--title", default="", help="One line naming the lesson (default: from --when).")
@click.option("--type", "type_", type=click.Choice(fields.TYPES), default="gotcha", show_default=True)
@click.option("--tags", default="", help="Comma-separated category:value tags.")
@click.option("--keywords", default="", help="Comma-separated words for prompt recall.")
@click.option("--trigger-tool", "tools", multiple=True, help="A tool name (Bash, Edit, …); repeatable.")
@click.option("--trigger-command", "commands", multiple=True, help="A command regex; repeatable.")
@click.option("--trigger-path", "paths", multiple=True, help="A path glob; repeatable.")
@click.option("--body", default="", help="Free markdown: the story, the evidence, links.")
@click.option("--session", help="The session this was learned in (a repeat counts once per session).")
@click.option("--priority", type=click.IntRange(1, 10))
@click.option("--confidence", type=click.FloatRange(0, 1))
@click.option("--source", type=click.Choice(fields.SOURCES), default="typed", show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Read one lesson as a JSON object on stdin.")
@click.option("--blocks", is_flag=True, help="Read `#lesson … #/lesson` blocks on stdin.")
@click.option("--pending", is_flag=True, help="Save the blocks the Stop hook could not save.")
@click.option("--to", "to", help="personal, or team:NAME (on a new branch of its clone, for a pull request).")
@click.option("--dry-run", is_flag=True, help="Show the decision; write nothing.")
@click.pass_context
def capture(
    ctx: click.Context, as_json: bool, blocks: bool, pending: bool, to: str | None, dry_run: bool, **fields: Any
) -> None:
    """Add a lesson through the gates (flags, --json or --blocks on stdin); a repeat bumps seen."""
    from lessonbank.capture import pipeline
    from lessonbank.capture.draft import Draft, draft_from_json, parse_lesson_blocks, split_list

    if sum((as_json, blocks, pending)) > 1:
        raise click.UsageError("--json, --blocks and --pending are different inputs: use one")
    if pending and to:
        raise click.UsageError("--pending saves the project's pending blocks into the project: drop --to")
    bank = get_bank(ctx) if not to else None
    if pending:
        assert bank is not None
        if dry_run:
            raise click.UsageError("--pending takes the pending blocks away: run it without --dry-run")
        drafts = pipeline.take_pending(bank)
        if not drafts:
            click.echo("no pending lesson blocks")
            return
        _run_capture(bank, drafts, dry_run=False, pending=True)
        return
    if as_json:
        try:
            drafts = [draft_from_json(sys.stdin.read(), fields["session"])]
        except BankError as err:
            raise _fail(err) from None
    elif blocks:
        drafts = parse_lesson_blocks(sys.stdin.read())
        if not drafts:
            raise click.ClickException("no `#lesson … #/lesson` block on stdin")
        for draft in drafts:
            draft.session = fields["session"]
    else:
        if not fields["when"] or not fields["do"]:
            raise click.UsageError("give --when and --do (or --json / --blocks on stdin)")
        drafts = [
            Draft(
                when=fields["when"], do=fields["do"], promote_to=fields["promote_to"],
                title=fields["title"], type=fields["type_"], tools=list(fields["tools"]),
                commands=list(fields["commands"]), paths=list(fields["paths"]),
                tags=split_list(fields["tags"]),
                keywords=split_list(fields["keywords"]), session=fields["session"],
                source=fields["source"], priority=fields["priority"], confidence=fields["confidence"],
                body=fields["body"],
            )
        ]  # fmt: skip
    if to:
        from lessonbank.cli.layers import capture_to

        capture_to(to, drafts, dry_run)
        return
    assert bank is not None
    _run_capture(bank, drafts, dry_run)


@main.command("list")
@click.option("--tag", help="Only lessons with this tag (category:value, or a bare value).")
@click.option("--status", type=click.Choice(fields.STATUSES))
@click.option("--source", type=click.Choice(fields.SOURCES))
@click.option("--all", "all_layers", is_flag=True, help="Also the personal and team banks' lessons, with a layer column.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")
@click.pass_context
def list_(
    ctx: click.Context, tag: str | None, status: str | None, source: str | None, all_layers: bool, as_json: bool
) -> None:
    """List the lessons as a table."""
    if all_layers:
        from lessonbank.cli.layers import list_layers

        list_layers(ctx, tag, status, source, as_json)
        return
    bank = get_bank(ctx)
    filtered = tag or status or source
    if as_json:
        items = [x.lesson for x in bank.load()]
        rows_of = [(x.slug, x.type, x.seen, x.priority, x.status, x.source, x.title, x.tags) for x in items]
        warn_problems(bank)
        emit_json([_summary_json(items[i]) for i, row in enumerate(rows_of) if not filtered or keep_row(row, tag, status, source)])
        return
    # The table needs only the lessons' summaries, which the derived cache holds apart, by field.
    from lessonbank.bank import catalog

    if filtered:
        kept = [row for row in catalog.summaries(bank) if keep_row(row, tag, status, source)]
        columns = [list(column) for column in zip(*kept, strict=True)] if kept else [[] for _ in range(S_TAGS + 1)]
    else:
        columns = catalog.summary_columns(bank, tags=False)
    warn_problems(bank)
    cells = [columns[S_SLUG], columns[S_TYPE], list(map(str, columns[S_SEEN])), list(map(str, columns[S_PRIORITY])),
             columns[S_STATUS], columns[S_SOURCE], columns[S_TITLE]]  # fmt: skip
    click.echo(table_of_columns(["slug", "type", "seen", "prio", "status", "source", "title"], cells))


def _summary_json(x: Lesson) -> dict[str, Any]:
    data = x.to_mapping()
    data["body"] = x.body
    return data


@main.command()
@click.argument("key")
@click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")
@click.pass_context
def show(ctx: click.Context, key: str, as_json: bool) -> None:
    """Show one lesson by slug or id."""
    bank = get_bank(ctx)
    try:
        item = bank.find_lesson(key)
    except BankError as err:
        raise _fail(err) from None
    if as_json:
        emit_json(_summary_json(item.lesson))
    else:
        click.echo(f"{bank.relative(item.path)}\n")
        click.echo(item.text, nl=False)


@main.command()
@click.argument("key")
@click.option("--dry-run", is_flag=True, help="Show what would be deleted.")
@click.option("--force", is_flag=True, help="Delete even what git could not give back (never committed, or edited since).")
@click.pass_context
def forget(ctx: click.Context, key: str, dry_run: bool, force: bool) -> None:
    """Delete a lesson by slug or id (git keeps its history) and regenerate the index."""
    from lessonbank.bank import render
    from lessonbank.bank.git import unrecoverable
    from lessonbank.bank.store import remove

    bank = get_bank(ctx)
    try:
        with bank.lock():
            item = bank.find_lesson(key)
            why = None if force else unrecoverable(item.path)
            if why:
                raise click.ClickException(
                    f"{bank.relative(item.path)}: {why}, so git could not give it back; "
                    "commit it first, or pass --force to delete it anyway"
                )
            remove(item.path, dry_run=dry_run)
            if not dry_run:
                render.regenerate(bank)
    except BankError as err:
        raise _fail(err) from None
    click.echo(f"{'would delete' if dry_run else 'deleted'} {bank.relative(item.path)}")


@main.command()
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "github"]),
    default="text",
    show_default=True,
    help="github: one `::error file=…,line=…::…` annotation per problem, for GitHub Actions.",
)
@click.pass_context
def check(ctx: click.Context, fmt: str) -> None:
    """Validate every lesson; print each problem as path:line: message and exit 1 if any."""
    from lessonbank.bank import catalog

    bank = get_bank(ctx)
    problems, count = catalog.check(bank)
    for problem in problems:
        where = bank.relative(problem.path)
        if fmt == "github":
            text = problem.message.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
            click.echo(f"::error file={where},line={problem.line}::{text}")
        else:
            click.echo(f"{where}:{problem.line}: {problem.message}")
    if problems:
        raise click.ClickException(f"{len(problems)} problem(s) in {count} lesson file(s)")
    click.echo(f"ok: {count} lesson file(s), no problems")


@main.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")
@click.pass_context
def stats(ctx: click.Context, as_json: bool) -> None:
    """Counts by status, source, type and tag, and how many lessons groom would consider."""
    from lessonbank.bank import catalog

    bank = get_bank(ctx)
    items = catalog.summaries(bank)
    min_seen = bank.config.get("groom.min_seen")
    data: dict[str, Any] = {
        "lessons": len(items),
        "malformed": len(bank.load_problems),
        "status": dict(sorted(Counter(x[S_STATUS] for x in items).items())),
        "source": dict(sorted(Counter(x[S_SOURCE] for x in items).items())),
        "type": dict(sorted(Counter(x[S_TYPE] for x in items).items())),
        "tags": dict(sorted(Counter(t for x in items for t in x[S_TAGS]).items())),
        "seen_total": sum(x[S_SEEN] for x in items),
        f"groom_eligible (seen >= {min_seen})": sum(1 for x in items if x[S_SEEN] >= min_seen),
    }
    if as_json:
        emit_json(data)
        return
    for key, value in data.items():
        if isinstance(value, dict):
            shown = ", ".join(f"{k} {v}" for k, v in value.items()) or "-"
            click.echo(f"{key}: {shown}")
        else:
            click.echo(f"{key}: {value}")


@main.command("index")
@click.option("--check", "check_only", is_flag=True, help="Exit 1 naming each stale generated file.")
@click.option("--dry-run", is_flag=True, help="Show what would change; write nothing.")
@click.pass_context
def index_cmd(ctx: click.Context, check_only: bool, dry_run: bool) -> None:
    """Regenerate INDEX.md, BANK.md and the hooks' compiled index from lessons/."""
    from lessonbank.bank import render

    bank = get_bank(ctx)
    try:
        if check_only:
            names = render.stale(bank)
            warn_problems(bank)
            if names:
                raise click.ClickException(
                    "stale: " + ", ".join(names) + " (run `bank index` and commit the result)"
                )
            click.echo("up to date: " + ", ".join(render.GENERATED))
            return
        results = render.regenerate(bank, dry_run=dry_run)
    except BankError as err:
        raise _fail(err) from None
    warn_problems(bank)
    for name, action in results:
        click.echo(f"{action:9} {name}")


@main.command("config")
@click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")
@click.pass_context
def config_cmd(ctx: click.Context, as_json: bool) -> None:
    """Print the effective settings (defaults overlaid by bank.toml)."""
    bank = get_bank(ctx)
    items = bank.config.items()
    if as_json:
        emit_json({key: value for key, value, _ in items})
        return
    click.echo(f"# {bank.relative(bank.root / 'bank.toml')}")
    import json

    click.echo(table(["key", "value", "meaning"], [[k, json.dumps(v), m] for k, v, m in items]))
