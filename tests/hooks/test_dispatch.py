"""The hook as a process: fails open, costs nothing without a bank, loads nothing heavy."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from lessonbank.install import launcher
from tests.hook_support import EVENTS, PROBE, bash, context, lesson, make_bank, payload, run

HEAVY = ("click", "yaml", "jinja2", "frontmatter", "markdown_it", "git")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    make_bank(
        tmp_path / "proj",
        [
            lesson(
                "pytest-lesson",
                commands=[r"\bpytest\b(?!.*--lf)"],
                keywords=["pytest"],
                tags=["tool:pytest"],
                do="fix the failing tests",
            ),
            lesson("migrations", paths=["migrations/**"]),
        ],
    )
    return tmp_path / "proj"


@pytest.mark.parametrize(
    "stdin",
    [b"", b"garbage", b"[1, 2]", b'{"hook_event_name": "PreToolUse"', b"\xff\xfe\x00", b"null", b'"text"'],
)
def test_garbage_in_nothing_out(stdin: bytes) -> None:
    done = run(stdin)
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")


@pytest.mark.parametrize(
    ("changes", "answers"),
    [
        ({"hook_event_name": "NoSuchEvent"}, False),
        ({"tool_name": None}, False),
        ({"tool_input": "not a dict"}, False),
        ({"tool_input": {"command": 42}}, False),
        ({"session_id": None}, True),  # no session: still answered, nothing claimed for later
    ],
)
def test_odd_payloads_fail_open(root: Path, changes: dict, answers: bool) -> None:
    done = run({**bash(root, "pytest"), **changes})
    assert done.returncode == 0 and done.stderr == b""
    assert bool(done.stdout) is answers
    assert not (root / ".lessonbank" / "hook.log").exists()  # odd, not broken: nothing to log


def test_a_payload_without_a_cwd_uses_the_process_folder(root: Path, tmp_path: Path) -> None:
    data = {**bash(root, "pytest"), "cwd": 7}
    assert run(data, cwd=tmp_path).stdout == b""  # no bank above the folder: silent
    assert "pytest" in context(run(data, cwd=root))


def test_internal_errors_are_logged_not_shown(root: Path) -> None:
    (root / "INDEX.md").write_text("| lesson | broken |\n", encoding="utf-8")
    (root / ".lessonbank" / "index.bin").unlink()
    done = run(bash(root, "pytest"))
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    log = (root / ".lessonbank" / "hook.log").read_text(encoding="utf-8")
    assert "PreToolUse" in log and "IndexFormatError" in log


def test_no_bank_no_output_no_files(tmp_path: Path) -> None:
    project = tmp_path / "plain"
    project.mkdir()
    for name in EVENTS[:-1]:  # SessionEnd has no handler
        done = run(payload(name, project))
        assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    assert list(project.iterdir()) == []




def _modules(data: dict) -> tuple[str, set[str]]:
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", PROBE, str(launcher.entry_script())],
        input=json.dumps(data).encode(),
        capture_output=True,
        timeout=60,
    )
    line = next(x for x in done.stderr.decode().splitlines() if x.startswith("MODULES "))
    return done.stdout.decode(), set(line.split()[1:])


@pytest.mark.parametrize(
    "event",
    [
        "PreToolUse",
        "PreToolUse-Edit",
        "UserPromptSubmit",
        "SessionStart",
        "PostToolUseFailure",
        "PostToolUse",
        "Stop",
    ],
)
def test_hook_loads_nothing_heavy(root: Path, event: str) -> None:
    if event == "PreToolUse":
        data = bash(root, "python -m pytest -x")
    elif event == "PreToolUse-Edit":
        data = payload(
            "PreToolUse", root, tool_name="Edit", tool_input={"file_path": str(root / "migrations/1.py")}
        )
    elif event in ("PostToolUse", "PostToolUseFailure"):
        data = payload(event, root, tool_input={"command": "pytest"})
    elif event == "Stop":
        data = payload("Stop", root, last_assistant_message="All done.")
    else:
        data = payload(event, root)
    out, modules = _modules(data)
    if event.startswith("PreToolUse") or event in ("SessionStart", "UserPromptSubmit"):
        assert "additionalContext" in out, "the probe must exercise the path that answers"
    assert modules.isdisjoint(HEAVY), modules & set(HEAVY)
    assert "json" not in modules and "os" not in modules
    if event.startswith("PreToolUse"):
        assert "re" not in modules, "a supported regex runs without importing re"
