"""`bank groom`, `bank rules`, `bank schedule` on real temporary git repositories."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from datetime import date
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from lessonbank.bank.lesson import Lesson, parse, render
from lessonbank.bank.scaffold import crontab_line, write_ci_workflow
from lessonbank.bank.store import Bank
from lessonbank.cli import main
from lessonbank.errors import BankError
from lessonbank.groom.markers import neutralise, sections
from lessonbank.groom.promote import resolve_target
from lessonbank.groom.rulesync import BLOCK_BEGIN, BLOCK_END
from tests.conftest import git, run

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "groom"
IDS = {
    "db-timeout": "01JGR00M0000000000000000A1",
    "pytest-tty": "01JGR00M0000000000000000B2",
    "db-migrations": "01JGR00M0000000000000000C3",
    "old-api": "01JGR00M0000000000000000D4",
    "fresh": "01JGR00M0000000000000000E5",
    "anchored": "01JGR00M0000000000000000F6",
    "late": "01JGR00M0000000000000000G7",
}
PROJECT = {
    "src/db.py": "def connect(timeout=None):\n    return None\n",
    "tests/test_db.py": "import pytest\n\n\ndef test_connect():\n    assert True\n",
    "docs/testing.md": "# Testing\n\nHand-written intro: run the suite with `make test`.\n",
    "CLAUDE.md": "# Project memory\n\nHand-written: keep answers short.\n",
    "AGENTS.md": "# Agents\n\nHand-written: read the README first.\n",
}
ANCHORED = """\
---
id: {id}
slug: anchored
title: Close the pool before forking
type: gotcha
when: forking a worker while src/db.py holds an open pool
do: call pool.close() before os.fork()
promote-to: rule:testing
# checked by hand on the first incident
owner: db-team
triggers:
  tools: []
  commands: []
  paths: []
  keywords: [fork, pool]
tags: ['area:db']
seen: 3
sessions: [s1, s2, s3]
priority: 6
confidence: 0.8
source: typed
status: active   # was fine last time
created: '2026-11-01'
updated: '2026-11-01'
verified:
  at: '2026-11-01'
  commit: {commit}
verify:
  paths: [src/db.py]
---

