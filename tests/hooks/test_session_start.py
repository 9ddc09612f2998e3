"""Once per session (also under parallel hook processes), compaction and clear, modes, the ledger."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from lessonbank.state import records, statedir
from tests.hook_support import HOOK, bash, context, lesson, make_bank, payload, run, slugs

LESSONS = [
    lesson("high-pytest", commands=[r"\bpytest\b"], priority=8),
    lesson("low-pytest", commands=[r"\bpytest\b"], priority=3),
]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    make_bank(tmp_path / "proj", LESSONS)
    return tmp_path / "proj"


def test_eight_parallel_hook_processes_hand_each_lesson_over_once(root: Path) -> None:
    data = json.dumps(bash(root, "pytest -x", session_id="parallel")).encode()
    procs = [
        subprocess.Popen(HOOK, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for _ in range(8)
    ]
    outs = [p.communicate(data, timeout=60) for p in procs]
    assert all(p.returncode == 0 for p in procs)
    handed = [
        s
        for out, _ in outs
        if out.strip()
        for s in slugs(json.loads(out)["hookSpecificOutput"]["additionalContext"])
    ]
    assert sorted(handed) == ["high-pytest", "low-pytest"]
    rows, _ = records.read_ledger(str(root / ".lessonbank"))
    assert sorted(r["lesson"] for r in rows) == ["high-pytest", "low-pytest"]


def test_compaction_re_allows_high_priority_lessons_only(root: Path) -> None:
    assert slugs(context(run(bash(root, "pytest")))) == ["high-pytest", "low-pytest"]
    assert context(run(bash(root, "pytest"))) == ""
    start = run(payload("SessionStart", root, source="compact"))
    assert "#lesson" in context(start)
    assert slugs(context(run(bash(root, "pytest")))) == ["high-pytest"]


def test_compaction_threshold_from_bank_toml(tmp_path: Path) -> None:
    root = tmp_path / "p"
    make_bank(root, LESSONS, toml="[recall]\ncompact_priority = 2\n")
    assert slugs(context(run(bash(root, "pytest")))) == ["high-pytest", "low-pytest"]  # both claimed
    run(payload("SessionStart", root, source="compact"))
    assert slugs(context(run(bash(root, "pytest")))) == ["high-pytest", "low-pytest"]


def test_clear_forgets_all_claims(root: Path) -> None:
    assert slugs(context(run(bash(root, "pytest")))) == ["high-pytest", "low-pytest"]  # both claimed
    run(payload("SessionStart", root, source="clear"))
    assert slugs(context(run(bash(root, "pytest")))) == ["high-pytest", "low-pytest"]


def test_startup_and_resume_keep_claims(root: Path) -> None:
    # The first call and each SessionStart must answer, or a hook failing open would pass the "".
    assert slugs(context(run(bash(root, "pytest")))) == ["high-pytest", "low-pytest"]
    for source in ("startup", "resume"):
        assert "#lesson" in context(run(payload("SessionStart", root, source=source)))
    assert context(run(bash(root, "pytest"))) == ""


def test_session_start_protocol_only_where_there_is_a_bank(root: Path, tmp_path: Path) -> None:
    text = context(run(payload("SessionStart", root)))
    assert text.startswith("lessonbank: this project keeps a bank of lessons")
    for field in ("#lesson", "tool:", "trigger:", "mistake:", "fix:", "tags:", "promote-to:", "#/lesson"):
        assert field in text
    assert "bank capture" in text and "do not force a lesson" in text
    bare = tmp_path / "no-bank"
    bare.mkdir()
    assert run(payload("SessionStart", bare)).stdout == b""


def test_off_mode_hands_over_nothing_and_records_nothing(root: Path) -> None:
    (root / ".lessonbank" / "mode").write_text("off\n", encoding="utf-8")
    assert run(bash(root, "pytest")).stdout == b""
    assert run(payload("SessionStart", root)).stdout == b""
    assert run(payload("PostToolUseFailure", root, tool_input={"command": "pytest"})).stdout == b""
    assert not (root / ".lessonbank" / "sessions").exists()
    assert not (root / ".lessonbank" / "ledger.jsonl").exists()
    (root / ".lessonbank" / "mode").write_text("on\n", encoding="utf-8")
    assert slugs(context(run(bash(root, "pytest")))) == ["high-pytest", "low-pytest"]


def test_test_mode_asks_the_trial_for_the_arm(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from lessonbank.hooks import dispatch
    from lessonbank.state import arms

    (root / ".lessonbank" / "mode").write_text("test\n", encoding="utf-8")
    calls = []

    def without(state_dir: str, session_id: str) -> str:
        calls.append((state_dir, session_id))
        return "without"

    monkeypatch.setattr(arms, "assign", without)
    data = bash(root, "pytest", session_id="t1", tool_use_id="toolu_9")
    assert dispatch.handle(json.dumps(data).encode(), raise_errors=True) == ""
    turn = data["prompt_id"]
    assert calls == [(str(root / ".lessonbank"), "t1")]
    rows, _ = records.read_ledger(str(root / ".lessonbank"))
    # e.g. "- [high-pytest] high pytest. When working on high pytest: remember high-pytest"
    assert rows == [
        {"session": "t1", "turn": turn, "lesson": slug, "event": "PreToolUse", "bytes": size,
         "arm": "without", "injected": False, "tool_use_id": "toolu_9", "layer": "project"}
        for slug, size in (("high-pytest", 78), ("low-pytest", 74))
    ]  # fmt: skip
    # The would-be injection still claims the lessons: both arms see each lesson once a session.
    assert dispatch.handle(json.dumps(data).encode(), raise_errors=True) == ""
    assert len(calls) == 1


def test_test_mode_assigns_a_session_when_it_starts(root: Path) -> None:
    state_dir = root / ".lessonbank"
    (state_dir / "mode").write_text("test\n", encoding="utf-8")
    start = run(payload("SessionStart", root, source="startup", session_id="fresh"))
    assert "#lesson" in context(start)  # the same protocol whatever the arm
    arm = (state_dir / "trial/session-arms/fresh").read_text(encoding="utf-8")
    assert (state_dir / "trial/assignments.tsv").read_text(encoding="utf-8") == f"0\tfresh\t{arm}\n"
    run(payload("SessionStart", root, source="compact", session_id="fresh"))
    assert (state_dir / "trial/assignments.tsv").read_text(encoding="utf-8") == f"0\tfresh\t{arm}\n"


def test_ledger_bytes_are_the_lines_handed_over(root: Path) -> None:
    text = context(run(bash(root, "pytest", session_id="l1")))
    rows, _ = records.read_ledger(str(root / ".lessonbank"))
    lines = text.splitlines()[1:]
    assert [r["bytes"] for r in rows] == [len(line.encode()) for line in lines]
    assert {(r["arm"], r["injected"], r["event"]) for r in rows} == {("on", True, "PreToolUse")}


def test_turn_is_the_prompt_id_else_a_counter(root: Path) -> None:
    session = statedir.Session(str(root / ".lessonbank"), "counter")
    assert session.turn("abc") == "abc"
    assert session.turn(None) == "0"
    for _ in range(2):
        run(payload("UserPromptSubmit", root, session_id="counter", prompt="hello there"))
    assert session.turn(None) == "2"


def test_unsafe_session_ids_stay_inside_the_state_folder(root: Path) -> None:
    run(bash(root, "pytest", session_id="../../escape"))
    assert not (root.parent / "escape").exists()
    assert [p.name for p in (root / ".lessonbank" / "sessions").iterdir()] == ["%2E.%2F..%2Fescape"]
