"""`bank demo`: a bundled example bank, built step by step in a fresh git repository.

It lives with the CLI because it strings together what every feature's command shows."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import click

from lessonbank.bank import git as gitrepo
from lessonbank.bank import scaffold
from lessonbank.bank.store import Bank
from lessonbank.capture.draft import Draft
from lessonbank.capture.pipeline import capture
from lessonbank.cli import main
from lessonbank.errors import BankError, GateRefusal

EXAMPLES = [
    Draft(
        title="pytest hangs when something under test waits for a TTY",
        when="running pytest in a non-interactive shell while code under test may open a pager or a prompt",
        do="run it with stdin from /dev/null and PAGER=cat, under a timeout, so a TTY wait fails fast",
        promote_to="rule:testing",
        tools=["Bash"],
        commands=[r"\bpytest\b(?!.*</dev/null)"],
        keywords=["pytest", "hang", "tty"],
        tags=["tool:pytest", "severity:hang"],
        priority=8,
        session="demo-session-1",
    ),
    Draft(
        title="git stash leaves untracked files behind",
        when="stashing work with git stash before switching branches",
        do="use git stash -u so new untracked files are stashed too",
        promote_to="rule:git",
        tools=["Bash"],
        commands=[r"\bgit\s+stash\b(?!.*(\s-u\b|--include-untracked))"],
        keywords=["stash", "untracked"],
        tags=["tool:git", "severity:data-loss"],
        priority=7,
        session="demo-session-1",
    ),
    Draft(
        title="Migrations must be generated, not hand-written",
        when="changing a model in app/models/ without a matching migration",
        do="run `make migration` and commit the generated file with the model change",
        promote_to="doc:docs/database.md",
        paths=["app/models/**/*.py"],
        keywords=["migration", "model", "schema"],
        tags=["area:database"],
        session="demo-session-1",
    ),
]


def _identity() -> Iterator[None]:
    """A fallback git identity for the demo's commits, for machines where none is configured."""
    fallback = {
        "GIT_AUTHOR_NAME": "lessonbank demo",
        "GIT_AUTHOR_EMAIL": "demo@lessonbank.invalid",
        "GIT_COMMITTER_NAME": "lessonbank demo",
        "GIT_COMMITTER_EMAIL": "demo@lessonbank.invalid",
    }
    added = [key for key in fallback if key not in os.environ]
    os.environ.update({key: fallback[key] for key in added})
    try:
        yield
    finally:
        for key in added:
            os.environ.pop(key, None)


def _project(root: Path) -> None:
    """A tiny project for the bank to live in: some code, a test, a doc."""
    files = {
        "app/models/user.py": "class User:\n    name: str\n",
        "tests/test_user.py": "from app.models.user import User\n\n\ndef test_user():\n    assert User\n",
        "docs/database.md": "# Database\n\nHow the schema evolves.\n",
        "Makefile": "migration:\n\techo generate a migration\n",
    }
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def step_bank(bank: Bank) -> Iterator[str]:
    """Capture through the gates: create, repeat, refuse, redact."""
    for draft in EXAMPLES:
        yield from capture(bank, draft).lines()
    repeat = Draft(
        when="pytest waits on a TTY in a non-interactive shell",
        do="give pytest stdin from /dev/null, with PAGER=cat and a timeout, so it fails fast",
        promote_to="rule:testing",
        session="demo-session-2",
    )
    yield from capture(bank, repeat).lines()
    yield from capture(bank, repeat).lines()
    for refused in (
        Draft(when="writing Python here", do="I prefer tabs over spaces", promote_to="rule:style"),
        Draft(when="deploying the demo app", do="push to the prod branch", promote_to=""),
    ):
        try:
            capture(bank, refused)
        except GateRefusal as exc:
            yield f"{exc.gate} gate: {exc}"
    secret = Draft(
        when="calling the billing API from a script",
        do="read the key from the environment; never paste sk_live_"
        + "4eC39HqLyjWDarjtT1zdp7dc"
        + " into code",
        promote_to="doc:docs/billing.md",
    )
    yield from capture(bank, secret).lines()
    from lessonbank.bank import render as generate

    stale = generate.stale(bank)
    yield "bank index --check: " + (
        "stale " + ", ".join(stale) if stale else "INDEX.md and BANK.md up to date"
    )
    rows = (bank.root / "INDEX.md").read_text(encoding="utf-8").count("\n| [")
    yield f"INDEX.md lists {rows} active lessons"


def step_hooks(bank: Bank) -> list[str]:
    from lessonbank.install import claude as install

    return install.demo_step(bank)


def step_scan(bank: Bank) -> list[str]:
    from lessonbank.cli import scan

    return scan.demo_step(bank)


def step_groom(bank: Bank) -> list[str]:
    from lessonbank.groom import apply as grooming

    return grooming.demo_step(bank)


def step_trial(bank: Bank) -> list[str]:
    from lessonbank.trial import simulate

    return simulate.demo_step(bank)


# Each feature adds a step: (title, function from the demo bank to printable lines).
STEPS: list[tuple[str, Callable[[Bank], Iterator[str] | list[str]]]] = [
    ("Capture through the gates", step_bank),
    ("Recall: the hooks, as Claude Code runs them", step_hooks),
    ("Scan: lessons from an old transcript", step_scan),
    ("Groom: a lesson seen in two sessions graduates into a rule", step_groom),
    ("Proof: an on/off trial through the real hooks, and the ledger", step_trial),
]


def run(root: Path) -> Iterator[str]:
    """Build the demo bank at `root` and yield what each step shows."""
    root.mkdir(parents=True, exist_ok=True)
    if any(root.iterdir()):
        raise BankError(f"{root} is not empty: pass a new folder to `bank demo --dir`")
    gitrepo.init(root)
    _project(root)
    yield f"demo project: {root}"
    for rel, action in scaffold.init(root):
        yield f"  {action:9} {rel}"
    with contextlib.contextmanager(_identity)():
        repo = gitrepo.GitRepo(root)
        try:
            repo.commit_all("demo project with an empty bank")
        finally:
            repo.close()
        bank = Bank.open(root)
        for number, (title, step) in enumerate(STEPS, start=1):
            yield ""
            yield f"{number}. {title}"
            for line in step(bank):
                yield f"   {line}"


@main.command()
@click.option(
    "--dir",
    "folder",
    type=click.Path(file_okay=False, path_type=Path),
    help="Build the demo here (a new, empty folder; default: a fresh temporary one).",
)
def demo(folder: Path | None) -> None:
    """Build a bundled example bank in a fresh git repository and show each feature working."""
    import tempfile

    root = folder.resolve() if folder else Path(tempfile.mkdtemp(prefix="lessonbank-demo-"))
    try:
        for line in run(root):
            click.echo(line)
    except BankError as err:
        raise click.ClickException(str(err)) from None
    click.echo(f"\nThe demo bank is at {root}: try `cd {root} && bank list`.")