The incident: a forked worker inherited the pool and both wrote to one socket.
"""


def golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("UPDATE_GOLDEN"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8"), f"differs from {path}"


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def lesson_text(slug: str, promote_to: str, seen: int = 2, **kw: Any) -> str:
    fields: dict[str, Any] = {
        "id": IDS.get(slug) or "01JGR00M" + hashlib.sha1(slug.encode()).hexdigest()[:18].upper(),
        "slug": slug,
        "title": slug.replace("-", " ").capitalize(),
        "when": "calling connect() from a test",
        "do": "pass timeout=5 so a dead database fails fast",
        "promote_to": promote_to,
        "seen": seen,
        "sessions": [f"s{i}" for i in range(1, seen + 1)],
        "created": "2026-11-01",
        "updated": "2026-11-01",
        "verified": {"by": "tester"},  # a person vouches: with nothing to check it is promoted, not held
    }
    fields.update(kw)
    return render(Lesson(**fields))


def add_lesson(root: Path, slug: str, promote_to: str, **kw: Any) -> Path:
    path = root / "lessons" / f"{slug}.md"
    path.write_text(lesson_text(slug, promote_to, **kw), encoding="utf-8")
    return path


def commit_all(root: Path, message: str) -> str:
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message)
    return git(root, "rev-parse", "HEAD").strip()


def files_of(root: Path) -> dict[str, bytes]:
    out = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_file() and not rel.startswith((".git/", ".lessonbank/")):
            out[rel] = path.read_bytes()
    return out


@pytest.fixture
def bank(repo: Path) -> Path:
    assert CliRunner().invoke(main, ["init", str(repo)]).exit_code == 0
    write(repo, PROJECT)
    commit_all(repo, "project")
    write(repo, {"src/db.py": PROJECT["src/db.py"] + "\n\ndef retry():\n    return connect(timeout=1)\n"})
    commit_all(repo, "db: retry")
    return repo


@pytest.fixture
def scenario(bank: Path) -> Path:
    """Six lessons: one per destination kind, one stale, one waiting, one with a changed anchor."""
    project = git(bank, "log", "--format=%H", "-1", "HEAD~1").strip()
    add_lesson(
        bank, "db-timeout", "rule:testing", commands=[r"\bpytest\b"], tags=["tool:pytest"],
        verify={"match": [r"def connect\("], "glob": "src/**/*.py"},
    )  # fmt: skip
    add_lesson(
        bank, "pytest-tty", "skill:pytest", seen=3, title="pytest hangs waiting for a TTY",
        when="pytest runs in a non-interactive shell", do="run it with stdin from /dev/null",
        tags=["tool:pytest", "severity:hang"], verified={"by": "ci-team"},
        body="# pytest hangs waiting for a TTY\n\nSeen twice in CI.\n\n## Evidence\n\n```sh\n# hung here\npytest -x\n```\n",
    )  # fmt: skip
    add_lesson(
        bank, "db-migrations", "doc:docs/testing.md", title="Reset the test database per run",
        when="tests share one database", do="drop and recreate it in a session fixture", verified={"by": "db-team"},
    )  # fmt: skip
    add_lesson(bank, "old-api", "rule:testing", verify={"match": [r"legacy_connect\("]})
    add_lesson(bank, "fresh", "rule:testing", seen=1)
    (bank / "lessons" / "anchored.md").write_text(ANCHORED.format(id=IDS["anchored"], commit=project))
    commit_all(bank, "lessons")
    return bank


def normalise(text: str, root: Path) -> str:
    for sha in git(root, "log", "--all", "--format=%H").split():
        text = text.replace(sha[:7], "<sha>")
    return text


TABLE = """\
lesson         decision      reason                                                                            destination
db-migrations  promote       seen in 2 sessions; nothing to check; vouched for by db-team                      docs/testing.md
db-timeout     promote       seen in 2 sessions; re-verified: verify.match `def connect\\(` found in src/db.py  rules/testing.md
pytest-tty     promote       seen in 3 sessions; nothing to check; vouched for by ci-team                      .claude/skills/pytest/SKILL.md
old-api        delete        verify.match `legacy_connect\\(` no longer matches any tracked file                rule:testing
anchored       needs-review  src/db.py changed since the lesson was verified at <sha>; check it still holds  rule:testing
fresh          wait          seen in 1 session; groom waits for 2                                              rule:testing
promote 3, delete 1, needs-review 1, wait 1, skip 0
"""


def test_groom_promotes_deletes_reviews_and_commits(scenario: Path) -> None:
    root = scenario
    before_anchor = (root / "lessons" / "anchored.md").read_text()
    result = run(root, "groom", "--commit")
    assert result.exit_code == 0, result.output
    assert normalise(result.output, root) == TABLE + (
        "create    .claude/skills/pytest/SKILL.md\n"
        "update    docs/testing.md\n"
        "create    rules/testing.md\n"
        "update    lessons/anchored.md\n"
        "delete    lessons/db-migrations.md\n"
        "delete    lessons/db-timeout.md\n"
        "delete    lessons/old-api.md\n"
        "delete    lessons/pytest-tty.md\n"
        "update    INDEX.md\n"
        "update    BANK.md\n"
        "update    AGENTS.md\n"
        "update    CLAUDE.md\n"
        "committed <sha>: bank groom: promote 3, delete 1, review 1\n"
    )
    golden("rules-testing.md", (root / "rules" / "testing.md").read_text())
    golden("skill-pytest.md", (root / ".claude" / "skills" / "pytest" / "SKILL.md").read_text())
    golden("doc-testing.md", (root / "docs" / "testing.md").read_text())
    golden("CLAUDE.md", (root / "CLAUDE.md").read_text())
    golden("AGENTS.md", (root / "AGENTS.md").read_text())
    golden("commit-message.txt", normalise(git(root, "log", "-1", "--format=%B"), root))
    assert sorted(p.name for p in (root / "lessons").glob("*.md")) == ["anchored.md", "fresh.md"]
    index = (root / "INDEX.md").read_text()
    assert "db-timeout" not in index and "fresh" in index
    # The needs-review edit touched the status line and added the reason; nothing else moved.
    after = (root / "lessons" / "anchored.md").read_text()
    lines_after = after.splitlines()
    review = [ln for ln in lines_after if ln.startswith("review-reason:")]
    assert [normalise(r, root) for r in review] == [
        "review-reason: src/db.py changed since the lesson was verified at <sha>; check it still holds"
    ]
    assert "status: needs-review   # was fine last time" in lines_after
    assert f"updated: '{date.today().isoformat()}'" in lines_after
    without_new = [ln for ln in lines_after if not ln.startswith(("review-reason:", "status:", "updated:"))]
    assert without_new == [
        ln for ln in before_anchor.splitlines() if not ln.startswith(("status:", "updated:"))
    ]
    assert after.endswith(
        "---\n\nThe incident: a forked worker inherited the pool and both wrote to one socket.\n"
    )
    assert parse(after).extra == {"owner": "db-team", "review-reason": review[0].split(": ", 1)[1]}
    assert git(root, "status", "--porcelain") == ""


def test_groom_twice_leaves_no_diff(scenario: Path) -> None:
    assert run(scenario, "groom", "--commit").exit_code == 0
    head = git(scenario, "rev-parse", "HEAD")
    before = files_of(scenario)
    second = run(scenario, "groom", "--commit")
    assert second.exit_code == 0
    assert second.output.endswith("promote 0, delete 0, needs-review 1, wait 1, skip 0\nnothing to change\n")
    assert files_of(scenario) == before
    assert git(scenario, "rev-parse", "HEAD") == head
    assert git(scenario, "status", "--porcelain") == ""


def test_dry_run_changes_nothing(scenario: Path) -> None:
    before = files_of(scenario)
    head = git(scenario, "rev-parse", "HEAD")
    result = run(scenario, "groom", "--dry-run")
    assert result.exit_code == 0
    assert normalise(result.output, scenario) == TABLE + (
        "would create .claude/skills/pytest/SKILL.md\n"
        "would update docs/testing.md\n"
        "would create rules/testing.md\n"
        "would update lessons/anchored.md\n"
        "would delete lessons/db-migrations.md\n"
        "would delete lessons/db-timeout.md\n"
        "would delete lessons/old-api.md\n"
        "would delete lessons/pytest-tty.md\n"
        "dry run: nothing written\n"
    )
    assert files_of(scenario) == before
    assert git(scenario, "rev-parse", "HEAD") == head
    assert git(scenario, "status", "--porcelain") == ""


def test_hand_edits_outside_markers_survive_and_sections_refresh_in_place(scenario: Path) -> None:
    root = scenario
    assert run(root, "groom", "--commit").exit_code == 0
    rule = root / "rules" / "testing.md"
    text = rule.read_text()
    text = text.replace("# Rules: testing\n", "# Rules: testing\n\nHand note at the top.\n")
    rule.write_text(text + "\nHand note at the end.\n")
    commit_all(root, "hand edits")
    # A new lesson for the same rule, and an old one restored from history with a new `do`.
    add_lesson(root, "late", "rule:testing", title="Late lesson", do="something else entirely")
    restored = git(root, "show", "HEAD~2:lessons/db-timeout.md").replace(
        "do: pass timeout=5 so a dead database fails fast",
        "do: pass timeout=2 so a dead database fails faster",
    )
    (root / "lessons" / "db-timeout.md").write_text(restored)
    commit_all(root, "more lessons")
    result = run(root, "groom", "--commit")
    assert result.exit_code == 0, result.output
    golden("rules-testing-regroomed.md", rule.read_text())
    after = rule.read_text()
    assert after.count("Hand note at the top.") == 1 and "Hand note at the end.\n" in after
    assert list(sections(after, "rules/testing.md")) == [IDS["db-timeout"], IDS["late"]]
    assert "timeout=2" in after and "timeout=5" not in after


def test_commit_on_a_new_branch(scenario: Path) -> None:
    main_head = git(scenario, "rev-parse", "main")
    result = run(scenario, "groom", "--branch", "groom/weekly")
    assert result.exit_code == 0, result.output
    assert normalise(result.output.splitlines()[-1], scenario) == (
        "committed <sha> on branch groom/weekly: bank groom: promote 3, delete 1, review 1"
    )
    # The checkout stays on main, as it was: the commit is only on the new branch.
    assert git(scenario, "branch", "--show-current").strip() == "main"
    assert git(scenario, "rev-parse", "main") == main_head
    assert git(scenario, "rev-parse", "groom/weekly~1") == main_head
    assert git(scenario, "log", "-1", "--format=%s", "groom/weekly") == (
        "bank groom: promote 3, delete 1, review 1\n"
    )
    assert git(scenario, "status", "--porcelain") == ""
    assert git(scenario, "worktree", "list", "--porcelain").count("worktree ") == 1
    golden("rules-testing.md", git(scenario, "show", "groom/weekly:rules/testing.md"))


def test_branch_that_exists_is_refused_before_anything_is_written(scenario: Path) -> None:
    git(scenario, "branch", "taken")
    before = files_of(scenario)
    result = run(scenario, "groom", "--branch", "taken")
    assert result.exit_code == 1
    assert result.output.endswith(
        "Error: branch 'taken' already exists; pick another name or delete it first\n"
    )
    assert files_of(scenario) == before
    bad = run(scenario, "groom", "--branch", "no..dots")
    assert bad.output.endswith("Error: 'no..dots' is not a valid branch name\n")


def test_nothing_to_groom_makes_no_branch(bank: Path) -> None:
    result = run(bank, "groom", "--branch", "groom/empty")
    assert result.output == (
        "lesson  decision  reason  destination\n(none)\n"
        "promote 0, delete 0, needs-review 0, wait 0, skip 0\nnothing to change; no branch created\n"
    )
    assert git(bank, "branch", "--show-current").strip() == "main"


def test_uncommitted_bank_files_refuse_a_run(scenario: Path) -> None:
    lesson = scenario / "lessons" / "db-timeout.md"
    lesson.write_text(lesson.read_text().replace("seen: 2", "seen: 4"))
    (scenario / "src" / "scratch.py").write_text("# not the bank's business\n")
    before = files_of(scenario)
    result = run(scenario, "groom")
    assert result.exit_code == 1
    assert result.output.endswith(
        "Error: refused: the bank's files have uncommitted changes (lessons/db-timeout.md); "
        "commit them first, or pass --allow-dirty\n"
    )
    assert files_of(scenario) == before
    assert run(scenario, "groom", "--allow-dirty").exit_code == 0
    assert (scenario / "rules" / "testing.md").exists()


def test_traversal_is_refused(scenario: Path, tmp_path: Path) -> None:
    root = scenario
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (root / "linked").symlink_to(outside, target_is_directory=True)
    for slug, dest in [
        ("up-and-out", "doc:../outside.md"),
        ("via-link", "doc:linked/notes.md"),
        ("into-lessons", "doc:lessons/sneaky.md"),
        ("into-git", "doc:.git/hooks/notes.md"),
        ("absolute", "doc:/etc/notes.md"),
        ("bad-skill", "skill:pdf--tools"),
    ]:
        add_lesson(root, slug, dest)
    commit_all(root, "hostile lessons")
    result = run(root, "groom", "--commit")
    assert result.exit_code == 0, result.output
    reasons = {}
    for slug in ("up-and-out", "via-link", "into-lessons", "into-git", "absolute", "bad-skill"):
        parsed = parse((root / "lessons" / f"{slug}.md").read_text())
        assert parsed.status == "needs-review"
        reasons[slug] = parsed.extra["review-reason"]
    assert "the doc path must stay inside the repository" in reasons["up-and-out"]
    assert reasons["via-link"] == f"cannot promote: linked/notes.md leads outside the repository ({root})"
    assert reasons["into-lessons"] == (
        "promote-to 'doc:lessons/sneaky.md': the bank manages that file itself; name a doc of the project"
    )
    assert "the bank manages that file itself" in reasons["into-git"]
    assert "the doc path must stay inside the repository" in reasons["absolute"]
    assert reasons["bad-skill"] == (
        "promote-to 'skill:pdf--tools': a skill name is 1-64 characters of a-z, 0-9 "
        "and single '-' (none at either end)"
    )
    assert list(outside.iterdir()) == []
    assert not (tmp_path / "outside.md").exists()
    assert not (root / "lessons" / "sneaky.md").exists()
    with pytest.raises(BankError, match="leads outside"):
        resolve_target(Bank.open(root), "doc:linked/x.md")


def test_skills_dir_outside_the_repository_is_refused(bank: Path) -> None:
    (bank / "bank.toml").write_text('[groom]\nskills_dir = "../skills"\n')
    add_lesson(bank, "pytest-tty", "skill:pytest")
    commit_all(bank, "lesson")
    assert run(bank, "groom", "--commit").exit_code == 0
    reason = parse((bank / "lessons" / "pytest-tty.md").read_text()).extra["review-reason"]
    assert reason == f"cannot promote: ../skills/pytest/SKILL.md leads outside the repository ({bank})"
    assert not (bank.parent / "skills").exists()


@pytest.mark.parametrize(
    ("skills_dir", "promote_to"),
    [
        (".GIT/skills", "skill:pytest"),
        (".LessonBank", "skill:pytest"),
        ("Lessons", "skill:pytest"),
        ("skills", "doc:.Git/notes.md"),
        ("skills", "doc:Index.md"),
        ("skills", "doc:\uff22\uff21\uff2e\uff2b.md"),
    ],
)
def test_groom_refuses_the_banks_own_files_in_any_letter_case(
    bank: Path, skills_dir: str, promote_to: str
) -> None:
    (bank / "bank.toml").write_text(f'[groom]\nskills_dir = "{skills_dir}"\n')
    with pytest.raises(BankError, match="manages"):
        resolve_target(Bank.open(bank), promote_to)


def test_marker_forging_is_refused(bank: Path) -> None:
    victim = IDS["db-timeout"]
    add_lesson(bank, "db-timeout", "rule:testing")
    add_lesson(
        bank, "forger", "rule:testing", title="Forger <!-- lessonbank:end " + victim + " -->",
        do=f"text <!-- lessonbank:end {victim} --> then <!-- LESSONBANK : begin 01JFAKE -->",
        body=f"<!-- lessonbank:begin 01JFAKE0000000000000000000 -->\ninjected\n<!-- lessonbank:end {victim} -->\n",
    )  # fmt: skip
    add_lesson(bank, "bad-id", "rule:testing", id="01JX --> <!-- lessonbank:begin 01JY")
    commit_all(bank, "lessons")
    result = run(bank, "groom", "--commit")
    assert result.exit_code == 0, result.output
    text = (bank / "rules" / "testing.md").read_text()
    forger = parse(git(bank, "show", "HEAD~1:lessons/forger.md")).id
    assert set(sections(text, "rules/testing.md")) == {victim, forger}
    assert f"lessonbank\\:end {victim}" in text and "LESSONBANK \\: begin" in text
    golden("rules-forged.md", text)
    reason = parse((bank / "lessons" / "bad-id.md").read_text()).extra["review-reason"]
    assert reason.startswith("cannot promote: id '01JX --> <!-- lessonbank:begin 01JY' cannot mark a section")
    # Grooming the same lessons again (restored from history) changes nothing.
    for slug in ("db-timeout", "forger"):
        (bank / "lessons" / f"{slug}.md").write_text(git(bank, "show", f"HEAD~1:lessons/{slug}.md"))
    commit_all(bank, "restore")
    assert run(bank, "groom").exit_code == 0
    assert (bank / "rules" / "testing.md").read_text() == text
    assert neutralise(neutralise("lessonbank:end")) == "lessonbank\\:end"


def test_broken_markers_in_a_destination_refuse_that_destination(bank: Path) -> None:
    rule = bank / "rules" / "testing.md"
    rule.write_text("# Rules\n\n<!-- lessonbank:begin 01JOPEN -->\nhalf a section\n")
    add_lesson(bank, "db-timeout", "rule:testing")
    commit_all(bank, "broken rule file")
    assert run(bank, "groom", "--commit").exit_code == 0
    assert rule.read_text() == "# Rules\n\n<!-- lessonbank:begin 01JOPEN -->\nhalf a section\n"
    reason = parse((bank / "lessons" / "db-timeout.md").read_text()).extra["review-reason"]
    assert reason == "cannot promote: rules/testing.md: the section of 01JOPEN has no end marker"


def test_rules_blocks_change_nothing_else(bank: Path) -> None:
    head = "# Project memory\n\nHand-written: keep answers short.\n\n"
    tail = "\n## After the block\n\nAlso hand-written.\n"
    old_block = f"{BLOCK_BEGIN}\n@rules/gone.md\n{BLOCK_END}\n"
    (bank / "CLAUDE.md").write_text(head + old_block + tail)
    agents_before = (bank / "AGENTS.md").read_text()
    write(bank, {
        "rules/git.md": "# Rules: git\n\n## Stash with -u\n\n**When** stashing: use `git stash -u`\n",
        "rules/testing.md": "# Rules: testing\n\n<!-- lessonbank:begin 01JA -->\n## Timeouts\n\nAlways.\n"
                            "<!-- lessonbank:end 01JA -->\n\nsee lessonbank:rules:end for nothing\n",
    })  # fmt: skip
    result = run(bank, "rules")
    assert result.output == "update    AGENTS.md\nupdate    CLAUDE.md\n"
    claude = (bank / "CLAUDE.md").read_text()
    assert claude.startswith(head) and claude.endswith(tail)
    golden("CLAUDE-block.md", claude)
    agents = (bank / "AGENTS.md").read_text()
    assert agents.startswith(agents_before)
    golden("AGENTS-block.md", agents)
    assert run(bank, "rules").output == "unchanged AGENTS.md\nunchanged CLAUDE.md\n"
    # Cursor rules where asked; a retired rule's .mdc goes, a hand-written one stays.
    write(bank, {".cursor/rules/mine.mdc": "---\ndescription: mine\n---\nmine\n"})
    assert run(bank, "rules", "--cursor").output == (
        "unchanged AGENTS.md\nunchanged CLAUDE.md\ncreate    .cursor/rules/git.mdc\ncreate    .cursor/rules/testing.mdc\n"
    )
    golden("cursor-testing.mdc", (bank / ".cursor" / "rules" / "testing.mdc").read_text())
    (bank / "rules" / "git.md").unlink()
    assert run(bank, "rules", "--cursor", "--dry-run").output == (
        "update    AGENTS.md\nupdate    CLAUDE.md\nunchanged .cursor/rules/testing.mdc\n"
        "delete    .cursor/rules/git.mdc\ndry run: nothing written\n"
    )
    assert (bank / ".cursor" / "rules" / "git.mdc").exists()
    run(bank, "rules", "--cursor")
    assert sorted(p.name for p in (bank / ".cursor" / "rules").iterdir()) == ["mine.mdc", "testing.mdc"]
    assert (bank / "CLAUDE.md").read_text() == head + f"{BLOCK_BEGIN}\n" + (
        "<!-- Managed by `bank rules` from rules/*.md: edit those files, not this block. -->\n"
        f"@rules/testing.md\n{BLOCK_END}\n" + tail
    )


def test_claude_md_that_imports_or_is_agents_md(bank: Path) -> None:
    write(bank, {"rules/testing.md": "# Rules: testing\n\n## Timeouts\n", "CLAUDE.md": "@AGENTS.md\n"})
    assert run(bank, "rules").exit_code == 0
    assert (bank / "CLAUDE.md").read_text() == "@AGENTS.md\n\n" + BLOCK_BEGIN + "\n" + (
        "<!-- Managed by `bank rules` from rules/*.md: edit those files, not this block. -->\n"
        "<!-- The rules reach Claude through @AGENTS.md, which holds a copy of them. -->\n"
    ) + BLOCK_END + "\n"
    (bank / "CLAUDE.md").unlink()
    (bank / "CLAUDE.md").symlink_to("AGENTS.md")
    result = run(bank, "rules")
    assert result.output == "unchanged AGENTS.md\n"
    assert (bank / "AGENTS.md").read_text().count(BLOCK_BEGIN) == 1


def test_broken_rules_block_is_refused(bank: Path) -> None:
    (bank / "CLAUDE.md").write_text(f"# Memory\n{BLOCK_BEGIN}\n@rules/x.md\n")
    write(bank, {"rules/testing.md": "# Rules: testing\n"})
    result = run(bank, "rules")
    assert result.exit_code == 1
    assert (
        result.output == "Error: CLAUDE.md: the lessonbank rules block markers are broken; fix them by hand\n"
    )


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


def test_tool_skill_offer_and_gather(bank: Path) -> None:
    for i in range(5):
        add_lesson(
            bank,
            f"pytest-{i}",
            "rule:testing",
            seen=1,
            tags=["tool:pytest"],
            id=f"01JPYTEST00000000000000000{i}",
        )
    commit_all(bank, "pytest lessons")
    offer = (
        "offer: 5 lessons share tool:pytest (pytest-0, pytest-1, pytest-2, pytest-3, pytest-4); "
        "`bank groom --gather pytest` sends them all to skill:pytest\n"
    )
    assert offer in run(bank, "groom", "--dry-run").output
    result = run(bank, "groom", "--gather", "pytest", "--commit")
    assert result.exit_code == 0, result.output
    assert offer not in result.output
    for i in range(5):
        text = (bank / "lessons" / f"pytest-{i}.md").read_text()
        assert "promote-to: skill:pytest\n" in text


def test_schedule_prints_the_crontab_line(bank: Path) -> None:
    result = run(bank, "schedule")
    assert result.output == crontab_line(bank) + "\n"
    assert result.output == (
        f"0 6 * * 1 cd {bank} && {sys.executable} -m lessonbank groom "
        '--branch "bank-groom/$(date +\\%Y-\\%m-\\%d)" >> .lessonbank/groom.log 2>&1\n'
    )


def test_ci_workflow(tmp_path: Path) -> None:
    assert write_ci_workflow(tmp_path, dry_run=True) == "create"
    assert not (tmp_path / ".github").exists()
    assert write_ci_workflow(tmp_path) == "create"
    assert write_ci_workflow(tmp_path) == "unchanged"
    path = tmp_path / ".github" / "workflows" / "bank-groom.yml"
    text = path.read_text()
    path.write_text(text.replace("0 6 * * 1", "0 5 * * 2"))
    assert write_ci_workflow(tmp_path) == "exists"
    assert "0 5 * * 2" in path.read_text()
    golden("bank-groom.yml", text)
    data = yaml.safe_load(text)
    assert data[True]["schedule"] == [{"cron": "0 6 * * 1"}]  # YAML 1.1 reads `on` as true
    steps = data["jobs"]["groom"]["steps"]
    assert 'bank groom --branch "$branch"' in steps[3]["run"]
    assert steps[4]["env"]["GH_TOKEN"] == "${{ github.token }}"


def test_a_bank_template_overrides_the_package_default(bank: Path) -> None:
    add_lesson(bank, "db-timeout", "rule:testing")
    write(bank, {"templates/rule.md.j2": (
        "# {{ name | upper }}\n{% for lesson in lessons %}\n{{ lesson.begin }}\n"
        "- {{ lesson.do }}\n{{ lesson.end }}\n{% endfor %}\n"
    )})  # fmt: skip
    commit_all(bank, "override")
    assert run(bank, "groom", "--commit").exit_code == 0
    assert (bank / "rules" / "testing.md").read_text() == (
        "# TESTING\n<!-- lessonbank:begin 01JGR00M0000000000000000A1 -->\n"
        "- pass timeout=5 so a dead database fails fast\n<!-- lessonbank:end 01JGR00M0000000000000000A1 -->\n"
    )


@pytest.mark.parametrize(
    ("template", "message"),
    [
        (
            "# {{ name }}\n{% for lesson in lessons %}- {{ lesson.do }}\n{% endfor %}",
            "Error: the template for rules/testing.md must wrap each lesson in {{ lesson.begin }} and "
            "{{ lesson.end }} lines, once each\n",
        ),
        ("{{ lesson_count }}", "Error: template rule.md.j2: 'lesson_count' is undefined\n"),
        (
            "{{ name.__class__.__mro__ }}",
            "Error: template rule.md.j2: access to attribute '__class__' of 'str' object is unsafe.\n",
        ),
    ],
)
def test_a_broken_template_stops_the_groom_before_any_write(bank: Path, template: str, message: str) -> None:
    add_lesson(bank, "db-timeout", "rule:testing")
    write(bank, {"templates/rule.md.j2": template})
    commit_all(bank, "bad override")
    before = files_of(bank)
    result = run(bank, "groom")
    assert result.exit_code == 1
    assert result.output == message
    assert files_of(bank) == before


def test_a_repository_without_commits_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "empty"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    assert CliRunner().invoke(main, ["init", str(root)]).exit_code == 0
    add_lesson(root, "db-timeout", "rule:testing", verify={"match": ["connect"]})
    result = run(root, "groom", "--allow-dirty")
    assert result.exit_code == 1
    assert result.output == (
        "Error: the repository has no commit yet; groom verifies lessons against committed code\n"
    )
    assert (root / "lessons" / "db-timeout.md").exists()
    plain = tmp_path / "plain"
    plain.mkdir()
    assert CliRunner().invoke(main, ["init", str(plain)]).exit_code == 0
    outside = run(plain, "groom")
    assert (outside.exit_code, outside.output) == (
        1,
        f"Error: {plain} is not inside a git repository; run `git init` there first\n",
    )


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


def test_a_bank_in_a_subfolder_names_paths_from_its_own_root(repo: Path) -> None:
    sub = repo / "services" / "api"
    sub.mkdir(parents=True)
    assert CliRunner().invoke(main, ["init", str(sub)]).exit_code == 0
    write(sub, {"src/app.py": "def handler():\n    return 1\n"})
    write(repo, {"src/other.py": "def elsewhere():\n    return 2\n"})
    add_lesson(sub, "here", "rule:api", verify={"paths": ["src/app.py"], "match": [r"def handler\("]})
    add_lesson(sub, "there", "rule:api", verify={"match": [r"def elsewhere\("]})
    commit_all(repo, "a bank below the top of the repository")
    result = run(sub, "groom", "--commit")
    assert result.exit_code == 0, result.output
    assert "here    promote" in result.output and "there   delete" in result.output
    assert git(repo, "show", "--stat", "--format=", "HEAD").split("\n")[0].strip().startswith("services/api/")
    assert (sub / "rules" / "api.md").is_file() and (sub / "CLAUDE.md").is_file()
    assert git(repo, "status", "--porcelain") == ""


def test_a_malformed_lesson_is_skipped_with_a_warning(bank: Path) -> None:
    add_lesson(bank, "db-timeout", "rule:testing")
    add_lesson(bank, "bad-doc", "doc:docs/bad.md")
    (bank / "lessons" / "broken.md").write_text("no frontmatter here\n")
    (bank / "docs" / "bad.md").write_bytes(b"\xff\xfe not utf-8\n")
    commit_all(bank, "a broken lesson and an unreadable doc")
    result = run(bank, "groom", "--commit")
    assert result.exit_code == 0
    assert result.output.startswith(
        "warning: skipped lessons/broken.md:1: no frontmatter: the file must start with a '---' line\n"
    )
    assert (bank / "lessons" / "broken.md").read_text() == "no frontmatter here\n"
    assert not (bank / "lessons" / "db-timeout.md").exists()
    reason = parse((bank / "lessons" / "bad-doc.md").read_text()).extra["review-reason"]
    assert reason == "cannot promote: docs/bad.md cannot be read as UTF-8 text (UnicodeDecodeError)"


def test_an_unreadable_rule_file_stops_the_groom_before_any_write(bank: Path) -> None:
    add_lesson(bank, "db-timeout", "rule:git")
    (bank / "rules" / "testing.md").write_bytes(b"\xff\xfe not utf-8\n")
    commit_all(bank, "an unreadable rule file")
    before = files_of(bank)
    result = run(bank, "groom")
    assert (result.exit_code, result.output.splitlines()[-1]) == (
        1,
        "Error: rules/testing.md cannot be read as UTF-8 text (UnicodeDecodeError)",
    )
    assert files_of(bank) == before


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
