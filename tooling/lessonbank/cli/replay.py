"""`bank replay`: the user's own history as evidence of what the bank would have caught.

The sessions before a date are scanned into a temporary bank (the candidates at or above
`--accept-above` accepted through the capture gates, as `bank scan --accept-above` would); the
later sessions' tool calls then go, in order, through the PreToolUse hook's own code
(`hooks.pre_tool`) on that bank's compiled index, with no personal or team layer. Nothing is
written to the bank or the transcripts.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import click

from lessonbank.cli import get_bank, main
from lessonbank.cli.output import emit_json, table
from lessonbank.errors import BankError
from lessonbank.state import records

if TYPE_CHECKING:
    from lessonbank.scan.history import Call, Session
    from lessonbank.scan.replay import Answer, Report

DEFAULT_ACCEPT = 0.8


class HookCalls:
    """Each replayed call as the PreToolUse hook answers it, on the temporary bank's compiled index."""

    def __init__(self, root: Path) -> None:
        from lessonbank.index import layers
        from lessonbank.state import statedir

        self.root = str(root)
        self.state_dir = self.root + "/" + statedir.STATE
        self.index = layers.index(self.root, self.state_dir)
        self.probe = statedir.Session(self.state_dir, "replay-probe")  # never claims: what matches at all

    def tool_input(self, call: Call, session: Session) -> tuple[str, dict[str, str]]:
        if call.command:
            return "Bash", {"command": call.command}
        path = call.paths[0].replace("\\", "/")
        cwd = session.cwd.replace("\\", "/").rstrip("/")
        if cwd and path.startswith(cwd + "/"):  # the session's folder stands for the bank's root
            path = self.root + path[len(cwd) :]
        return call.tool, {"file_path": path}

    def __call__(self, call: Call, session: Session) -> Answer:
        from lessonbank.hooks import dispatch, handover, pre_tool
        from lessonbank.scan.replay import Answer
        from lessonbank.state import statedir

        tool, tool_input = self.tool_input(call, session)
        payload = {
            "hook_event_name": "PreToolUse", "session_id": "replay-" + statedir.safe_name(session.id),
            "tool_name": tool, "tool_input": tool_input, "cwd": self.root,
        }  # fmt: skip
        dispatch.cut(payload)
        out = pre_tool.pre_tool_use(payload, self.root, self.state_dir, "on")
        handed: list[tuple[str, int]] = []
        size = 0
        if out:
            text = json.loads(out)["hookSpecificOutput"]["additionalContext"]
            size = len(text.encode("utf-8"))
            for line in text.splitlines():
                slug = handover.slug_of(line)
                if slug is not None:
                    handed.append((slug, len(line.encode("utf-8"))))
        commands, paths = pre_tool.subjects(tool, tool_input, self.root, self.root)
        hits = pre_tool.layered_hits([self.index], tool, commands, paths, self.probe)
        return Answer(handed, size, [slug for _, slug, _ in hits])


@contextlib.contextmanager
def _no_other_layers(tmp: Path) -> Iterator[None]:
    """No personal or team bank answers while replaying: XDG_DATA_HOME points at an empty folder."""
    old = os.environ.get("XDG_DATA_HOME")
    os.environ["XDG_DATA_HOME"] = str(tmp / "data")
    try:
        yield
    finally:
        if old is None:
            del os.environ["XDG_DATA_HOME"]
        else:
            os.environ["XDG_DATA_HOME"] = old


def run_replay(
    files: list[Path], before: str | None, accept_above: float, bank_toml: Path | None = None, progress: bool = False
) -> Report:
    """Learn from the sessions in `files` before `before` (default: the later third is replayed), replay the rest."""
    from lessonbank.scan import history, replay

    sessions = history.read_sessions(files)
    cut = before or history.default_cut(sessions)
    earlier, later = history.split(sessions, cut)
    if not earlier or not later:
        raise BankError(
            f"nothing to replay: {len(sessions)} session(s) with tool calls, {len(earlier)} before "
            f"{cut or 'the cut'} and {len(later)} from it on (give --before a date between two sessions)"
        )
    with tempfile.TemporaryDirectory(prefix="bank-replay-") as tmp, _no_other_layers(Path(tmp)):
        learned = replay.learn(Path(tmp) / "bank", earlier, accept_above, bank_toml)
        hook = HookCalls(Path(tmp) / "bank")
        with contextlib.ExitStack() as shown:
            step = None
            if progress:
                bar = shown.enter_context(click.progressbar(length=len(later), label="replaying", file=sys.stderr))
                step = functools.partial(bar.update, 1)
            report = replay.replay(earlier, later, hook, learned.lessons, learned.origins, step)
    report.cut, report.candidates, report.accepted = cut, learned.candidates, len(learned.lessons)
    return report


