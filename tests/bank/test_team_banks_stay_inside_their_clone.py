"""Team banks through real bare remotes: rewinds are followed, local work is kept, a team bank that
tracks `.lessonbank/` is never followed, and a failed `remote add` leaves nothing behind."""

from __future__ import annotations

import os
from pathlib import Path

from tests.conftest import git
from tests.hook_support import lesson
from tests.team_support import cli, clone_of, publish, team_remote

CARGO = lesson("cargo-backtrace", tools=["Bash"], commands=[r"\bcargo\s+test\b"], priority=6)
BAD = lesson("a-bad-lesson-the-team-retracts", tools=["Bash"], commands=[r"\bmake\b"])


def _index(clone: Path) -> str:
    return (clone / "INDEX.md").read_text(encoding="utf-8")


def test_a_force_pushed_rewind_is_followed_when_the_clone_holds_no_local_work(tmp_path: Path) -> None:
    bare, work = team_remote(tmp_path, "acme", [CARGO])
    assert cli("remote", "add", "acme", str(bare)).exit_code == 0
    publish(work, [BAD], "a lesson that turns out wrong")
    assert cli("pull").exit_code == 0
    assert BAD.slug in _index(clone_of("acme"))
    git(work, "reset", "-q", "--hard", "HEAD~1")
    git(work, "push", "-q", "-f", "origin", "HEAD:main")
    pulled = cli("pull")
    assert pulled.exit_code == 0, pulled.output
    assert "followed origin's rewrite of main (the clone held no local work)" in pulled.output
    assert BAD.slug not in _index(clone_of("acme"))
    assert git(clone_of("acme"), "rev-parse", "HEAD") == git(work, "rev-parse", "HEAD")


def test_a_rewind_never_throws_away_a_commit_made_in_the_clone(tmp_path: Path) -> None:
    bare, work = team_remote(tmp_path, "acme", [CARGO])
    assert cli("remote", "add", "acme", str(bare)).exit_code == 0
    clone = clone_of("acme")
    publish(work, [BAD], "a lesson that turns out wrong")
    (clone / "NOTES.md").write_text("mine\n", encoding="utf-8")
    git(clone, "add", "NOTES.md")
    git(clone, "commit", "-qm", "local work")
    mine = git(clone, "rev-parse", "HEAD")
    pulled = cli("pull")
    assert "diverged" in pulled.output
    assert git(clone, "rev-parse", "HEAD") == mine


def test_a_team_bank_that_tracks_lessonbank_is_refused_and_leaves_nothing(tmp_path: Path, isolated_home: Path) -> None:
    bare, work = team_remote(tmp_path, "acme", [CARGO])
    target = isolated_home / ".bashrc"
    target.write_text("# mine\n", encoding="utf-8")
    (work / ".lessonbank").mkdir(exist_ok=True)
    os.symlink(target, work / ".lessonbank" / "hook.log")
    git(work, "add", "-f", ".lessonbank/hook.log")
    git(work, "commit", "-qm", "a symlink where the hook log goes")
    git(work, "push", "-q", "origin", "HEAD:main")
    added = cli("remote", "add", "acme", str(bare))
    assert added.exit_code == 1
    assert "tracks .lessonbank/ (.lessonbank/hook.log)" in added.output
    assert "git rm -r --cached .lessonbank" in added.output
    assert not clone_of("acme").exists()
    assert cli("remote", "list").output == "name  url  branch  clone  folder\n(none)\n"
    assert target.read_text(encoding="utf-8") == "# mine\n"


def test_a_pull_that_would_bring_tracked_lessonbank_content_is_refused(tmp_path: Path) -> None:
    bare, work = team_remote(tmp_path, "acme", [CARGO])
    assert cli("remote", "add", "acme", str(bare)).exit_code == 0
    (work / ".lessonbank").mkdir(exist_ok=True)
    (work / ".lessonbank" / "index.bin").write_bytes(b"not ours")
    git(work, "add", "-f", ".lessonbank/index.bin")
    git(work, "commit", "-qm", "state committed by mistake")
    git(work, "push", "-q", "origin", "HEAD:main")
    before = git(clone_of("acme"), "rev-parse", "HEAD")
    pulled = cli("pull")
    assert "not updated: origin/main tracks .lessonbank/ (.lessonbank/index.bin)" in pulled.output
    assert git(clone_of("acme"), "rev-parse", "HEAD") == before


def test_a_remote_add_that_fails_on_a_bad_bank_toml_leaves_nothing_registered(tmp_path: Path) -> None:
    bare, work = team_remote(tmp_path, "acme", [CARGO])
    (work / "bank.toml").write_text("[recall\nmax_lessons = 3\n", encoding="utf-8")
    git(work, "commit", "-qam", "a broken bank.toml")
    git(work, "push", "-q", "origin", "HEAD:main")
    added = cli("remote", "add", "acme", str(bare))
    assert added.exit_code == 1
    assert "bank.toml" in added.output
    assert not clone_of("acme").exists()
    assert "acme" not in cli("remote", "list").output
