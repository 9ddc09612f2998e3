"""End to end: the bank's hooks installed in a project, driven by the real Claude Code CLI.

Each test builds a git project with `bank init`, two captured lessons, `bank index` and
`bank install claude`, then runs one short `claude -p` session against the scripted model and
reads what reached the model (see claude_harness). One test installs into a project with no bank;
another skips the install and loads this repository as a plugin (`--plugin-dir`) instead.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from lessonbank.bank.lesson import parse
from tests.hook_support import CALC_LESSON

from .claude_harness import REPO, ClaudeRun, Runner
from .model_server import Bash, Text

pytestmark = pytest.mark.e2e

HOOK_EVENTS = ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop")

PYTEST_LESSON = [
    "--title", "pytest needs -p no:randomly here",
    "--when", "running pytest in this project",
    "--do", "pass -p no:randomly because the suite depends on test order",
    "--promote-to", "rule:testing",
    "--tags", "tool:pytest",
    "--keywords", "pytest,randomly",
    "--trigger-tool", "Bash",
    "--trigger-command", r"\bpytest\b",
]  # fmt: skip
DATABASE_LESSON = [
    "--title", "start postgres before the database tests",
    "--when", "the database fixture times out",
    "--do", "start the local postgres with make db before running the suite",
    "--promote-to", "rule:database",
    "--tags", "area:database",
    "--keywords", "database,fixture,postgres",
]  # fmt: skip

GOOD_CALC = "def add(a, b):\n    return a + b\n"
# A different length from GOOD_CALC, so a stale .pyc can never pass for the fix.
BAD_CALC = "def add(a, b):\n    return a - b  # wrong\n"
TEST_CALC = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
FIX_CALC = "printf 'def add(a, b):\\n    return a + b\\n' > calc.py"

LESSON_BLOCK = "Fixed: calc.add subtracted its arguments.\n\n" + CALC_LESSON


GIT_IDENTITY = {
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "E2E Test",
    "GIT_AUTHOR_EMAIL": "e2e@example.invalid",
    "GIT_COMMITTER_NAME": "E2E Test",
    "GIT_COMMITTER_EMAIL": "e2e@example.invalid",
}
# What the Bash tool and the hooks run with: a real pytest, minus the start-up cost of every
# plugin installed beside it (seconds here) and minus cache/bytecode litter in the project.
SESSION_ENV = {
    **GIT_IDENTITY,
    "PYTHONDONTWRITEBYTECODE": "1",
    "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
    "PYTEST_ADDOPTS": "-p no:cacheprovider",
}


def bank(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run `bank` as a subprocess in the project; fail the test on a non-zero exit."""
    home = project.parent / "bank-home"
    home.mkdir(exist_ok=True)
    done = subprocess.run(
        [sys.executable, "-m", "lessonbank", *args],
        cwd=project,
        capture_output=True,
        text=True,
        env={**os.environ, **SESSION_ENV, "HOME": str(home)},
    )
    assert done.returncode == 0, f"bank {shlex.join(args)} -> {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done


def git_project(root: Path, calc: str) -> Path:
    """A git repository holding calc.py and a pytest test for it."""
    root.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=root, check=True, env=GIT_IDENTITY)
    (root / "calc.py").write_text(calc)
    (root / "test_calc.py").write_text(TEST_CALC)
    return root


def lesson_files(project: Path) -> set[Path]:
    return set((project / "lessons").glob("*.md"))


def slugs(project: Path) -> dict[str, str]:
    """Title -> slug of every lesson file."""
    found = {}
    for path in lesson_files(project):
        lesson = parse(path.read_text(encoding="utf-8"))
        found[lesson.title] = lesson.slug
    return found


