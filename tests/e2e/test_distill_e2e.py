"""`bank review --distill` and `bank scan --distill` with the real Claude Code CLI (`claude -p`) as the distiller.

The scripted model server plays the model: the test reads the prompt the CLI sent (the fixed
template, or the bank's own override, with the candidate's evidence) and checks that the answer went
through the `#lesson` parser onto the candidate, which still waits for review.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from tests.conftest import run

from .claude_harness import QUIET_ENV, find_claude
from .model_server import ModelServer, Text

TRANSCRIPT = [
    {"type": "tool_use", "id": "c1", "name": "Bash", "input": {"command": "python run.py --help"}},
    {"tool_use_id": "c1", "type": "tool_result", "content": "Exit code 127\n/bin/bash: line 1: python: command not found",
     "is_error": True},
    {"type": "tool_use", "id": "c2", "name": "Bash", "input": {"command": "python3 run.py --help"}},
    {"tool_use_id": "c2", "type": "tool_result", "content": "usage: run.py", "is_error": False},
]  # fmt: skip
ANSWER = (
    "#lesson\ntitle: Use python3 on this machine\nwhen: running a Python script with `python`, which is not "
    "installed here\ndo: call `python3` instead of `python`\ntool: Bash\ntrigger: \\bpython\\b(?!3)\n#/lesson"
)


def transcript(folder: Path) -> Path:
    lines = []
    for n, block in enumerate(TRANSCRIPT):
        role = "assistant" if block["type"] == "tool_use" else "user"
        lines.append(json.dumps({"type": role, "sessionId": "s1", "cwd": "/p", "timestamp": f"2026-01-01T00:00:0{n}Z",
                                 "message": {"role": role, "content": [block]}}, separators=(",", ":")))  # fmt: skip
    path = folder / "s1.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture
def distiller(bank: Path, monkeypatch: pytest.MonkeyPatch, isolated_home: Path) -> Path:
    """The user's own config names the real `claude -p` (HOME, PATH and the quiet settings set for the CLI)."""
    binary = find_claude()
    assert binary is not None
    config = isolated_home / ".config" / "lessonbank" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f'[scan]\ndistill_command = "{binary} -p"\n', encoding="utf-8")
    for key, value in QUIET_ENV.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("PATH", os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
    return bank


def test_review_distill_asks_claude_and_keeps_the_answer_for_review(distiller: Path, tmp_path: Path) -> None:
    bank = distiller
    run(bank, "scan", "--path", str(transcript(tmp_path)))
    with ModelServer([Text(ANSWER)]) as server:
        os.environ["ANTHROPIC_BASE_URL"] = server.url
        try:
            result = run(bank, "review", "--distill", "--list", "--json")
        finally:
            del os.environ["ANTHROPIC_BASE_URL"]
        sent = json.dumps([r.body for r in server.requests if r.main])
    assert "A lesson states a general situation" in sent and "python3 run.py --help" in sent  # template, evidence
    [cand] = json.loads(result.stdout)  # the distill lines go to stderr beside --json
    assert (cand["title"], cand["when"], cand["do"], cand["status"]) == (
        "Use python3 on this machine",
        "running a Python script with `python`, which is not installed here",
        "call `python3` instead of `python`",
        "pending",
    )
    assert cand["commands"] == [r"\bpython\b(?!3)"] and cand["signals"]["distilled"] == 1
    assert not list((bank / "lessons").glob("*.md"))  # nothing is accepted unattended


def test_scan_distill_uses_the_banks_own_prompt_and_reads_no_lesson(distiller: Path, tmp_path: Path) -> None:
    bank = distiller
    (bank / "templates").mkdir(exist_ok=True)
    (bank / "templates" / "distill-prompt.md.j2").write_text(
        "OUR OWN PROMPT. Say no lesson unless it recurs.\n{{ cand.when }}\n", encoding="utf-8"
    )
    with ModelServer([Text("no lesson")]) as server:
        os.environ["ANTHROPIC_BASE_URL"] = server.url
        try:
            out = run(bank, "scan", "--distill", "--path", str(transcript(tmp_path))).output
        finally:
            del os.environ["ANTHROPIC_BASE_URL"]
        sent = json.dumps([r.body for r in server.requests if r.main])
    assert "OUR OWN PROMPT" in sent and "A lesson states" not in sent
    assert "the agent found no lesson" in out
    [line] = [json.loads(x) for x in (bank / ".lessonbank" / "scan" / "candidates.jsonl").read_text().splitlines()]
    assert line["status"] == "pending" and "found no lesson" in line["notes"]


def test_without_the_command_the_mechanical_lesson_stays_and_it_says_so(bank: Path, tmp_path: Path) -> None:
    run(bank, "scan", "--path", str(transcript(tmp_path)))
    out = run(bank, "review", "--distill-with", "no-such-agent -p", "--list").output
    assert out.splitlines()[0] == (
        "distill: `no-such-agent` not found; the candidates keep their mechanical lessons "
        "(name one with --distill-with)"
    )
    assert "running `python` in this environment" in out
