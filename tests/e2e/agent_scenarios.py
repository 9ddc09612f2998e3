"""The scenarios every agent's real CLI goes through (test_agents_e2e).

Each builds a git project with `bank init`, the two lessons of test_hooks_e2e, `bank index` and
`bank install <agent>`, runs one headless session against the scripted server, and reads what
reached the model in each request, the checks the hooks recorded, and the lessons/ folder.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

from .agent_harness import AgentRun, run_agent
from .model_server import Bash, Text
from .test_hooks_e2e import (
    BAD_CALC,
    FIX_CALC,
    LESSON_BLOCK,
    SESSION_ENV,
    Banked,
    bank,
    git_project,
    lesson_files,
    slugs,
)

PROTOCOL = "this project keeps a bank of lessons"
RECOVERY_NUDGE = "failed earlier in this turn and passes now"
PROMPT = "the database fixture keeps timing out; make the checks pass"


def checks(project: Path) -> list[tuple[str, bool]]:
    """(check, passed) for every check the hooks recorded in the project, in order."""
    rows = []
    for path in sorted((project / ".lessonbank" / "sessions").glob("*/checks.jsonl")):
        rows += [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [(r["check"], r["ok"]) for r in rows]


def lesson_text(project: Banked, slug: str) -> str:
    """The `do` sentence of a lesson: what the model must be handed."""
    for path in lesson_files(project.root):
        if slug in path.name:
            for line in path.read_text().splitlines():
                if line.startswith("do:"):
                    return line[3:].strip().strip("\"'")
    raise AssertionError(f"no lesson {slug}")


def recall_and_capture(agent: str, tmp_path: Path, home: Path) -> tuple[Banked, AgentRun]:
    """Session start, prompt recall, a shell call's lesson in the next request, a failing then a
    passing check, and a `#lesson` block captured at the stop."""
    project = Banked(tmp_path / "project", calc=BAD_CALC, agent=agent)
    script = [Bash("pytest -q"), Bash(FIX_CALC), Bash("pytest -q"), Text(LESSON_BLOCK)]

    run = run_agent(agent, project.root, PROMPT, script, home=home, env=SESSION_ENV)

    assert run.returncode == 0, run.explain()
    first = run.texts(0)
    assert PROTOCOL in first, run.explain()  # SessionStart
    assert project.database_slug in first, run.explain()  # the prompt's words recalled it
    # The pytest lesson was not in the request that asked for pytest, and is in the very next one
    # (its text: Gemini lists the project's files, lessons/<slug>.md among them, in every request).
    pytest_lesson = lesson_text(project, project.pytest_slug)
    assert run.first_request_with(pytest_lesson) == 1, run.explain()
    # Handed over once: no later request carries it more often than that one did.
    once = run.texts(1).count(pytest_lesson)
    assert all(run.texts(i).count(pytest_lesson) <= once for i in range(len(run.main_requests)))
    # Both pytest runs really ran (the model got their output) and were recorded by their exit status.
    assert "1 failed" in run.texts(1) and "1 passed" in run.texts(3), run.explain()
    assert checks(project.root) == [("pytest", False), ("pytest", True)], run.explain()
    new = lesson_files(project.root) - project.lessons
    assert len(new) == 1, run.explain()
    assert "calc.add subtracted its arguments" in new.pop().read_text()
    (slug,) = set(slugs(project.root).values()) - {project.pytest_slug, project.database_slug}
    assert slug in (project.root / "INDEX.md").read_text()
    assert RECOVERY_NUDGE not in run.everything()
    return project, run


def recovery_nudge(agent: str, tmp_path: Path, home: Path) -> AgentRun:
    """A check that failed, then passed, with no lesson block: one request for the lesson at the stop."""
    project = Banked(tmp_path / "project", calc=BAD_CALC, agent=agent)
    script = [Bash("pytest -q"), Bash(FIX_CALC), Bash("pytest -q"), Text("Fixed add()."), Text("One-off slip: a typo in add().")]

    run = run_agent(agent, project.root, "make the checks pass", script, home=home, env=SESSION_ENV)

    assert run.returncode == 0, run.explain()
    assert checks(project.root) == [("pytest", False), ("pytest", True)], run.explain()
    asked = [i for i in range(len(run.main_requests)) if RECOVERY_NUDGE in run.texts(i)]
    assert asked, run.explain()
    # The nudge came after the model's "Fixed add()." and the model answered it; it came once.
    assert "Fixed add()." in run.texts(asked[0])
    assert "bank capture" in run.texts(asked[0])
    assert len(run.main_requests) == asked[0] + 1, run.explain()
    assert lesson_files(project.root) == project.lessons
    return run


LOGGER = """\
import json, sys
with open(sys.argv[1], "a") as f:
    f.write(sys.argv[2] + "\\n")
"""


def silent_without_a_bank_or_when_off(agent: str, tmp_path: Path, home: Path) -> None:
    """A project with no bank (hooks installed from elsewhere) and a bank turned off: the hooks
    run (a logger beside them proves it for Codex) and the model sees nothing of lessonbank."""
    bare = git_project(tmp_path / "bare", BAD_CALC)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    bank(elsewhere, "init")
    bank(elsewhere, "install", agent, "--project", str(bare))
    off = Banked(tmp_path / "off", calc=BAD_CALC, agent=agent)
    bank(off.root, "off")
    fired = tmp_path / "fired.txt"
    if agent == "codex":  # the user's own hook beside ours, kept by a re-install
        hooks_file = bare / ".codex" / "hooks.json"
        data = json.loads(hooks_file.read_text())
        mine = shlex.join([sys.executable, str(tmp_path / "logger.py"), str(fired), "PreToolUse"])
        (tmp_path / "logger.py").write_text(LOGGER)
        data["hooks"]["PreToolUse"].insert(0, {"matcher": "Bash", "hooks": [{"type": "command", "command": mine}]})
        hooks_file.write_text(json.dumps(data))
        bank(elsewhere, "install", agent, "--project", str(bare))
        assert mine in hooks_file.read_text()

    for project, lessons in ((bare, set()), (off.root, off.lessons)):
        before = sorted(p.name for p in project.iterdir())
        script = [Bash("pytest -q"), Bash(FIX_CALC), Bash("pytest -q"), Text(LESSON_BLOCK)]
        run = run_agent(agent, project, PROMPT, script, home=home, env=SESSION_ENV)
        assert run.returncode == 0, run.explain()
        seen = run.everything()
        assert PROTOCOL not in seen and "lessonbank:" not in seen.replace("lessonbank:rules", ""), run.explain()
        assert RECOVERY_NUDGE not in seen
        assert set((project / "lessons").glob("*.md")) == lessons
        if project == bare:
            assert sorted(p.name for p in project.iterdir()) == before
        else:
            assert not (project / ".lessonbank" / "sessions").exists()
    if agent == "codex":
        assert fired.read_text().split() == ["PreToolUse"] * 3  # the bare project's three Bash calls


def request_count(run: AgentRun) -> dict[str, Any]:
    return {"main": len(run.main_requests), "all": len(run.requests), "seconds": round(run.seconds, 1)}
