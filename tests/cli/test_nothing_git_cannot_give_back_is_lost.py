"""`bank forget` deletes only what git can give back unless `--force`, and a repeat capture never overwrites a hand edit."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import git, run

CAPTURE = ["capture", "--when", "the docs build here", "--do", "run make docs first", "--promote-to", "rule:docs"]
REL = "lessons/the-docs-build-here.md"


def test_a_never_committed_lesson_is_kept_with_a_message_saying_what_to_do(bank: Path) -> None:
    run(bank, *CAPTURE)
    result = run(bank, "forget", "the-docs-build-here")
    assert (result.exit_code, result.output) == (
        1,
        f"Error: {REL}: it was never committed, so git could not give it back; "
        "commit it first, or pass --force to delete it anyway\n",
    )
    assert (bank / REL).is_file()


def test_uncommitted_edits_are_kept(bank: Path) -> None:
    run(bank, *CAPTURE)
    git(bank, "add", "-A")
    git(bank, "commit", "-qm", "lesson")
    path = bank / REL
    edited = path.read_text(encoding="utf-8") + "\nA note written by hand.\n"
    path.write_text(edited, encoding="utf-8")
    result = run(bank, "forget", "the-docs-build-here")
    assert result.exit_code == 1
    assert "it has uncommitted changes" in result.output
    assert path.read_text(encoding="utf-8") == edited


def test_force_deletes_it_anyway(bank: Path) -> None:
    run(bank, *CAPTURE)
    result = run(bank, "forget", "--force", "the-docs-build-here")
    assert (result.exit_code, result.output) == (0, f"deleted {REL}\n")
    assert not (bank / REL).exists()


def test_a_committed_lesson_is_deleted_and_git_keeps_it(bank: Path) -> None:
    run(bank, *CAPTURE)
    git(bank, "add", "-A")
    git(bank, "commit", "-qm", "lesson")
    assert run(bank, "forget", "the-docs-build-here").output == f"deleted {REL}\n"
    assert "run make docs first" in git(bank, "show", f"HEAD:{REL}")


def test_a_hand_edit_made_while_a_repeat_is_bumped_is_kept(bank: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from lessonbank.bank import frontmatter_edit

    run(bank, *CAPTURE, "--session", "s1")
    path = bank / REL
    real = frontmatter_edit.bump_text
    edits = []

    def bump_while_someone_edits(text: str, session: str | None, today: str) -> tuple[str, bool]:
        if not edits:  # the person saves their edit between capture's read and its write
            edits.append(1)
            path.write_text(path.read_text(encoding="utf-8") + "\nA note written by hand.\n", encoding="utf-8")
        return real(text, session, today)

    monkeypatch.setattr(frontmatter_edit, "bump_text", bump_while_someone_edits)
    again = run(bank, *CAPTURE, "--session", "s2")
    assert again.exit_code == 0, again.output
    text = path.read_text(encoding="utf-8")
    assert "A note written by hand." in text and "seen: 2" in text
