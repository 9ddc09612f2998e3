"""bank.git beyond groom's view: a linked worktree a kill left half made is cleared for the next one."""

from __future__ import annotations

from pathlib import Path

from lessonbank.bank.git import GitRepo
from tests.conftest import git


def test_a_worktree_killed_while_git_made_it_is_removed_so_the_next_add_succeeds(tmp_path: Path) -> None:
    # `git worktree add` killed early leaves .git/worktrees/<name> locked ("initializing") and
    # incomplete (no commondir), and maybe half a folder: remove refuses it, prune skips it, and
    # the next add stopped on it ("failed to read …/commondir"), so groom --branch failed after a kill.
    git(tmp_path, "init", "-q", "-b", "main")
    (tmp_path / "a.txt").write_text("a\n")
    git(tmp_path, "add", "a.txt")
    git(tmp_path, "commit", "-q", "-m", "one")
    repo = GitRepo(tmp_path)
    where = repo.git_path("lessonbank-groom-worktree")
    record = repo.git_path("worktrees") / where.name
    record.mkdir(parents=True)
    (record / "locked").write_text("initializing")
    (record / "gitdir").write_text(str(where / ".git") + "\n")
    where.mkdir()
    (where / ".git").write_text(f"gitdir: {record}\n")
    repo.worktree_remove(where)
    assert not where.exists() and not record.exists()
    repo.worktree_add(where, git(tmp_path, "rev-parse", "HEAD").strip())
    assert (where / "a.txt").read_text() == "a\n"
    repo.worktree_remove(where)
    assert git(tmp_path, "worktree", "list", "--porcelain").count("worktree ") == 1
    repo.close()

