"""`bank replay` end to end: transcripts on disk, a bank made with `bank init`, the real PreToolUse code, exact output."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run
from tests.scan.test_learning import Claude

NOT_FOUND = "/bin/bash: line 1: nvcc: command not found"


def history(folder: Path) -> Path:
    """Two sessions where nvcc is not on PATH and the full path works, then a third that makes the mistake again."""
    folder.mkdir()
    for day, session in (("2026-01-01", "s1"), ("2026-01-02", "s2")):
        t = Claude(session, day=day).user("build the kernel").bash("nvcc --version", NOT_FOUND, 127)
        t.bash("/usr/local/cuda/bin/nvcc --version", "Cuda compilation tools, release 12.6").write(folder, f"{session}.jsonl")
    later = Claude("s3", day="2026-01-05").user("build it again").bash("git status", "clean")
    later.bash("nvcc -o k k.cu", NOT_FOUND, 127).bash("/usr/local/cuda/bin/nvcc -o k k.cu", "")
    later.bash("ls /nowhere", "ls: cannot access '/nowhere': No such file or directory", 2).write(folder, "s3.jsonl")
    return folder


def test_replay_counts_the_repeat_the_learned_lesson_intercepts(bank: Path, tmp_path: Path) -> None:
    folder = history(tmp_path / "transcripts")
    result = run(bank, "replay", "--path", str(folder), "--accept-above", "0", "--chart", str(tmp_path / "c.svg"))
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[:3] == [
        "learned from 2 session(s) before 2026-01-05T00:00:03Z: 1 candidate(s), 1 accepted at confidence 0.00 or more",
        "replayed 1 session(s), 4 tool calls: 2 shell failures, 1 repeat an error of an earlier session, "
        "1 intercepted (1 by the lesson learned from that error)",
        "lessons handed over 1 time(s): 0 on calls that succeeded, 1 on calls that failed; ~132 tokens (bytes/4)",
    ]
    assert "not-found  1         1        1" in result.output
    assert lines[-1] == f"wrote {tmp_path / 'c.svg'}"
    svg = (tmp_path / "c.svg").read_text()
    assert svg.startswith("<svg ") and "1 of 2 later failures repeat" in svg
    # The bank itself is untouched: the lessons were learned in a temporary one.
    assert not list((bank / "lessons").glob("*.md"))


def test_replay_json_and_chart_are_deterministic(bank: Path, tmp_path: Path) -> None:
    folder = history(tmp_path / "transcripts")
    outs = [run(bank, "replay", "--path", str(folder), "--accept-above", "0", "--json", "--chart", str(tmp_path / f"{n}.svg"))
            for n in (1, 2)]  # fmt: skip
    assert outs[0].output == outs[1].output
    assert (tmp_path / "1.svg").read_bytes() == (tmp_path / "2.svg").read_bytes()
    data = json.loads(outs[0].output)
    assert (data["repeats"], data["intercepted"], data["fires_on_success"]) == (1, 1, 0)
    assert data["lessons"][0]["intercepted"] == 1


def test_replay_at_the_default_threshold_and_with_too_few_sessions(bank: Path, tmp_path: Path) -> None:
    folder = history(tmp_path / "transcripts")
    result = run(bank, "replay", "--path", str(folder))
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[0].endswith("accepted at confidence 0.80 or more")
    result = run(bank, "replay", "--path", str(folder), "--before", "2025-01-01")
    assert result.exit_code == 1
    assert "nothing to replay: 3 session(s) with tool calls, 0 before 2025-01-01 and 3 from it on" in result.output
