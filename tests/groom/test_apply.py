"""`bank groom` on real temporary git repositories: what a run decides, writes and commits, and what stops it before any write."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest
from click.testing import CliRunner

from lessonbank.bank.lesson import parse
from lessonbank.cli import main
from lessonbank.groom.markers import sections
from tests.conftest import git, run
from tests.groom import groom_support
from tests.groom.groom_support import IDS, add_lesson, commit_all, files_of, golden, normalise, write

# The fixtures of groom_support: a bank with a small project in a real git repository, and its six-lesson scenario.
bank = groom_support.bank
scenario = groom_support.scenario


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
