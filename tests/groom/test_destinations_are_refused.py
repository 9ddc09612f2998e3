"""Groom writes only inside the repository and never to the bank's own files; forged or broken section markers are refused, not followed."""

from __future__ import annotations

from pathlib import Path

import pytest

from lessonbank.bank.lesson import parse
from lessonbank.bank.store import Bank
from lessonbank.errors import BankError
from lessonbank.groom.markers import neutralise, sections
from lessonbank.groom.promote import resolve_target
from tests.conftest import git, run
from tests.groom import groom_support
from tests.groom.groom_support import IDS, add_lesson, commit_all, golden

# The fixtures of groom_support: a bank with a small project in a real git repository, and its six-lesson scenario.
bank = groom_support.bank
scenario = groom_support.scenario


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
