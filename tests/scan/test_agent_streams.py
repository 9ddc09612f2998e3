"""Copilot CLI and Gemini CLI transcripts: located (with their home overrides) and read into events
and candidates. The fixtures are real sessions of the e2e tests (Copilot CLI 1.0.102, Gemini CLI
0.61): pytest failed, the model fixed calc.py, pytest passed, and the last message held a
#lesson block. Paths were rewritten to /home/user.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from lessonbank.scan import sources
from lessonbank.scan.streams import CopilotStream, GeminiStream, sniff

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
COPILOT = FIXTURES / "copilot-cli-1.0.102" / "events-fail-fix-pass.jsonl"
GEMINI = FIXTURES / "gemini-cli-0.61" / "session-fail-fix-pass.jsonl"


def events(stream: CopilotStream | GeminiStream, path: Path) -> list:
    out = []
    for line in path.read_text().splitlines():
        out += stream.events(json.loads(line))
    return out


def test_copilot_events_carry_the_real_exit_statuses() -> None:
    stream = CopilotStream()
    found = events(stream, COPILOT)
    tools = [(e.command, e.status, e.exit_code) for e in found if e.kind == "tool"]
    assert tools[0] == ("pytest -q", "fail", 1)
    assert tools[-1] == ("pytest -q", "ok", 0)
    assert stream.cwd == "/home/user/project" and stream.session
    assert any(e.kind == "assistant" and "#lesson" in e.text for e in found)


def test_gemini_events_read_each_message_and_call_once() -> None:
    stream = GeminiStream()
    found = events(stream, GEMINI)
    tools = [(e.command, e.status, e.exit_code) for e in found if e.kind == "tool"]
    # The first pytest was held back once by the hook (no status: not a check), then ran and failed.
    assert [t for t in tools if t[0] == "pytest -q"] == [
        ("pytest -q", "unknown", None),
        ("pytest -q", "fail", 1),
        ("pytest -q", "ok", 0),
    ]
    assert sum(1 for e in found if e.kind == "assistant" and "#lesson" in e.text) == 1
    users = [e.text for e in found if e.kind == "user"]
    assert users == ["the database fixture keeps timing out; make the checks pass"]
    assert stream.project_hash == hashlib.sha256(b"/home/user/project").hexdigest()


def test_formats_are_told_apart() -> None:
    assert sniff(json.loads(COPILOT.read_text().splitlines()[0])) == "copilot"
    assert sniff(json.loads(GEMINI.read_text().splitlines()[0])) == "gemini"
    assert sniff({"type": "user", "message": {"role": "user", "content": "x"}, "sessionId": "s"}) == ""
    assert sniff({"type": "progress", "data": {"x": 1}}) == ""


@pytest.mark.parametrize("path", [COPILOT, GEMINI], ids=["copilot", "gemini"])
def test_the_scan_finds_the_lesson_block(path: Path, tmp_path: Path) -> None:
    copy = tmp_path / path.name
    shutil.copy(path, copy)
    found, stats = sources.scan_files([copy], {})
    assert (1, "lesson") in [(c.tier, c.kind) for c in found]
    lesson = next(c for c in found if c.tier == 1)
    assert "calc.add subtracted its arguments" in lesson.block
    assert stats.malformed == 0
    again, _ = sources.scan_files([copy], {str(copy): {}})  # a fresh state reads it all again
    assert [c.key for c in again] == [c.key for c in found]


def test_locate_honours_each_agents_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / "project"
    project.mkdir()
    codex_home, copilot_home, gemini_home = tmp_path / "cx", tmp_path / "cp", tmp_path / "gm"
    rollout = codex_home / "sessions" / "2026" / "11" / "30" / "rollout-x.jsonl"
    rollout.parent.mkdir(parents=True)
    rollout.write_text(json.dumps({"type": "session_meta", "payload": {"id": "c", "cwd": str(project)}}) + "\n")
    events_file = copilot_home / "session-state" / "abc" / "events.jsonl"
    events_file.parent.mkdir(parents=True)
    first = {"type": "session.start", "data": {"sessionId": "abc", "context": {"cwd": str(project)}}}
    events_file.write_text(json.dumps(first) + "\n")
    other = copilot_home / "session-state" / "def" / "events.jsonl"
    other.parent.mkdir(parents=True)
    other.write_text(json.dumps({"type": "session.start", "data": {"context": {"cwd": "/elsewhere"}}}) + "\n")
    chat = gemini_home / ".gemini" / "tmp" / "project" / "chats" / "session-1.jsonl"
    chat.parent.mkdir(parents=True)
    digest = hashlib.sha256(str(project.resolve()).encode()).hexdigest()
    chat.write_text(json.dumps({"sessionId": "g", "projectHash": digest}) + "\n")
    theirs = chat.with_name("session-2.jsonl")
    theirs.write_text(json.dumps({"sessionId": "h", "projectHash": "0" * 64}) + "\n")
    monkeypatch.setenv("CODEX_HOME", str(codex_home))
    monkeypatch.setenv("COPILOT_HOME", str(copilot_home))
    monkeypatch.setenv("GEMINI_CLI_HOME", str(gemini_home))

    found = sources.locate(project)
    everything = sources.locate(project, all_projects=True)

    assert found == [rollout, events_file, chat]
    assert {other, theirs} <= set(everything)


def test_copilot_commands_kept_between_scans_are_redacted() -> None:
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0" + "K1l2M3n4O5p6Q7r8S9t0"
    stream = CopilotStream()
    stream.pending["call-1"] = f"curl -H 'Authorization: token {token}' https://api.github.com/user"
    kept = stream.state()["pending"]["call-1"]
    assert token not in kept and "curl -H" in kept
    assert CopilotStream(stream.state()).pending["call-1"] == kept


def test_a_copilot_str_replace_editor_call_is_an_edit() -> None:
    # The hooks' Copilot adapter maps str_replace_editor to Edit; the scan must count it as an edit too.
    stream = CopilotStream()
    call = {"toolCallId": "c1", "name": "str_replace_editor", "arguments": {"path": "src/a.py"}}
    assert stream.events({"type": "assistant.message", "data": {"content": "", "toolRequests": [call]}}) == []
    done = {"type": "tool.execution_complete", "data": {"toolCallId": "c1", "success": True, "result": {"content": "ok"}}}
    [edit] = stream.events(done)
    assert (edit.tool, edit.paths, edit.command) == ("str_replace_editor", ("src/a.py",), "")
