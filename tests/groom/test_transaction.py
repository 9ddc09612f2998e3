"""`bank groom` as a transaction, on real git repositories: it commits all of a plan or nothing.

Git's refusals are found before a write; a failure at any point between two writes leaves the
checkout as it was; an interrupted run (a kill, simulated by skipping the clean-up) is rolled
back or completed by the next one; `--branch` never touches the checkout.
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from lessonbank.bank.git import GitRepo
from lessonbank.groom import transaction
from lessonbank.state import statedir
from tests.conftest import git, run
from tests.groom import groom_support
from tests.groom.groom_support import add_lesson, commit_all, files_of, golden

# The fixtures of groom_support: a bank with a small project in a real git repository, and its six-lesson scenario.
bank = groom_support.bank
scenario = groom_support.scenario


class Killed(BaseException):
    """Stands for kill -9: raised between two writes, and nothing cleans up after it."""


def state(root: Path) -> dict[str, object]:
    """Everything a groom could change in a checkout, the bank's local state folder aside."""
    return {
        "files": files_of(root),
        "head": git(root, "rev-parse", "HEAD"),
        "branch": git(root, "branch", "--show-current"),
        "branches": git(root, "for-each-ref", "--format=%(refname) %(objectname)"),
        "index": git(root, "ls-files", "-s"),
        "status": git(root, "status", "--porcelain", "--untracked-files=all"),
    }


def mtimes(root: Path) -> dict[Path, int]:
    """Modification times of everything in the checkout but .git/ and the bank's state folder."""
    return {p: p.stat().st_mtime_ns for p in root.rglob("*") if not {".git", statedir.STATE} & set(p.parts)}


def refused(root: Path, why: str, *args: str, exact: bool = True) -> None:
    """`bank groom --commit` (or ARGS) stops with `why` (or a line holding it) and changes nothing."""
    before = state(root)
    result = run(root, "groom", *(args or ["--commit"]))
    last = result.output.splitlines()[-1]
    assert result.exit_code == 1
    assert last == f"Error: refused before writing anything: {why}" if exact else why in last, last
    assert state(root) == before


def journal(root: Path) -> Path:
    return root / statedir.STATE / statedir.GROOM_JOURNAL / transaction.JOURNAL


def fail_at(monkeypatch: pytest.MonkeyPatch, where: str, nth: int, exc: type[BaseException]) -> list[str]:
    """Make the nth step named `where` raise `exc`; return the steps seen."""
    seen: list[str] = []

    def step(name: str, detail: str) -> None:
        seen.append(f"{name} {detail}")
        if name == where and sum(1 for s in seen if s.startswith(name + " ")) == nth:
            raise exc(f"injected at {name} {detail}")

    monkeypatch.setattr(transaction, "step", step)
    return seen


