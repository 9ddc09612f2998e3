"""A project's past sessions, read whole for `bank replay`: each session's tool calls in order, and the split.

Unlike the scan, which reads only new bytes and keeps what a detector wants, this reads every
transcript from its start and keeps every tool call: the shell commands with how they ended, and
the edits with the files they touched. Files of one session (Claude Code's subagent files beside
it) are one session; a session starts at its first timestamp. `split` cuts the sessions at a date:
those before it teach the bank, those from it on are replayed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from lessonbank.errors import BankError
from lessonbank.scan.streams import AnyStream, for_record


@dataclass(slots=True)
class Call:
    """One tool call as the hook saw it before it ran, and how it ended."""

    time: str
    command: str = ""  # a shell command ("" for an edit)
    paths: tuple[str, ...] = ()  # the files an edit touched
    tool: str = "Bash"  # Bash for every agent's shell tool, else the edit tool's name
    status: str = "ok"  # ok | fail | unknown | denied | rejected | interrupted | invalid
    output: str = ""  # the tool's output (clipped as the scan clips it)


@dataclass
class Session:
    """A session's calls in order, where it ran and the files it was read from."""

    id: str
    start: str = ""
    cwd: str = ""
    files: list[Path] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)


def _read(path: Path) -> tuple[str, str, list[Call]]:
    """(session id, cwd, calls) of one transcript file."""
    stream: AnyStream | None = None
    calls: list[Call] = []
    try:
        handle = open(path, "rb")  # noqa: SIM115 (closed by the `with` below)
    except OSError as exc:
        raise BankError(f"cannot read {path}: {exc.strerror}") from None
    with handle:
        for raw in handle:
            try:
                record = json.loads(raw.decode("utf-8", "replace"))
            except ValueError:
                continue
            if not isinstance(record, dict):
                continue
            if stream is None:
                _, stream = for_record(record)
            for ev in stream.events(record):
                if ev.kind != "tool" or not (ev.command or ev.paths):
                    continue
                tool = "Bash" if ev.command else (ev.tool if ev.tool in ("Edit", "Write", "MultiEdit") else "Edit")
                calls.append(Call(ev.time, ev.command, ev.paths, tool, ev.status, ev.text))
    if stream is None:
        return "", "", []
    return stream.session, stream.cwd, calls


def read_sessions(paths: list[Path]) -> list[Session]:
    """Every session with a tool call in `paths`, oldest first (files of one session joined by time)."""
    sessions: dict[str, Session] = {}
    for path in paths:
        ident, cwd, calls = _read(path)
        if not calls:
            continue
        ident = ident or path.stem
        session = sessions.setdefault(ident, Session(ident))
        session.files.append(path)
        session.cwd = session.cwd or cwd
        session.calls.extend(calls)
    out = []
    for session in sessions.values():
        session.calls.sort(key=lambda c: c.time)  # stable: calls without a time keep their order
        times = [c.time for c in session.calls if c.time]
        if not times:
            continue
        session.start = min(times)
        out.append(session)
    return sorted(out, key=lambda s: (s.start, s.id))


def default_cut(sessions: list[Session]) -> str:
    """The start of the first session of the later third: what `split` cuts at when no date is given."""
    if len(sessions) < 2:
        return ""
    later = max(1, round(len(sessions) / 3))
    return sessions[len(sessions) - later].start


def split(sessions: list[Session], before: str) -> tuple[list[Session], list[Session]]:
    """(the sessions that started before `before`, those that started at it or later); ISO dates compare as text."""
    earlier = [s for s in sessions if s.start < before]
    return earlier, [s for s in sessions if s.start >= before]
