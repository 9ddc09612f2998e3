"""Groom re-verifies each lesson against the committed code: its checks, never the bank's own files, and a command only when asked."""

from __future__ import annotations

import subprocess
from pathlib import Path

import yaml

from tests.conftest import git, run
from tests.groom import groom_support
from tests.groom.groom_support import add_lesson, commit_all, write

# The fixtures of groom_support: a bank with a small project in a real git repository.
bank = groom_support.bank


def test_run_commands_only_when_asked(bank: Path) -> None:
    add_lesson(bank, "fails", "rule:testing", verify={"command": "exit 3"})
    add_lesson(bank, "hangs", "rule:testing", verify={"command": "sleep 29.731"})
    commit_all(bank, "lessons")
    plain = run(bank, "groom", "--dry-run", "--json")
    decisions = {d["lesson"]: (d["decision"], d["reason"]) for d in yaml.safe_load(plain.stdout)}
    assert decisions["fails"][0] == decisions["hangs"][0] == "promote"
    assert decisions["fails"][1] == (
        "seen in 2 sessions; no check ran: verify.command not run (pass --run-commands); vouched for by tester"
    )
    asked = run(bank, "groom", "--dry-run", "--json", "--run-commands", "--timeout", "0.3")
    decisions = {d["lesson"]: (d["decision"], d["reason"]) for d in yaml.safe_load(asked.stdout)}
    assert decisions == {
        "fails": ("delete", "verify.command `exit 3` failed (exit 3)"),
        "hangs": ("needs-review", "verify.command `sleep 29.731` timeout (timed out after 0.3s)"),
    }
    assert "sleep 29.731" not in subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout


def test_a_lesson_cannot_verify_itself_through_the_bank_files(bank: Path) -> None:
    # The pattern is quoted by the lesson file, INDEX.md, BANK.md and a rule: none of them counts.
    add_lesson(
        bank, "quoted", "rule:testing", title="Avoid frobnicate_now", verify={"match": ["frobnicate_now"]}
    )
    write(bank, {"rules/testing.md": "# Rules\n\nNever call frobnicate_now.\n"})
    assert run(bank, "index").exit_code == 0
    commit_all(bank, "a lesson that quotes its own pattern")
    assert "frobnicate_now" in (bank / "BANK.md").read_text()
    result = run(bank, "groom", "--dry-run")
    assert (
        "quoted  delete    verify.match `frobnicate_now` no longer matches any tracked file" in result.output
    )
    write(bank, {"src/frob.py": "frobnicate_now()\n"})
    commit_all(bank, "now the code uses it")
    assert "quoted  promote" in run(bank, "groom", "--dry-run").output


def test_scanned_lessons_are_promoted_on_the_check_they_ran(bank: Path) -> None:
    """Groom on accepted scanned lessons: each reason names its check; a failed check deletes."""
    write(bank, {"tests/setup.ts": "afterEach(() => vi.clearAllMocks())\n"})
    add_lesson(
        bank, "vitest-queued-mocks", "rule:testing", source="scanned",
        verify={"paths": ["tests/setup.ts", "src/db.py"], "match": ["clearAllMocks"]},
    )  # fmt: skip
    add_lesson(bank, "old-flag", "rule:testing", source="scanned", verify={"match": [r"--legacy-peer-deps"]})
    add_lesson(bank, "no-check", "rule:testing", source="scanned", verified={})
    commit_all(bank, "scanned lessons")
    result = run(bank, "groom", "--commit")
    assert result.exit_code == 0, result.output
    assert git(bank, "log", "-1", "--format=%B") == (
        "bank groom: promote 1, delete 1, review 0\n\n"
        "Promoted:\n"
        "- vitest-queued-mocks -> rules/testing.md: seen in 2 sessions; re-verified: verify.paths 2 of 2 tracked; "
        "verify.match `clearAllMocks` found in tests/setup.ts\n\n"
        "Deleted as stale:\n"
        "- old-flag: verify.match `--legacy-peer-deps` no longer matches any tracked file\n\n"
    )
    assert not (bank / "lessons" / "old-flag.md").exists()
    # Nothing to check and nobody vouching: it waits, and says so.
    plan = run(bank, "groom", "--dry-run", "--json")
    waiting = {d["lesson"]: (d["decision"], d["reason"]) for d in yaml.safe_load(plan.stdout)}["no-check"]
    assert waiting == ("wait", "nothing to check: it names no file, script, key or code the repository holds; "
                               "it waits for a verify check or a person's `verified: {by: <name>}`")
    # The check holds only while the code does: once the identifier is gone, a re-groom of the
    # same lesson deletes it and says which check failed.
    add_lesson(bank, "vitest-queued-mocks", "rule:api", source="scanned", verify={"match": ["clearAllMocks"]})
    write(bank, {"tests/setup.ts": "afterEach(() => vi.resetAllMocks())\n"})
    commit_all(bank, "reset, not clear")
    again = run(bank, "groom", "--dry-run", "--json")
    decisions = {d["lesson"]: (d["decision"], d["reason"]) for d in yaml.safe_load(again.stdout)}
    assert decisions["vitest-queued-mocks"] == (
        "delete", "verify.match `clearAllMocks` no longer matches any tracked file"
    )
