"""The other layers: `bank remote add|list|remove` and `bank pull` (the team banks this user
follows, bank.remotes), and what `bank list --all` and `bank capture --to` do there."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TYPE_CHECKING

import click

from lessonbank.bank.store import Bank
from lessonbank.cli import get_bank, main
from lessonbank.cli.output import emit_json, keep_row, table, warn_problems
from lessonbank.errors import BankError

if TYPE_CHECKING:
    from lessonbank.capture.draft import Draft


@main.group()
def remote() -> None:
    """Follow team banks (git repositories holding a bank): add, list, remove."""


@remote.command("add")
@click.argument("name")
@click.argument("url")
@click.option("--branch", help="The branch to follow (default: the repository's default branch).")
@click.option("--dry-run", is_flag=True, help="Show what would be cloned; write nothing.")
def remote_add(name: str, url: str, branch: str | None, dry_run: bool) -> None:
    """Clone the team bank at URL under your data folder; its lessons reach every project's hooks."""
    from lessonbank.bank import remotes

    try:
        path, tracked = remotes.add(name, url, branch, dry_run=dry_run)
    except BankError as err:
        raise click.ClickException(str(err)) from None
    verb = "would clone" if dry_run else "cloned"
    click.echo(f"{verb} {url} ({tracked}) into {path}")
    if not dry_run:
        click.echo(f"team:{name} is a layer of every bank's hooks now; `bank pull` updates it")


@remote.command("list")
def remote_list() -> None:
    """List the team banks: name, URL, branch followed, the clone's state and folder."""
    from lessonbank.bank import remotes

    try:
        teams = remotes.registry()
        rows = [
            [name, entry["url"], entry["branch"], remotes.status(name), str(remotes.clone_path(name))]
            for name, entry in sorted(teams.items())
        ]
    except BankError as err:
        raise click.ClickException(str(err)) from None
    click.echo(table(["name", "url", "branch", "clone", "folder"], rows, max_width=80))


@remote.command("remove")
@click.argument("name")
@click.option("--force", is_flag=True, help="Delete the clone even when it holds work that is not pushed.")
@click.option("--dry-run", is_flag=True, help="Show what would be deleted; delete nothing.")
def remote_remove(name: str, force: bool, dry_run: bool) -> None:
    """Stop following a team bank and delete its clone (refused while it holds unpushed work)."""
    from lessonbank.bank import remotes

    try:
        path = remotes.remove(name, force=force, dry_run=dry_run)
    except BankError as err:
        raise click.ClickException(str(err)) from None
    click.echo(f"{'would remove' if dry_run else 'removed'} team:{name} and its clone {path}")


@main.command()
@click.argument("names", nargs=-1)
def pull(names: tuple[str, ...]) -> None:
    """Fetch the team banks and fast-forward their clones; a diverged or dirty clone is left as it is."""
    from lessonbank.bank import remotes

    try:
        results = remotes.pull(list(names) or None)
    except BankError as err:
        raise click.ClickException(str(err)) from None
    if not results:
        click.echo("no team banks: `bank remote add NAME URL` follows one")
        return
    from lessonbank.capture import target

    for result in results:
        click.echo(f"team:{result.name}: {result.message}")
        for leak in target.leaks(remotes.clone_path(result.name), result.changed):
            click.echo(
                f"team:{result.name}: warning: {leak} (the capture gates would have redacted it: "
                "fix it in the team repository)",
                err=True,
            )
    failed = [r.name for r in results if not r.ok]
    if failed:
        raise click.ClickException(f"{len(failed)} team bank(s) not updated: {', '.join(failed)}")


def capture_to(to: str, drafts: list[Draft], dry_run: bool) -> None:
    """Capture into the personal bank or a team bank's clone; say where, and for a team how to propose it."""
    from lessonbank.capture import target

    try:
        done = target.capture_to(to, drafts, dry_run=dry_run)
    except BankError as err:
        raise click.ClickException(str(err)) from None
    for line in done.lines:
        click.echo(f"{done.layer}: {line}")
    if done.branch and done.clone is not None:
        click.echo(f"committed on branch {done.branch} of {done.clone}")
        click.echo(f"propose it: git -C {done.clone} push origin {done.branch}  (then open a pull request there)")
    if done.refused:
        raise click.ClickException("\n".join(done.refused))


def list_layers(ctx: click.Context, tag: str | None, status: str | None, source: str | None, as_json: bool) -> None:
    """`bank list --all`: the project's lessons (when here is a bank), then each other layer's."""
    from lessonbank.index import layers

    banks: list[tuple[str, Bank]] = []
    with contextlib.suppress(click.ClickException):  # outside a project the other layers still list
        banks.append((layers.PROJECT, get_bank(ctx)))
    project_root = str(banks[0][1].root) if banks else None
    for layer, root in layers.other_layers(layers.data_dir()):
        if root != project_root:
            try:
                banks.append((layer, Bank.open(Path(root))))
            except BankError as err:
                click.echo(f"warning: skipped {layer}: {err}", err=True)
    from lessonbank.bank import catalog
    from lessonbank.bank.catalog import S_PRIORITY, S_SEEN, S_SLUG, S_SOURCE, S_STATUS, S_TITLE, S_TYPE

    rows: list[tuple[str, tuple]] = []
    for layer, bank in banks:
        rows.extend((layer, row) for row in catalog.summaries(bank) if keep_row(row, tag, status, source))
        warn_problems(bank)
    if as_json:
        fields = ("slug", "type", "seen", "priority", "status", "source", "title", "tags")
        emit_json([{"layer": layer, **dict(zip(fields, row, strict=True))} for layer, row in rows])
        return
    click.echo(
        table(
            ["layer", "slug", "type", "seen", "prio", "status", "source", "title"],
            [
                [layer, r[S_SLUG], r[S_TYPE], str(r[S_SEEN]), str(r[S_PRIORITY]), r[S_STATUS], r[S_SOURCE], r[S_TITLE]]
                for layer, r in rows
            ],
        )
    )