def summary(report: Report, accept_above: float) -> list[str]:
    """The lines `bank replay` prints."""
    lines = [
        f"learned from {report.learned} session(s) before {report.cut}: {report.candidates} candidate(s), "
        f"{report.accepted} accepted at confidence {accept_above:.2f} or more",
        f"replayed {report.replayed} session(s), {report.calls} tool calls: {report.failures} shell failures, "
        f"{report.repeats} repeat an error of an earlier session, {report.intercepted} intercepted "
        f"({report.own} by the lesson learned from that error)",
        f"lessons handed over {report.fires} time(s): {report.on_success} on calls that succeeded, "
        f"{report.on_failure} on calls that failed; ~{report.tokens} tokens (bytes/{records.BYTES_PER_TOKEN})",
        "",
        table(["kind", "failures", "repeats", "intercepted"],
              [[k, str(v.failures), str(v.repeats), str(v.intercepted)] for k, v in sorted(report.kinds.items())]),
    ]  # fmt: skip
    if report.lessons:
        rows = [
            [v.slug, v.kind, str(v.fires), str(v.on_success), str(v.on_failure), str(v.intercepted), str(v.tokens)]
            for v in report.sorted_lessons()
        ]
        lines += ["", table(["lesson", "kind", "fires", "on success", "on failure", "intercepted", "~tokens"], rows)]
    if report.examples:
        lines += ["", "repeated errors:"]
        for item in report.examples:
            caught = f"intercepted by {', '.join(item['intercepted_by'])}" if item["intercepted_by"] else "missed"
            lines.append(f"  {item['kind']}: `{item['command'][:70]}` -> {item['error'][:90]} ({caught})")
    return lines


@main.command("replay")
@click.option("--path", "paths", multiple=True, type=click.Path(exists=True, path_type=Path),
              help="Replay this transcript file or folder instead (repeatable).")  # fmt: skip
@click.option("--all-projects", is_flag=True, help="Replay every project's transcripts, not only this bank's.")
@click.option("--before", metavar="DATE",
              help="Learn from the sessions that started before DATE (ISO, e.g. 2026-01-15); replay the rest. "
                   "Default: the later third of the sessions is replayed.")  # fmt: skip
@click.option("--accept-above", type=click.FloatRange(0.0, 1.01), default=DEFAULT_ACCEPT, show_default=True,
              help="Accept the candidates at or above this confidence into the replay's bank (0: every one).")  # fmt: skip
@click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON.")
@click.option("--chart", type=click.Path(dir_okay=False, path_type=Path), help="Write an SVG chart of the figures here.")
@click.pass_context
def replay_command(
    ctx: click.Context, paths: tuple[Path, ...], all_projects: bool, before: str | None, accept_above: float,
    as_json: bool, chart: Path | None,
) -> None:
    """Learn from the sessions before a date, replay the later ones' tool calls through the hook: what it would have caught."""
    from lessonbank.scan import sources

    bank = get_bank(ctx)
    try:
        files = sources.locate(bank.root, all_projects, paths, {})
        report = run_replay(files, before, accept_above, bank.root / "bank.toml", sys.stderr.isatty() and not as_json)
    except BankError as err:
        raise click.ClickException(str(err)) from None
    if chart is not None:
        from lessonbank.scan import replay_chart

        chart.write_text(replay_chart.svg(report), encoding="utf-8")
    if as_json:
        emit_json({**report.to_dict(), "accept_above": accept_above})
        return
    for line in summary(report, accept_above):
        click.echo(line)
    if chart is not None:
        click.echo(f"wrote {chart}")
