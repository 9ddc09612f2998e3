"""Helpers for the hook tests: banks in tmp_path, real Claude Code payloads, hook processes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from lessonbank.bank.lesson import Lesson, render
from lessonbank.bank.render import regenerate
from lessonbank.bank.store import Bank
from lessonbank.install.launcher import entry_script

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "claude-code-2.1.197"
# The Claude Code hook events recorded in FIXTURES, in the order a session fires them.
EVENTS = (
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "Stop",
    "SessionEnd",
)
# The lesson an agent writes after fixing calc.add (the hooks' and the e2e tests' shared example).
CALC_LESSON = """\
#lesson
tool: Bash
trigger: pytest
mistake: calc.add subtracted its arguments so test_add failed under pytest
fix: keep calc.add returning a + b and rerun pytest -q after editing calc.py
tags: tool:pytest, area:calc
promote-to: rule:testing
#/lesson"""
HOOK = [sys.executable, "-I", "-S", str(entry_script())]
# `python -I -S -c PROBE <hook script> [args]` runs the hook script and, as the process ends
# (entry.py ends it with posix._exit, which skips atexit), writes "MODULES <every module loaded>"
# to stderr: what the tests check the hook process never imports.
PROBE = """
import posix, sys
_exit = posix._exit
def report(code):
    sys.stderr.write("MODULES " + " ".join(sorted(sys.modules)) + "\\n")
    sys.stderr.flush()
    _exit(code)
posix._exit = report
path = sys.argv[1]
sys.argv = sys.argv[1:]
exec(compile(open(path).read(), path, "exec"), {"__name__": "__main__", "__file__": path})
"""


def lesson(slug: str, **fields: Any) -> Lesson:
    """A valid lesson with sensible defaults; `fields` override any attribute."""
    values: dict[str, Any] = {
        "id": "01TEST" + slug.upper().replace("-", "")[:20].ljust(20, "0"),
        "slug": slug,
        "title": slug.replace("-", " "),
        "when": f"working on {slug.replace('-', ' ')}",
        "do": f"remember {slug}",
        "promote_to": "rule:testing",
        "created": "2026-11-29",
        "updated": "2026-11-29",
    }
    values.update(fields)
    return Lesson(**values)


def write_lesson(folder: Path, item: Lesson) -> Path:
    """`item` written to `folder` as `<slug>.md`, as the bank writes it (nothing regenerated)."""
    path = folder / f"{item.slug}.md"
    path.write_text(render(item), encoding="utf-8")
    return path


def make_bank(root: Path, lessons: list[Lesson], toml: str = "") -> Bank:
    """A bank at `root` holding `lessons`, with INDEX.md and the compiled index generated."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "bank.toml").write_text(toml, encoding="utf-8")
    (root / "lessons").mkdir(exist_ok=True)
    for item in lessons:
        write_lesson(root / "lessons", item)
    bank = Bank.open(root)
    regenerate(bank)
    return bank


def payload(name: str, root: Path | str, **changes: Any) -> dict[str, Any]:
    """A real Claude Code 2.1.197 payload (tests/fixtures) moved to `root`, with `changes`."""
    data: dict[str, Any] = json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))
    data["cwd"] = str(root)
    data.update(changes)
    return data


def bash(root: Path | str, command: str, **changes: Any) -> dict[str, Any]:
    """A PreToolUse payload for a Bash call."""
    return payload("PreToolUse", root, tool_input={"command": command, "description": "x"}, **changes)


def run(data: dict[str, Any] | str | bytes, cwd: Path | str = "/") -> subprocess.CompletedProcess[bytes]:
    """Run the hook as installed, in its own process, with `data` on stdin.

    It runs in `cwd`, by default a folder with no bank above it: a payload without a usable cwd
    must never reach the bank of whatever folder the tests were started in.
    """
    if isinstance(data, dict):
        data = json.dumps(data)
    if isinstance(data, str):
        data = data.encode("utf-8")
    return subprocess.run(HOOK, input=data, capture_output=True, timeout=60, cwd=cwd)


def context(done: subprocess.CompletedProcess[bytes]) -> str:
    """The additionalContext of a hook's answer ("" when it printed nothing)."""
    assert done.returncode == 0, done.stderr
    if not done.stdout.strip():
        return ""
    return str(json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"])


def slugs(text: str) -> list[str]:
    """The lesson slugs named in an injected context, in order."""
    return [line[3 : line.index("]")] for line in text.splitlines() if line.startswith("- [")]
