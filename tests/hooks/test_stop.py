"""Checks recorded from PostToolUse/PostToolUseFailure, and the Stop hook's capture and nudge."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lessonbank.hooks import stop
from lessonbank.state import records, statedir
from tests.hook_support import CALC_LESSON, lesson, make_bank, payload, run

SESSION = "1ebd0fc0-db0b-4702-adbd-8545317a8e7d"
TURN = "f5e95267-ad9f-4ab1-bcf5-cf3bd372cef5"
GOOD_BLOCK = "Fixed it.\n\n" + CALC_LESSON


@pytest.fixture
def root(tmp_path: Path) -> Path:
    make_bank(tmp_path / "proj", [lesson("something-else", commands=["make"])])
    return tmp_path / "proj"


def checks(root: Path, session: str = SESSION) -> list[dict]:
    rows, skipped = records.read_checks(statedir.Session(str(root / ".lessonbank"), session).dir)
    assert skipped == 0
    return rows


def fail(root: Path, command: str = "pytest -x", **changes: object) -> None:
    data = payload("PostToolUseFailure", root, tool_input={"command": command}, **changes)
    assert run(data).stdout == b""


def succeed(root: Path, command: str = "pytest -q", **changes: object) -> None:
    data = payload("PostToolUse", root, tool_input={"command": command}, **changes)
    assert run(data).stdout == b""


def stop_answer(root: Path, **changes: object) -> dict | None:
    done = run(payload("Stop", root, **{"last_assistant_message": "Done.", **changes}))
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout) if done.stdout.strip() else None


def test_checks_are_recorded_with_their_outcome(root: Path) -> None:
    fail(root, "cd app && python -m pytest -x")
    succeed(root, "ls -la")
    succeed(root, "pytest -q", tool_use_id="toolu_0002")
    assert checks(root) == [
        {"turn": TURN, "command": "cd app && python -m pytest -x", "check": "pytest", "ok": False, "tool_use_id": "toolu_0000"},
        {"turn": TURN, "command": "pytest -q", "check": "pytest", "ok": True, "tool_use_id": "toolu_0002"},
    ]  # fmt: skip


def test_interrupted_calls_and_other_tools_are_not_checks(root: Path) -> None:
    fail(root, is_interrupt=True)
    run(payload("PostToolUse", root, tool_name="Read", tool_input={"file_path": "pytest.ini"}))
    assert checks(root) == []


def test_a_recovery_gets_exactly_one_nudge(root: Path) -> None:
    fail(root)
    succeed(root)
    answer = stop_answer(root)
    assert answer is not None and answer["decision"] == "block"
    assert answer["reason"].startswith("lessonbank: pytest failed earlier in this turn and passes now.")
    assert "promote-to" in answer["reason"] and "bank capture" in answer["reason"]
    assert "one-off slip" in answer["reason"]
    assert stop_answer(root) is None  # once per turn
    assert stop_answer(root, prompt_id="next-turn") is None  # no recovery in that turn


def test_no_nudge_without_a_recovery(root: Path) -> None:
    fail(root)
    assert stop_answer(root) is None
    succeed(root, prompt_id="later")
    assert stop_answer(root, prompt_id="later") is None  # the failure was in another turn


def test_never_blocks_when_stop_hook_active(root: Path) -> None:
    fail(root)
    succeed(root)
    assert stop_answer(root, stop_hook_active=True) is None
    assert (
        stop_answer(root, stop_hook_active=True, last_assistant_message="#lesson\ntool: x\n#/lesson") is None
    )


def test_recovery_uses_the_counter_when_there_is_no_prompt_id(root: Path) -> None:
    run(payload("UserPromptSubmit", root, prompt_id=None, prompt="go"))
    fail(root, prompt_id=None)
    succeed(root, prompt_id=None)
    answer = stop_answer(root, prompt_id=None)
    assert answer is not None and answer["decision"] == "block"


def test_lesson_block_is_captured_and_index_regenerated(root: Path) -> None:
    fail(root)
    succeed(root)
    assert stop_answer(root, last_assistant_message=GOOD_BLOCK) is None  # saved: no nudge either
    files = sorted(p.name for p in (root / "lessons").glob("*.md"))
    assert len(files) == 2
    new = next(name for name in files if name != "something-else.md")
    assert f"[{new[:-3]}](lessons/{new})" in (root / "INDEX.md").read_text(encoding="utf-8")
    assert SESSION in (root / "lessons" / new).read_text(encoding="utf-8")


def test_refused_block_blocks_the_stop_once_with_the_reason(root: Path) -> None:
    fixture = payload("Stop", root)["last_assistant_message"]  # the fixture's block has no promote-to
    answer = stop_answer(root, last_assistant_message=fixture)
    assert answer is not None and answer["decision"] == "block"
    assert answer["reason"].startswith("lessonbank did not save your #lesson block: refused:")
    assert "promote-to" in answer["reason"]
    assert stop_answer(root, last_assistant_message=fixture) is None
    assert sorted(p.name for p in (root / "lessons").glob("*.md")) == ["something-else.md"]


def test_recovered_reads_each_name_of_a_combined_check() -> None:
    # One turn's runs in order; the Stop hook and the trial both ask this one rule.
    runs = [("ruff + mypy", False), ("mypy", True), ("pytest", True), ("ruff", True), ("mypy", True)]
    assert records.recovered(runs) == ["mypy", "ruff"]
    assert records.recovered([("pytest", True), ("pytest", False)]) == []


def test_a_block_the_hook_cannot_save_is_kept_and_saved_later(root: Path, tmp_path: Path) -> None:
    """The plugin's python may lack the package's dependencies: the block waits, nothing is lost."""
    import subprocess

    from click.testing import CliRunner

    from lessonbank.cli import main
    from tests.hook_support import HOOK

    bare = tmp_path / "bare-venv"  # an interpreter without click, yaml or jinja2
    subprocess.run([HOOK[0], "-m", "venv", "--without-pip", str(bare)], check=True)
    data = payload("Stop", root, last_assistant_message=GOOD_BLOCK)
    done = subprocess.run(
        [str(bare / "bin" / "python"), *HOOK[1:]], input=json.dumps(data).encode(), capture_output=True
    )
    assert done.returncode == 0
    answer = json.loads(done.stdout)
    assert answer["decision"] == "block"
    assert answer["reason"].startswith("lessonbank could not save your #lesson block here (")
    assert "`bank capture --pending`" in answer["reason"]
    repository = str(Path(stop.__file__).resolve().parents[3])
    assert f"python3 -m pip install {repository}: lessonbank is not on PyPI" in answer["reason"]
    pending = root / ".lessonbank" / stop.PENDING
    assert json.loads(pending.read_text(encoding="utf-8"))["message"] == GOOD_BLOCK
    assert "No module named" in (root / ".lessonbank" / "hook.log").read_text(encoding="utf-8")
    assert sorted(p.name for p in (root / "lessons").glob("*.md")) == ["something-else.md"]
    saved = CliRunner().invoke(main, ["--root", str(root), "capture", "--pending"])
    assert saved.exit_code == 0, saved.output
    assert saved.output.startswith("created lessons/calc-add-subtracted-its-arguments")
    assert not pending.exists()
    again = CliRunner().invoke(main, ["--root", str(root), "capture", "--pending"])
    assert again.output == "no pending lesson blocks\n"


def test_a_block_it_cannot_keep_anywhere_names_the_bank_file_it_tried(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With no user state folder (no HOME, no XDG_STATE_HOME) the reason names the bank's pending
    file, not an empty path."""
    for name in ("HOME", "XDG_STATE_HOME"):
        monkeypatch.delenv(name, raising=False)
    state_dir = tmp_path / statedir.STATE
    (state_dir / stop.PENDING).mkdir(parents=True)  # a folder where the file goes: the append fails
    session = statedir.Session(str(state_dir), "s1")
    out = stop.keep_pending(str(state_dir), session, "1", "#lesson x #/lesson", OSError("Error: boom"), False)
    reason = json.loads(out)["reason"]
    assert f"{state_dir}/{stop.PENDING}: " in reason
