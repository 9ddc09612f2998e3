"""Discovery without a person: SessionStart starts a detached, incremental scan at most once per scan.every."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lessonbank.hooks import discover, dispatch
from lessonbank.scan import sources
from lessonbank.state import statedir
from tests.conftest import run
from tests.hook_support import HOOK, make_bank, payload
from tests.scan.test_learning import Claude

DAY = 86400.0


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("LESSONBANK_DISCOVER")
    make_bank(tmp_path / "proj", [])
    return tmp_path / "proj"


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The roots a scan was started for, without starting one."""
    calls: list[str] = []
    monkeypatch.setattr(discover, "start", lambda root, state_dir: calls.append(root))
    return calls


def session_start(root: Path) -> str:
    return dispatch.handle(json.dumps(payload("SessionStart", root)).encode(), raise_errors=True)


def stamp(root: Path) -> float:
    return (root / statedir.STATE / statedir.SCAN / statedir.NEXT_SCAN).stat().st_mtime


def test_a_scan_starts_once_per_period(root: Path, started: list[str]) -> None:
    before = time.time()
    assert "#lesson" in session_start(root)
    assert started == [str(root)]
    # The lease: until the scan sets the real time, no other session starts one.
    assert before + discover.LEASE <= stamp(root) <= time.time() + discover.LEASE
    session_start(root)
    session_start(root)
    assert started == [str(root)]
    # The period over (the scan set the stamp to a time now past): the next session starts one.
    os.utime(root / statedir.STATE / statedir.SCAN / statedir.NEXT_SCAN, (before - 1, before - 1))
    session_start(root)
    assert started == [str(root), str(root)]


@pytest.mark.parametrize("how", ["environment", "mode off", "bank hook dry run"])
def test_no_scan_when_discovery_is_off(
    root: Path, started: list[str], monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    if how == "environment":
        monkeypatch.setenv("LESSONBANK_DISCOVER", "off")
    elif how == "mode off":
        (root / statedir.STATE).mkdir(exist_ok=True)
        (root / statedir.STATE / statedir.MODE).write_text("off\n")
    else:
        monkeypatch.setattr(statedir, "READ_ONLY", True)
    session_start(root)
    assert started == []
    assert not (root / statedir.STATE / statedir.SCAN / statedir.NEXT_SCAN).exists()


def test_the_scan_is_detached_and_its_output_logged(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    marker = root / "ran"
    code = (
        "import os, sys; "
        f"open({str(marker)!r}, 'w').write(f'{{os.getsid(0) == os.getpid()}} {{sys.stdin.read()!r}}'); "
        "print('scheduled output')"
    )
    monkeypatch.setattr(discover, "command", lambda _root: [sys.executable, "-c", code])
    session_start(root)
    log = root / statedir.STATE / statedir.SCAN / statedir.SCHEDULED_LOG
    deadline = time.monotonic() + 60
    while "scheduled output" not in (log.read_text() if log.exists() else "") and time.monotonic() < deadline:
        time.sleep(0.05)
    # Its own session (no terminal, not killed with the agent's process group), stdin empty.
    assert marker.read_text() == "True ''"
    assert log.read_text() == "scheduled output\n"


def test_the_hook_really_runs_an_incremental_scan(root: Path) -> None:
    """The installed hook, as a process, starts `bank scan --scheduled`; its candidate waits for review."""
    folder = sources.claude_project_dir(root)
    folder.mkdir(parents=True)
    t = Claude().bash("cd build && ./tests/run", "/bin/bash: line 1: cd: build: No such file or directory", 1)
    t.bash("cd /p/build && ./tests/run", "all good").write(folder)
    env = dict(os.environ)
    env.pop("LESSONBANK_DISCOVER", None)
    done = subprocess.run(HOOK, input=json.dumps(payload("SessionStart", root)).encode(),
                          capture_output=True, timeout=60, env=env)  # fmt: skip
    assert done.returncode == 0 and b"#lesson" in done.stdout
    log = root / statedir.STATE / statedir.SCAN / statedir.SCHEDULED_LOG
    deadline = time.monotonic() + 120
    while "for review" not in (log.read_text() if log.exists() else "") and time.monotonic() < deadline:
        time.sleep(0.1)
    lines = [line.split(" ", 1)[1] for line in log.read_text().splitlines()]
    assert lines == [
        "scheduled scan: scanned 1 transcript: 1 with new lines, 1.0 kB read",
        "scheduled scan: found 1 new candidate, 0 seen again: 0 self-reported (tier 1), 1 heuristic (tier 2)",
        "scheduled scan: 1 candidate waits for review: `bank review`",
    ]
    assert sorted(p.name for p in (root / "lessons").iterdir()) == []  # nothing entered the bank
    assert time.time() + DAY - 300 < stamp(root) <= time.time() + DAY
    # Incremental: the next scan reads nothing it read before.
    again = run(root, "scan", "--json")
    assert json.loads(again.output)["bytes_read"] == 0


@pytest.mark.parametrize(("every", "scans"), [("off", False), ("0", False), ("12h", True)])
def test_scheduled_scan_honours_scan_every(tmp_path: Path, every: str, scans: bool) -> None:
    root = tmp_path / "proj"
    make_bank(root, [], toml=f'[scan]\nevery = "{every}"\n')
    result = run(root, "scan", "--scheduled")
    assert result.exit_code == 0
    assert ("scheduled scan: nothing waits for review" in result.output) is scans
    period = 43200.0 if scans else DAY  # off: asked again in a day, so turning it on needs no other step
    assert time.time() + period - 300 < stamp(root) <= time.time() + period
