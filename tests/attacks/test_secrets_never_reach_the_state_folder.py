"""What the hooks write themselves (checks.jsonl, pending #lesson blocks, hook.log) carries no secret
in clear: the standard-library scrub (state.scrub) runs before every such write."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from lessonbank.hooks import stop
from lessonbank.state import statedir
from lessonbank.state.scrub import scrub
from tests.bank.secret_cases import LOOK_ALIKES, SECRETS
from tests.hook_support import CALC_LESSON, HOOK, lesson, make_bank, payload, run

PASSWORD = "Pg5ecretPassw0rd"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    make_bank(tmp_path / "proj", [lesson("something-else", commands=["make"])])
    return tmp_path / "proj"


def test_a_check_command_with_a_password_is_recorded_without_it(root: Path) -> None:
    command = f"DATABASE_URL=postgres://app:{PASSWORD}@db/shop PGPASSWORD={PASSWORD} pytest -x"
    assert run(payload("PostToolUseFailure", root, tool_input={"command": command})).returncode == 0
    written = "".join(p.read_text() for p in (root / statedir.STATE / statedir.SESSIONS).rglob("checks.jsonl"))
    assert "pytest -x" in written and PASSWORD not in written
    assert json.loads(written.splitlines()[0])["check"] == "pytest"


def test_a_pending_block_is_kept_without_its_secrets(root: Path, tmp_path: Path) -> None:
    bare = tmp_path / "bare-venv"  # an interpreter without the package's dependencies: capture cannot run
    subprocess.run([HOOK[0], "-m", "venv", "--without-pip", str(bare)], check=True)
    message = f"Fixed it; the redis-cli -a {PASSWORD} call was the culprit.\n\n" + CALC_LESSON
    data = payload("Stop", root, last_assistant_message=message)
    done = subprocess.run([str(bare / "bin" / "python"), *HOOK[1:]], input=json.dumps(data).encode(), capture_output=True)
    assert done.returncode == 0
    kept = (root / statedir.STATE / stop.PENDING).read_text(encoding="utf-8")
    assert "#lesson" in kept and PASSWORD not in kept
    log = (root / statedir.STATE / statedir.HOOK_LOG).read_text(encoding="utf-8")
    assert PASSWORD not in log


def test_the_scrub_leaves_every_look_alike_and_catches_most_formats() -> None:
    assert [name for name, text in LOOK_ALIKES if scrub(text) != text] == []
    caught = [name for name, text, parts in SECRETS if not any(part in scrub(text) for part in parts)]
    assert len(caught) >= 90, f"{len(caught)} of {len(SECRETS)}"  # the full gate runs at capture