class Banked:
    """A project with a bank, the two lessons, a fresh index and the agent's hooks installed."""

    def __init__(self, root: Path, calc: str = GOOD_CALC, install: bool = True, agent: str = "claude") -> None:
        self.root = git_project(root, calc)
        bank(self.root, "init")
        bank(self.root, "capture", *PYTEST_LESSON)
        bank(self.root, "capture", *DATABASE_LESSON)
        bank(self.root, "index")
        if install:
            bank(self.root, "install", agent)
        titles = slugs(self.root)
        self.pytest_slug = titles["pytest needs -p no:randomly here"]
        self.database_slug = titles["start postgres before the database tests"]
        self.lessons = lesson_files(self.root)


@pytest.fixture(scope="module")
def shared_bank(tmp_path_factory: pytest.TempPathFactory) -> Banked:
    """One banked project for the tests that only read it (each CLI run is its own session)."""
    return Banked(tmp_path_factory.mktemp("shared") / "project")


def assert_protocol(run: ClaudeRun) -> None:
    """The SessionStart protocol reached the model once and says how to report a lesson."""
    protocol = run.hook_contexts("SessionStart")
    assert len(protocol) == 1, run.explain()
    assert "#lesson" in protocol[0]
    assert "bank capture" in protocol[0]


def test_a_command_lesson_reaches_the_first_pytest_call_only(shared_bank: Banked, claude: Runner) -> None:
    project = shared_bank
    script = [Bash("pytest -q"), Bash("pytest -q"), Text("Both runs passed.")]

    run = claude(project.root, "run the checks twice", script, env=SESSION_ENV)

    assert run.returncode == 0, run.explain()
    first, second = run.calls()
    assert (first.command, first.is_error, second.is_error) == ("pytest -q", False, False)
    pre_first = first.contexts("PreToolUse")
    assert len(pre_first) == 1, run.explain()
    assert project.pytest_slug in pre_first[0]
    assert project.database_slug not in pre_first[0]
    assert second.contexts("PreToolUse") == [], run.explain()
    assert_protocol(run)
    assert run.stop_feedback() == []


def test_a_prompt_sharing_words_with_a_lesson_gets_it(shared_bank: Banked, claude: Runner) -> None:
    project = shared_bank

    run = claude(
        project.root,
        "the database fixture keeps timing out, what should I check?",
        [Text("Start postgres first.")],
        env=SESSION_ENV,
    )

    assert run.returncode == 0, run.explain()
    recalled = run.hook_contexts("UserPromptSubmit")
    assert len(recalled) == 1, run.explain()
    assert project.database_slug in recalled[0]
    assert project.pytest_slug not in recalled[0]
    assert run.calls() == []


def test_a_commit_message_mentioning_pytest_triggers_nothing(shared_bank: Banked, claude: Runner) -> None:
    project = shared_bank
    script = [
        Bash('git commit -q --allow-empty -m "pytest hang"'),
        Bash("pytest -q"),
        Text("Committed and tested."),
    ]

    run = claude(project.root, "commit, then run the checks", script, env=SESSION_ENV)

    assert run.returncode == 0, run.explain()
    commit, check = run.calls()
    assert not commit.is_error, run.explain()
    assert commit.contexts("PreToolUse") == [], run.explain()
    # The lesson is still live: the commit neither fired nor claimed it.
    assert any(project.pytest_slug in c for c in check.contexts("PreToolUse")), run.explain()


def test_a_failing_check_made_to_pass_gets_exactly_one_stop_nudge(tmp_path: Path, claude: Runner) -> None:
    project = Banked(tmp_path / "project", calc=BAD_CALC)
    script = [
        Bash("pytest -q"),
        Bash(FIX_CALC),
        Bash("pytest -q"),
        Text("Fixed add()."),
        Text("One-off slip: a typo in add()."),
    ]

    run = claude(project.root, "make the checks pass", script, env=SESSION_ENV)

    assert run.returncode == 0, run.explain()
    failing, _, passing = run.calls()
    assert (failing.is_error, passing.is_error) == (True, False), run.explain()
    nudges = run.stop_feedback()
    assert len(nudges) == 1, run.explain()
    assert "bank capture" in nudges[0]
    assert "one-off slip" in nudges[0].lower()
    assert run.result["result"] == "One-off slip: a typo in add()."
    assert lesson_files(project.root) == project.lessons