@pytest.fixture
def killed(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A Killed exception skips the journal's clean-up, as a real kill would."""
    finish = transaction.finish

    def no_cleanup_when_killed(*args: object, **kw: object) -> list[str]:  # as _finish
        import sys

        if isinstance(sys.exc_info()[1], Killed):
            return []
        return finish(*args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(transaction, "finish", no_cleanup_when_killed)
    yield
    monkeypatch.setattr(transaction, "finish", finish)


def groom_expected(root: Path, tmp_path: Path) -> dict[str, object]:
    """The state a complete `bank groom --commit` of this checkout gives (on a copy of it)."""
    copy = tmp_path / "reference"
    git(tmp_path, "clone", "-q", str(root), str(copy))
    assert run(copy, "groom", "--commit").exit_code == 0
    return {"files": files_of(copy), "tree": git(copy, "rev-parse", "HEAD^{tree}")}


def test_a_stale_index_lock_refuses_before_any_write(scenario: Path) -> None:
    lock = scenario / ".git" / "index.lock"
    lock.write_text("")
    running = "another git command is running, or one was killed"
    refused(scenario, f"{lock} exists: {running}; remove that file once no git command is running")
    lock.unlink()
    assert run(scenario, "groom", "--commit").exit_code == 0
    assert git(scenario, "status", "--porcelain") == ""


def test_a_path_git_ignores_refuses_before_any_write(scenario: Path) -> None:
    (scenario / ".gitignore").write_text(".lessonbank/\n.claude/\n")
    commit_all(scenario, "ignore .claude")
    refused(
        scenario,
        "git ignores .claude/skills/pytest/SKILL.md (.gitignore:2 `.claude/`), so it cannot be committed",
    )
    # Nothing half-done to refuse as dirty afterwards: the next run, un-ignored, goes through.
    (scenario / ".gitignore").write_text(".lessonbank/\n")
    commit_all(scenario, "un-ignore")
    assert run(scenario, "groom", "--commit").exit_code == 0
    assert git(scenario, "status", "--porcelain") == ""


def test_a_path_in_the_way_of_a_submodule_refuses_before_any_write(scenario: Path) -> None:
    commit = git(scenario, "rev-parse", "HEAD").strip()
    git(scenario, "update-index", "--add", "--cacheinfo", f"160000,{commit},vendored")
    git(scenario, "commit", "-q", "-m", "a submodule")
    add_lesson(scenario, "into-module", "doc:vendored/notes.md")
    git(scenario, "add", "lessons/into-module.md")  # not -A: that would drop the unchecked-out module
    git(scenario, "commit", "-q", "-m", "a lesson for a doc inside it")
    refused(scenario, "git refuses a path: Pathspec 'vendored/notes.md' is in submodule 'vendored'")


def test_a_path_git_would_have_to_replace_something_for_is_refused(scenario: Path) -> None:
    from lessonbank.bank.git import GitRepo
    from lessonbank.errors import GitError

    repo = GitRepo(scenario)
    blob = repo.hash_files([scenario / "README.md"])[0]
    with pytest.raises(GitError, match="git would also change README.md"):
        repo.build_commit(repo.head() or "", [("README.md/x", "100644", blob)], "m", scenario / "scratch.idx")
    with pytest.raises(GitError, match="git refuses the path 'a/../b'"):
        repo.build_commit(repo.head() or "", [("a/../b", "100644", blob)], "m", scenario / "scratch.idx")
    repo.close()


def test_no_git_identity_refuses_before_any_write(scenario: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL"):
        monkeypatch.delenv(var)
    git(scenario, "config", "user.useConfigOnly", "true")
    why = "git has no identity to commit with (fatal: no email was given and auto-detection is disabled)"
    refused(scenario, why + "; set user.name and user.email")
    refused(scenario, why, "--branch", "groom/x", exact=False)


# A ref moves only with --commit, so the ref failure is tried with it alone.
@pytest.mark.parametrize(
    ("where", "nth", "commit"),
    [(w, n, c) for w, n in (("write", 1), ("write", 5), ("write", 12)) for c in (True, False)]
    + [("ref", 1, True)],
)
def test_a_failure_between_writes_restores_the_checkout(
    scenario: Path, monkeypatch: pytest.MonkeyPatch, where: str, nth: int, commit: bool
) -> None:
    before = state(scenario)
    seen = fail_at(monkeypatch, where, nth, RuntimeError)
    with pytest.raises(RuntimeError, match="injected"):
        run(scenario, "groom", *(["--commit"] if commit else []))
    assert len([s for s in seen if s.startswith("write ")]) >= nth
    assert state(scenario) == before
    assert not journal(scenario).exists()
    assert not (scenario / ".git" / "index.lock").exists()
    assert not (scenario / ".claude").exists()  # the folders it made are gone too


@pytest.mark.parametrize(("where", "nth"), [("write", 1), ("write", 7), ("write", 12), ("ref", 1)])
def test_a_kill_before_the_commit_lands_is_rolled_back_by_the_next_run(
    scenario: Path, monkeypatch: pytest.MonkeyPatch, killed: None, tmp_path: Path, where: str, nth: int
) -> None:
    expected = groom_expected(scenario, tmp_path)
    before = state(scenario)
    fail_at(monkeypatch, where, nth, Killed)
    with pytest.raises(Killed):
        run(scenario, "groom", "--commit")
    assert journal(scenario).exists()
    assert (scenario / ".git" / "index.lock").exists()  # ours, with our token in it
    # Killed before its first write, the checkout is as it was; killed later, half-applied.
    assert (state(scenario)["files"] != before["files"]) == ((where, nth) != ("write", 1))
    # A left-over temporary file, as write_atomic leaves one when killed mid-write.
    (scenario / "lessons" / ".old-api.md.abcd1234.tmp").write_text("half")
    monkeypatch.setattr(transaction, "step", lambda name, detail: None)
    dry = run(scenario, "groom", "--dry-run")
    assert dry.output.startswith("recovered: rolled back an interrupted groom (")
    assert state(scenario) == before
    assert not journal(scenario).exists()
    result = run(scenario, "groom", "--commit")
    assert result.exit_code == 0, result.output
    assert files_of(scenario) == expected["files"]
    assert git(scenario, "rev-parse", "HEAD^{tree}") == expected["tree"]
    assert git(scenario, "status", "--porcelain", "--untracked-files=all") == ""


@pytest.mark.parametrize("where", ["landed", "index"])
def test_a_kill_after_the_commit_lands_is_completed_by_the_next_run(
    scenario: Path, monkeypatch: pytest.MonkeyPatch, killed: None, tmp_path: Path, where: str
) -> None:
    expected = groom_expected(scenario, tmp_path)
    head = git(scenario, "rev-parse", "HEAD")
    fail_at(monkeypatch, where, 1, Killed)
    with pytest.raises(Killed):
        run(scenario, "groom", "--commit")
    assert git(scenario, "rev-parse", "HEAD") != head
    assert journal(scenario).exists() and (scenario / ".git" / "index.lock").exists()
    monkeypatch.setattr(transaction, "step", lambda name, detail: None)
    result = run(scenario, "groom", "--commit")
    assert result.exit_code == 0, result.output
    assert result.output.startswith("recovered: completed an interrupted groom whose commit had landed (")
    assert result.output.endswith("nothing to change\n")
    assert git(scenario, "rev-parse", "HEAD~1") == head
    assert git(scenario, "rev-parse", "HEAD^{tree}") == expected["tree"]
    assert files_of(scenario) == expected["files"]
    assert git(scenario, "status", "--porcelain", "--untracked-files=all") == ""
    assert not (scenario / ".git" / "index.lock").exists()


def test_a_file_changed_after_the_kill_is_kept(
    scenario: Path, monkeypatch: pytest.MonkeyPatch, killed: None
) -> None:
    fail_at(monkeypatch, "write", 8, Killed)
    with pytest.raises(Killed):
        run(scenario, "groom")
    rule = scenario / "rules" / "testing.md"
    assert rule.exists()
    rule.write_text("# My own rules, written after the crash\n")
    monkeypatch.setattr(transaction, "step", lambda name, detail: None)
    result = run(scenario, "groom", "--dry-run")
    assert "kept rules/testing.md: changed after the interrupted groom" in result.output
    assert rule.read_text() == "# My own rules, written after the crash\n"
    assert git(scenario, "status", "--porcelain") == "?? rules/testing.md\n"


def test_uncommitted_work_outside_the_groom_survives_a_commit(scenario: Path) -> None:
    (scenario / "src" / "db.py").write_text("# edited, not staged\n")
    (scenario / "README.md").write_text("# staged change\n")
    git(scenario, "add", "README.md")
    (scenario / "scratch.txt").write_text("untracked\n")
    result = run(scenario, "groom", "--commit")
    assert result.exit_code == 0, result.output
    assert git(scenario, "status", "--porcelain") == "M  README.md\n M src/db.py\n?? scratch.txt\n"
    assert git(scenario, "show", "--stat", "--format=", "HEAD").count("README.md") == 0


def test_branch_leaves_the_checkout_and_its_dirty_files_alone(scenario: Path) -> None:
    lesson = scenario / "lessons" / "db-timeout.md"
    lesson.write_text(lesson.read_text().replace("seen: 2", "seen: 4"))
    (scenario / "README.md").write_text("# staged change\n")
    git(scenario, "add", "README.md")
    (scenario / "notes.txt").write_text("untracked\n")
    before = state(scenario)
    before_mtimes = mtimes(scenario)
    main_head = git(scenario, "rev-parse", "HEAD").strip()
    result = run(scenario, "groom", "--branch", "groom/weekly")
    assert result.exit_code == 0, result.output
    after = state(scenario)
    assert after.pop("branches") != before.pop("branches")
    assert after == before
    assert mtimes(scenario) == before_mtimes
    # The branch is HEAD groomed: the uncommitted `seen: 4` did not travel with it.
    assert git(scenario, "rev-parse", "groom/weekly~1").strip() == main_head
    assert "seen: 4" not in git(scenario, "show", "groom/weekly:rules/testing.md")
    golden("rules-testing.md", git(scenario, "show", "groom/weekly:rules/testing.md"))
    assert git(scenario, "worktree", "list", "--porcelain").count("worktree ") == 1
    assert not journal(scenario).exists()


def test_a_kill_during_branch_leaves_nothing_the_next_run_keeps(
    scenario: Path, monkeypatch: pytest.MonkeyPatch, killed: None
) -> None:
    before = state(scenario)
    fail_at(monkeypatch, "ref", 1, Killed)
    with pytest.raises(Killed):
        run(scenario, "groom", "--branch", "groom/weekly")
    data = json.loads(journal(scenario).read_text())
    assert Path(data["worktree"]).is_dir()
    monkeypatch.setattr(transaction, "step", lambda name, detail: None)
    result = run(scenario, "groom", "--branch", "groom/weekly")
    assert result.output.startswith("recovered: removed the worktree of an interrupted `bank groom --branch`")
    assert not Path(data["worktree"]).exists()
    after = state(scenario)
    assert after.pop("branches") != before.pop("branches")
    assert after == before
    assert git(scenario, "worktree", "list", "--porcelain").count("worktree ") == 1


def test_temporary_files_of_killed_writers_are_not_changes_and_are_cleaned(scenario: Path) -> None:
    old = scenario / "lessons" / ".db-timeout.md.k2j4h5g6.tmp"
    old.write_text("half a lesson")
    os.utime(old, (time.time() - 3600, time.time() - 3600))
    young = scenario / "rules" / ".testing.md.a1b2c3d4.tmp"
    young.parent.mkdir(exist_ok=True)
    young.write_text("a writer still running")
    result = run(scenario, "groom", "--commit")
    assert result.exit_code == 0, result.output
    assert result.output.startswith("cleaned 1 temporary file left by killed writers\n")
    assert not old.exists() and young.exists()
    assert git(scenario, "status", "--porcelain") == "?? rules/.testing.md.a1b2c3d4.tmp\n"


def test_one_groom_at_a_time(scenario: Path) -> None:
    folder = scenario / statedir.STATE / statedir.GROOM_JOURNAL
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "lock", "a+b") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        result = run(scenario, "groom", "--commit")
    assert result.exit_code == 1
    assert result.output == "Error: another `bank groom` is running on this bank; wait for it to finish\n"


def test_the_rules_blocks_a_groom_commits_are_what_bank_rules_writes(scenario: Path) -> None:
    # Computed before any write, on a scratch view of the bank: every agent's file rulesync keeps.
    (scenario / "GEMINI.md").write_text("# Gemini\n")
    (scenario / ".github").mkdir()
    (scenario / ".github" / "copilot-instructions.md").write_text("# Copilot\n")
    commit_all(scenario, "more agents")
    result = run(scenario, "groom", "--commit")
    assert result.exit_code == 0, result.output
    assert "update    GEMINI.md\n" in result.output
    assert "update    .github/copilot-instructions.md\n" in result.output
    assert git(scenario, "status", "--porcelain") == ""
    again = run(scenario, "rules")
    assert again.exit_code == 0 and set(again.output.split()[::2]) == {"unchanged"}, again.output


def test_groom_recovery_drops_only_the_ref_locks_its_killed_update_ref_left(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q", "-b", "main")
    git(tmp_path, "commit", "-q", "--allow-empty", "-m", "one")
    repo = GitRepo(tmp_path)
    new = "1" * 40
    journal = {"ref": "refs/heads/main", "new": new}
    ref_lock, head_lock = tmp_path / ".git/refs/heads/main.lock", tmp_path / ".git/HEAD.lock"
    ref_lock.write_text("2" * 40 + "\n")  # someone else's update in flight: untouched
    head_lock.write_text("")
    transaction._drop_ref_locks(repo, journal)
    assert ref_lock.exists() and head_lock.exists()
    ref_lock.write_text(new + "\n")  # ours: the groom's own new commit
    transaction._drop_ref_locks(repo, journal)
    assert not ref_lock.exists() and not head_lock.exists()
    repo.close()
