"""A read-only checkout or a full disk: every command ends in one line naming the path, nothing is lost.

A read-only checkout is a real one: as root (who ignores file modes) the bank is bind-mounted
read-only in a private mount namespace (`unshare -m`); otherwise its modes are cleared.
"""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

import pytest

from lessonbank.bank import store
from lessonbank.cli.demo import DEMO_TRANSCRIPTS
from lessonbank.state import statedir, userdirs
from tests.attacks.attack_support import capture
from tests.conftest import REPO, git, run
from tests.hook_support import HOOK, payload

BANK_CMD = [sys.executable, "-m", "lessonbank"]


def env() -> dict[str, str]:
    """This checkout's package, and the test's own HOME (read at call time: conftest sets it)."""
    return {**os.environ, "PYTHONPATH": str(REPO / "tooling")}


def read_only(root: Path, argv: list[str], stdin: bytes | None = None) -> subprocess.CompletedProcess[str]:
    """Run `argv` in `root` with `root` read-only (see the module docstring)."""
    if os.geteuid() == 0:
        if shutil.which("unshare") is None:
            pytest.skip("unshare is needed to make a read-only mount as root")
        script = 'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" && exec "$@"'
        command = ["unshare", "-m", "sh", "-c", script, str(root), *argv]
        done = subprocess.run(command, input=stdin, capture_output=True, cwd=root, env=env(), timeout=120)
        if done.returncode != 0 and b"mount" in done.stderr[:200] and b"Error" not in done.stderr:
            pytest.skip(f"no private read-only mount here: {done.stderr[:200]!r}")
    else:
        modes = {p: p.stat().st_mode for p in [root, *root.rglob("*")] if not p.is_symlink()}
        for path in modes:
            path.chmod(modes[path] & ~0o222)
        try:
            done = subprocess.run(argv, input=stdin, capture_output=True, cwd=root, env=env(), timeout=120)
        finally:
            for path, mode in modes.items():
                path.chmod(mode)
    return subprocess.CompletedProcess(
        done.args, done.returncode, done.stdout.decode("utf-8", "replace"), done.stderr.decode("utf-8", "replace")
    )


@pytest.fixture
def filled(bank: Path) -> Path:
    """A committed bank with a lesson seen in two sessions (groom has work) and a rules file."""
    for session in ("s1", "s2"):
        capture(bank, "running the test suite here", "pass -q to pytest", "--session", session)
    capture(bank, "building the docs here", "run make docs first")
    (bank / "rules").mkdir(exist_ok=True)
    (bank / "rules" / "docs.md").write_text("# Rules: docs\n\nBuild them first.\n", encoding="utf-8")
    git(bank, "add", "-A")
    git(bank, "commit", "-q", "-m", "bank")
    return bank


READ_ONLY_COMMANDS = [
    ["add", "--promote-to", "rule:x", "editing the changelog => keep one line per change"],
    ["capture", "--when", "a new situation here", "--do", "do the new thing", "--promote-to", "rule:x"],
    ["forget", "building-the-docs-here"],
    ["groom", "--commit"],
    ["scan", "--path", str(DEMO_TRANSCRIPTS / "shop-session.jsonl")],
    ["index"],
    ["rules"],
]


@pytest.mark.parametrize("args", READ_ONLY_COMMANDS, ids=[" ".join(a[:2]) for a in READ_ONLY_COMMANDS])
def test_every_command_on_a_read_only_checkout_ends_in_one_line_naming_the_path(filled: Path, args: list[str]) -> None:
    if args == ["index"]:  # make the index stale, so that `bank index` has something to write
        (filled / "INDEX.md").write_text("# stale\n", encoding="utf-8")
    done = read_only(filled, [*BANK_CMD, *args])
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert re.match(rf"Error: .*cannot (write|use) {re.escape(str(filled))}", last), last
    assert len([ln for ln in done.stderr.splitlines() if ln.startswith("Error")]) == 1


def test_a_dry_run_capture_works_on_a_read_only_checkout(filled: Path) -> None:
    done = read_only(filled, [*BANK_CMD, "capture", "--dry-run", "--when", "a new case", "--do", "do it", "--promote-to", "rule:x"])
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("would create lessons/")


def test_the_stop_hook_keeps_a_block_it_cannot_save_and_says_where(filled: Path, isolated_home: Path) -> None:
    block = "#lesson\ntool: Bash\nmistake: the deploy script hung on a prompt\nfix: pass --yes to the deploy script\npromote-to: rule:deploy\n#/lesson"
    data = payload("Stop", filled, last_assistant_message=f"Done.\n\n{block}", stop_hook_active=False)
    done = read_only(filled, HOOK, json.dumps(data).encode())
    assert done.returncode == 0 and done.stderr == ""
    answer = json.loads(done.stdout)
    kept = Path(userdirs.user_pending(str(filled)))
    assert answer["decision"] == "block"
    assert "could not save your #lesson block: cannot write" in answer["reason"]
    assert str(kept) in answer["reason"] and "`bank capture --pending`" in answer["reason"]
    assert kept.is_relative_to(isolated_home)
    assert json.loads(kept.read_text(encoding="utf-8"))["message"].endswith(block)
    saved = run(filled, "capture", "--pending")
    assert saved.exit_code == 0, saved.output
    assert "created lessons/the-deploy-script-hung-on-a-prompt.md" in saved.output
    assert not kept.exists()
    assert run(filled, "capture", "--pending").output == "no pending lesson blocks\n"


# ---- a full disk ----------------------------------------------------------------------------


@pytest.fixture
def full_disk(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every atomic write fails as on a full disk: store.write_atomic at its fsync or, for a file
    it does not flush (a generated one), at the first write to its temporary file; and
    statedir.write_atomic / append_line at their `posix.write` of a file."""

    def no_space(*args: object) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    class Full:
        """A temporary file on a full disk: nothing written goes in."""

        def __init__(self, out: BinaryIO) -> None:
            self.out = out
            self.write = self.flush = no_space
            self.fileno, self.close = out.fileno, out.close

        @property
        def closed(self) -> bool:
            return self.out.closed

    real_start = store._start

    def start(path: Path) -> tuple[Full, str]:
        out, tmp = real_start(path)
        return Full(out), tmp

    real_write = statedir.posix.write

    def write(fd: int, data: bytes) -> int:
        if fd > 2:
            no_space()
        return real_write(fd, data)

    monkeypatch.setattr(os, "fsync", no_space)
    monkeypatch.setattr(store, "_start", start)
    monkeypatch.setattr(statedir.posix, "write", write)
    yield


FULL_DISK_COMMANDS = [c for c in READ_ONLY_COMMANDS if c[0] != "scan"] + [
    ["scan", "--path", str(DEMO_TRANSCRIPTS / "shop-session.jsonl"), "--accept-above", "0.5"],
]


@pytest.mark.parametrize("args", FULL_DISK_COMMANDS, ids=[" ".join(a[:2]) for a in FULL_DISK_COMMANDS])
def test_every_command_on_a_full_disk_ends_in_one_line_naming_the_path(
    filled: Path, args: list[str], full_disk: None
) -> None:
    if args == ["index"]:
        (filled / "INDEX.md").write_text("# stale\n", encoding="utf-8")
    if args == ["rules"]:
        (filled / "CLAUDE.md").write_text("# project\n", encoding="utf-8")
    result = run(filled, *args)  # click's runner lets any exception but ClickException through
    assert result.exit_code == 1, result.output
    last = result.output.strip().splitlines()[-1]
    assert re.match(rf"Error: .*cannot write {re.escape(str(filled))}\S*: No space left on device", last), last