def test_a_lesson_block_in_the_final_message_becomes_a_lesson_file(tmp_path: Path, claude: Runner) -> None:
    project = Banked(tmp_path / "project", calc=BAD_CALC)
    script = [Bash("pytest -q"), Bash(FIX_CALC), Bash("pytest -q"), Text(LESSON_BLOCK)]

    run = claude(project.root, "make the checks pass", script, env=SESSION_ENV)

    assert run.returncode == 0, run.explain()
    assert run.stop_feedback() == [], run.explain()
    new = lesson_files(project.root) - project.lessons
    assert len(new) == 1, run.explain()
    text = new.pop().read_text()
    assert "calc.add subtracted its arguments" in text
    assert "rule:testing" in text
    (slug,) = set(slugs(project.root).values()) - {project.pytest_slug, project.database_slug}
    assert slug in (project.root / "INDEX.md").read_text()
    bank(project.root, "index", "--check")


LOGGER = """\
import json, sys
payload = json.load(sys.stdin)
with open(sys.argv[1], "a") as f:
    f.write(payload["hook_event_name"] + "\\n")
"""


def test_a_project_without_a_bank_sees_no_hook_output(tmp_path: Path, claude: Runner) -> None:
    project = git_project(tmp_path / "project", BAD_CALC)
    # The user's own silent hook proves each event fired; `bank install` must keep it.
    logger = tmp_path / "logger.py"
    logger.write_text(LOGGER)
    fired = tmp_path / "fired.txt"
    command = shlex.join([sys.executable, str(logger), str(fired)])
    mine = {"hooks": [{"type": "command", "command": command}]}
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").write_text(
        json.dumps({"hooks": {e: [mine] for e in (*HOOK_EVENTS, "PostToolUseFailure")}})
    )
    # `bank install` runs from a bank; the project it installs into has none.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    bank(elsewhere, "init")
    bank(elsewhere, "install", "claude", "--project", str(project))
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    for event in HOOK_EVENTS:
        commands = [h["command"] for e in settings["hooks"][event] for h in e["hooks"]]
        assert command in commands, event
        assert len(commands) == 2, f"no bank hook installed for {event}: {commands}"
    before = sorted(p.name for p in project.iterdir())
    script = [Bash("pytest -q"), Bash(FIX_CALC), Bash("pytest -q"), Text(LESSON_BLOCK)]

    run = claude(project, "the database fixture fails under pytest", script, env=SESSION_ENV)

    assert run.returncode == 0, run.explain()
    assert set(fired.read_text().split()) >= {*HOOK_EVENTS, "PostToolUseFailure"}
    assert run.transcript(), run.explain()  # else hook_attachments() is empty for want of a file
    assert run.hook_attachments() == [], run.explain()
    assert "hook additional context" not in run.everything()
    assert run.stop_feedback() == []
    assert all(c.reminders == [] for c in run.calls()), run.explain()
    assert sorted(p.name for p in project.iterdir()) == before


def test_the_plugin_folder_serves_the_same_hooks_without_install(tmp_path: Path, claude: Runner) -> None:
    project = Banked(tmp_path / "project", install=False)
    assert not (project.root / ".claude").exists()
    script = [Bash("pytest -q"), Text("Passed.")]

    run = claude(
        project.root, "run the checks", script, env=SESSION_ENV, extra_args=["--plugin-dir", str(REPO)]
    )

    assert run.returncode == 0, run.explain()
    (check,) = run.calls()
    assert any(project.pytest_slug in c for c in check.contexts("PreToolUse")), run.explain()
    assert_protocol(run)
