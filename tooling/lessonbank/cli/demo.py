"""`bank demo`: a bundled example bank, built step by step in a fresh git repository.

Every demo step and its data live here (each feature adds one to STEPS): it strings together
what every feature's command shows, so it sits on top of everything, with the CLI.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import click

from lessonbank.bank import render, scaffold
from lessonbank.bank.git import GitRepo, clone, init, init_bare
from lessonbank.bank.store import Bank
from lessonbank.capture.draft import Draft
from lessonbank.capture.pipeline import capture
from lessonbank.cli import main
from lessonbank.cli.output import table
from lessonbank.cli.scan_report import summary
from lessonbank.errors import BankError, GateRefusal
from lessonbank.groom import apply, rulesync
from lessonbank.groom.plan import commit_message, plan_groom
from lessonbank.install import claude, hookfiles, launcher
from lessonbank.scan.candidates import Store, run_scan, short_id
from lessonbank.state import statedir
from lessonbank.trial import ledger, simulate
from lessonbank.trial.report import status_line

DEMO_TRIGGERS = (
    simulate.Trigger("PreToolUse", "pytest -q"),
    simulate.Trigger("PreToolUse", "git stash"),
    simulate.Trigger("UserPromptSubmit", "write the migration for the new field on the user model"),
)

EXAMPLES = [
    Draft(
        title="pytest hangs when something under test waits for a TTY",
        when="running pytest in a non-interactive shell while code under test may open a pager or a prompt",
        do="run it with stdin from /dev/null and PAGER=cat, under the timeout pytest.ini sets, so a TTY wait fails fast",
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


@contextlib.contextmanager
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
        "pytest.ini": "[pytest]\ntimeout = 60\n",
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
        # A trigger that could hang every Bash call (exponential backtracking) never reaches the hooks.
        Draft(
            when="grepping build logs for repeated markers",
            do="anchor the pattern and keep repeats flat",
            promote_to="rule:shell",
            commands=[r"(a+)+$"],
        ),
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
    stale = render.stale(bank)
    yield "bank index --check: " + (
        "stale " + ", ".join(stale) if stale else "INDEX.md and BANK.md up to date"
    )
    rows = (bank.root / "INDEX.md").read_text(encoding="utf-8").count("\n| [")
    yield f"INDEX.md lists {rows} active lessons"


def _agent_calls(command: str) -> tuple[tuple[str, str, dict[str, Any]], ...]:
    """A shell call as Codex and Copilot CLI send it before it runs, Gemini CLI and Qwen Code once it ran (exit 1)."""
    return (
        ("codex", "PreToolUse", {"session_id": "demo-codex", "hook_event_name": "PreToolUse",
                                 "tool_name": "Bash", "tool_input": {"command": command},
                                 "tool_use_id": "call_demo", "turn_id": "turn_demo"}),
        ("copilot", "preToolUse", {"sessionId": "demo-copilot", "toolName": "bash",
                                   "toolArgs": {"command": command}}),
        ("gemini", "AfterTool", {"session_id": "demo-gemini", "hook_event_name": "AfterTool",
                                 "tool_name": "run_shell_command", "tool_input": {"command": command},
                                 "tool_response": {"llmContent": "Output: 1 failed\nExit Code: 1"}}),
        ("qwen", "PostToolUseFailure", {"session_id": "demo-qwen", "hook_event_name": "PostToolUseFailure",
                                        "tool_name": "run_shell_command", "tool_input": {"command": command},
                                        "error": "Output: 1 failed\nExit Code: 1"}),
    )  # fmt: skip


def step_hooks(bank: Bank, command: str = "python -m pytest -x tests/") -> list[str]:
    """Install the hooks in the demo bank and show what the agent gets before a Bash call."""
    result = claude.install(bank.root)
    # A fresh session each run, so that the first call shows what a new session gets.
    shutil.rmtree(bank.state_dir / statedir.SESSIONS / statedir.safe_name("demo-session"), ignore_errors=True)
    lines = [f"$ bank install claude  ->  {result.action} {claude.SETTINGS}"]
    hook = claude.installed_command(bank.root) or result.command
    base = {
        "session_id": "demo-session",
        "cwd": str(bank.root),
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_use_id": "toolu_demo",
    }
    calls = (
        ("first call", command),
        ("same call again, same session", command),
        ("a commit message that only mentions it", 'git commit -m "fix pytest hang"'),
    )
    for label, text in calls:
        payload = {**base, "tool_input": {"command": text, "description": label}}
        code, out = claude.run_hook(hook, payload, bank.root)
        lines.append(f"PreToolUse Bash `{text}` ({label}): exit {code}")
        if out.strip():
            context = json.loads(out)["hookSpecificOutput"]["additionalContext"]
            lines.extend("  " + line for line in context.splitlines())
        else:
            lines.append("  (nothing handed over)")
    lines.append("the same first call from the other agents, through the same hook program (new sessions):")
    for name, event, payload in _agent_calls(command):
        hook = hookfiles.command(hookfiles.AGENTS[name], event)
        code, out = claude.run_hook(hook, dict(payload, cwd=str(bank.root)), bank.root)
        answer = json.loads(out) if out.strip() else {}
        if name == "copilot":
            where, text = "additionalContext", str(answer.get("additionalContext", ""))
        else:
            where, text = "hookSpecificOutput.additionalContext", str(
                answer.get("hookSpecificOutput", {}).get("additionalContext", "")
            )
        slugs = re.findall(r"^- \[([^\]]+)\]", text, re.M)
        lines.append(f"  {name} {event}: exit {code}; {where}: {', '.join(slugs) or '(nothing)'}")
    return lines


DEMO_TRANSCRIPTS = Path(__file__).resolve().parents[1] / "demo" / "transcripts"


def step_scan(bank: Bank) -> list[str]:
    """`bank demo`: scan the bundled transcript into `bank`, accept the self-reported lesson."""
    files = sorted(DEMO_TRANSCRIPTS.glob("*.jsonl"))
    store = Store(bank).load()
    report = run_scan(bank, files, store, accept_above=0.85)
    lines = [f"$ bank scan --path {DEMO_TRANSCRIPTS.name}/ --accept-above 0.85", *summary(report, store)]
    lines.append("$ bank review --list")
    # each candidate as the lesson it would write: its title, then when and do
    rows = [[short_id(c.key), f"{c.confidence:.2f}", c.kind, c.title or c.when] for c in store.pending()]
    lines.extend(table(["id", "conf", "kind", "lesson"], rows, max_width=72).splitlines())
    return lines


def step_groom(bank: Bank) -> list[str]:
    """`bank demo`: a lesson seen in two sessions graduates into a rule, as one git commit."""
    repo = GitRepo(bank.root)
    try:
        lines: list[str] = []
        pending = repo.dirty([repo.rel(bank.root)])
        if pending:
            sha = repo.commit(pending, "demo: lessons captured so far")
            lines.append(f"committed the captured lessons ({sha[:7]}) so groom starts from a clean bank")
        plan = plan_groom(bank, repo)
        lines.append("bank groom --commit")
        for d in plan.decisions:
            where = f" -> {plan.targets[d.lesson_id]}" if d.lesson_id in plan.targets else ""
            lines.append(f"  {d.outcome:12} {d.slug}: {d.reason}{where}")
        applied = apply.carry_out(bank, repo, plan, commit=True)
        lines += [f"  {action:9} {rel}" for rel, action in applied.results if action != "unchanged"]
        if applied.sha:
            lines.append(f"  committed {applied.sha[:7]}: {commit_message(plan).splitlines()[0]}")
        for rel in sorted(set(plan.targets.values())):
            text = (bank.root / rel).read_text(encoding="utf-8")
            lines.append(f"{rel} now holds:")
            lines += [
                f"  {ln}"
                for ln in rulesync.strip_sections(text).splitlines()
                if ln.startswith(("## ", "**When**"))
            ]
        claude_md = bank.root / "CLAUDE.md"
        if claude_md.is_file():
            imports = [ln for ln in claude_md.read_text(encoding="utf-8").splitlines() if ln.startswith("@")]
            lines.append(f"CLAUDE.md imports: {' '.join(imports) or '(nothing)'}")
        again = plan_groom(bank, repo)
        lines.append("groom again: " + ("nothing to change" if not again.changes else "more to do"))
        return lines
    finally:
        repo.close()


def step_trial(bank: Bank) -> list[str]:
    """`bank demo`: a short trial through the real hook processes, its status, the ledger, then `bank off`."""
    result = claude.install(bank.root)
    lines = [f"$ bank install claude  ->  {result.action} {claude.SETTINGS}", "$ bank test"]
    lines += [f"  {action:9} {rel}" for rel, action in ledger.set_mode(bank, "test")]
    sessions = [f"demo-trial-{i}" for i in range(1, 9)]
    run = simulate.simulate(
        bank.root, sessions, DEMO_TRIGGERS, {"with": 0.4, "without": 0.6}, checks_per_turn=2, seed=5
    )
    by_arm = {arm: {t.session for t in run.turns if t.arm == arm} for arm in ("with", "without")}
    silent = all(
        not c.stdout for c in run.calls if c.session in by_arm["without"] and c.event != "SessionStart"
    )
    lines.append(
        f"{len(sessions)} synthetic sessions, {len(run.turns)} turns, through the real hooks "
        f"({len(run.calls)} hook processes): {len(by_arm['with'])} sessions with lessons, "
        f"{len(by_arm['without'])} without; every without-arm lesson hook printed nothing: "
        f"{'yes' if silent else 'NO'}"
    )
    judged, _ = ledger.judge(bank, lessons=False)
    lines += ["$ bank trial status", "  " + status_line(judged), "$ bank ledger"]
    lines += ["  " + line for line in ledger.summary_lines(ledger.summarise(bank))]
    lines.append("$ bank off")
    ledger.set_mode(bank, "off")
    sent = simulate.bash_payload(
        "PreToolUse", "demo-after-off", "demo-after-off-1", bank.root, "pytest -q", "toolu_off"
    )
    out = simulate.spawn(simulate.commands(bank.root), sent, bank.root)
    lines.append("  next PreToolUse `pytest -q` in a new session: " + (out or "(nothing handed over)"))
    ledger.set_mode(bank, "on")
    lines.append("$ bank on  (the demo bank goes back to the default)")
    return lines


TEAM_LESSON = Draft(
    title="docker build in CI needs the classic builder",
    when="building the images with docker build on the team's CI runners",
    do="set DOCKER_BUILDKIT=0: the runners' BuildKit cache corrupts multi-stage builds",
    promote_to="rule:docker",
    tools=["Bash"],
    commands=[r"^(?!.*DOCKER_BUILDKIT=0)(?=.*\bdocker\s+build\b)"],
    tags=["tool:docker"],
)


@contextlib.contextmanager
def _data_folder(folder: Path) -> Iterator[None]:
    """The demo's own data folder (XDG_DATA_HOME), so its team bank never joins the user's layers."""
    before = os.environ.get("XDG_DATA_HOME")
    os.environ["XDG_DATA_HOME"] = str(folder)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("XDG_DATA_HOME", None)
        else:
            os.environ["XDG_DATA_HOME"] = before


def step_layers(bank: Bank) -> list[str]:
    """`bank demo`: a team bank in a bare git repository, followed with `bank remote add`, reaches the hook."""
    from lessonbank.bank import remotes

    place = bank.state_dir / "demo-layers"  # git-ignored, so the project stays clean
    shutil.rmtree(place, ignore_errors=True)
    bare, seed = place / "team-bank.git", place / "colleague"
    lines = [f"a team bank: the bare repository {bare.relative_to(bank.root)}, where a colleague pushed one lesson"]
    with _data_folder(place / "data"):
        launcher.write()  # this data folder is the demo machine's: its hook launcher lives here too
        init_bare(bare)
        clone(str(bare), seed)
        scaffold.init(seed)
        capture(Bank.open(seed), TEAM_LESSON)
        repo = GitRepo(seed)
        try:
            repo.commit_all("the team's first lesson")
            repo.run("push", "-q", "origin", "HEAD:main")
        finally:
            repo.close()
        path, branch = remotes.add("demo-team", str(bare))
        lines.append(f"$ bank remote add demo-team {bare.name}  ->  cloned ({branch}) into <data>/{path.relative_to(place / 'data')}")
        hook = claude.installed_command(bank.root) or claude.install(bank.root).command
        # A new session for each call: the second is quiet because its command already has the fix.
        for number, command in enumerate(("docker build -t app .", "DOCKER_BUILDKIT=0 docker build -t app .")):
            payload = {"session_id": f"demo-layers-{number}", "cwd": str(bank.root), "hook_event_name": "PreToolUse",
                       "tool_name": "Bash", "tool_input": {"command": command}}  # fmt: skip
            code, out = claude.run_hook(hook, payload, bank.root)
            lines.append(f"PreToolUse Bash `{command}` in the project: exit {code}")
            context = json.loads(out)["hookSpecificOutput"]["additionalContext"] if out.strip() else ""
            lines.extend(["  " + line for line in context.splitlines()[1:]] or ["  (nothing handed over)"])
    return lines


# Each feature adds a step: (title, function from the demo bank to printable lines).
STEPS: list[tuple[str, Callable[[Bank], Iterator[str] | list[str]]]] = [
    ("Capture through the gates", step_bank),
    ("Recall: the hooks, as Claude Code and the other agents run them", step_hooks),
    ("Scan: lessons from an old transcript", step_scan),
    ("Groom: a lesson seen in two sessions graduates into a rule", step_groom),
    ("Proof: an on/off trial through the real hooks, and the ledger", step_trial),
    ("Layers: a team bank shared through git reaches this project's hooks", step_layers),
]


def run(root: Path) -> Iterator[str]:
    """Build the demo bank at `root` and yield what each step shows."""
    root.mkdir(parents=True, exist_ok=True)
    if any(root.iterdir()):
        raise BankError(f"{root} is not empty: pass a new folder to `bank demo --dir`")
    init(root)
    _project(root)
    yield f"demo project: {root}"
    for rel, action in scaffold.init(root):
        yield f"  {action:9} {rel}"
    with _identity():
        repo = GitRepo(root)
        try:
            repo.commit_all("demo project with an empty bank")
        finally:
            repo.close()
        bank = Bank.open(root)
        # The demo's own data folder: its `bank install` writes the hook launcher there, not in yours.
        with _data_folder(bank.state_dir / "demo-data"):
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
