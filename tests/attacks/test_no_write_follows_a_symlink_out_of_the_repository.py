"""A symbolic link a repository commits under `.lessonbank/` (or `.lessonbank` itself) never carries
a hook's write out of the repository: the write is refused, the hook stays silent and exits 0."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lessonbank.state import statedir
from tests.hook_support import bash, lesson, make_bank, payload, run


@pytest.fixture
def bank(tmp_path: Path) -> Path:
    make_bank(tmp_path / "repo", [lesson("make-first", commands=[r"\bmake\b"])])
    return tmp_path / "repo"


@pytest.fixture
def target(tmp_path: Path) -> Path:
    """A file outside the repository (a shell start-up file, say)."""
    path = tmp_path / "home" / ".bashrc"
    path.parent.mkdir()
    path.write_text("# mine\n", encoding="utf-8")
    return path


def test_a_symlinked_hook_log_is_never_written_through(bank: Path, target: Path) -> None:
    os.symlink(target, bank / ".lessonbank" / "hook.log")
    (bank / "bank.toml").write_text("[nonsense\n", encoding="utf-8")  # a broken bank.toml: the hook logs
    done = run(bash(bank, "make all"), cwd=bank)
    assert done.returncode == 0
    assert target.read_text(encoding="utf-8") == "# mine\n"


def test_a_symlinked_ledger_is_never_appended_to(bank: Path, target: Path) -> None:
    os.symlink(target, bank / ".lessonbank" / "ledger.jsonl")
    done = run(bash(bank, "make all"), cwd=bank)
    assert done.returncode == 0
    assert target.read_text(encoding="utf-8") == "# mine\n"


def test_a_symlinked_sessions_folder_gets_no_claim(bank: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    sessions = bank / ".lessonbank" / "sessions"
    if sessions.exists():
        import shutil

        shutil.rmtree(sessions)
    os.symlink(outside, sessions)
    assert run(bash(bank, "make all"), cwd=bank).returncode == 0
    assert list(outside.rglob("*")) == []


def test_a_symlinked_state_folder_gets_nothing(bank: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    state = bank / ".lessonbank"
    state.rename(outside)
    os.symlink(outside, state)
    before = sorted(p.name for p in outside.rglob("*"))
    for event in ("SessionStart", "UserPromptSubmit"):
        assert run(payload(event, bank), cwd=bank).returncode == 0
    assert run(bash(bank, "make all"), cwd=bank).returncode == 0
    assert sorted(p.name for p in outside.rglob("*")) == before


def test_refuse_links_names_the_link(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    os.symlink(tmp_path / "real", tmp_path / statedir.STATE)
    with pytest.raises(OSError, match="is a symbolic link: lessonbank writes nothing through it"):
        statedir.append_line(str(tmp_path / statedir.STATE / "ledger.jsonl"), "x")


def test_every_command_refuses_a_symlinked_state_folder_in_one_line(bank: Path, tmp_path: Path) -> None:
    from tests.conftest import run as bank_command

    outside = tmp_path / "elsewhere"
    (bank / ".lessonbank").rename(outside)
    os.symlink(outside, bank / ".lessonbank")
    before = sorted(p.name for p in outside.rglob("*"))
    for args in (["index"], ["list"], ["capture", "--when", "a b c", "--do", "d e f", "--promote-to", "rule:x"]):
        result = bank_command(bank, *args)
        assert result.exit_code == 1
        assert result.output == f"Error: {bank / '.lessonbank'} is a symbolic link: remove it (lessonbank writes nothing through it)\n"
    assert sorted(p.name for p in outside.rglob("*")) == before


def test_check_reports_lessonbank_content_a_repository_tracks(tmp_path: Path) -> None:
    from tests.conftest import git
    from tests.conftest import run as bank_command

    root = tmp_path / "tracked"
    make_bank(root, [lesson("make-first", commands=[r"\bmake\b"])])
    git(root, "init", "-q")
    (root / ".lessonbank" / "mode").write_text("off\n", encoding="utf-8")
    git(root, "add", "-f", ".lessonbank/mode")
    result = bank_command(root, "check")
    assert result.exit_code == 1
    assert (
        ".lessonbank/mode:1: tracked by git, but .lessonbank/ is each machine's own state and is ignored: "
        "`git rm -r --cached .lessonbank` and commit"
    ) in result.output


def test_a_symlinked_scheduled_scan_log_gets_no_output(
    bank: Path, target: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    from lessonbank.hooks import discover

    state = bank / statedir.STATE
    (state / statedir.SCAN).mkdir(exist_ok=True)
    os.symlink(target, state / statedir.SCAN / statedir.SCHEDULED_LOG)
    monkeypatch.setattr(discover, "command", lambda _root: [sys.executable, "-c", "print('scan output')"])
    with pytest.raises(OSError):
        discover.start(str(bank), str(state))
    assert target.read_text(encoding="utf-8") == "# mine\n"


@pytest.mark.parametrize("name", ["assignments.tsv", "lock"])
def test_a_symlinked_trial_file_is_never_written_through(bank: Path, target: Path, name: str) -> None:
    from lessonbank.state import arms

    state = str(bank / statedir.STATE)
    folder = Path(arms.trial_dir(state))
    folder.mkdir(parents=True, exist_ok=True)
    os.symlink(target, folder / name)
    with pytest.raises(OSError):
        arms.assign(state, "session-1")
    assert target.read_text(encoding="utf-8") == "# mine\n"


def test_a_symlinked_lock_is_never_opened_through(bank: Path, tmp_path: Path) -> None:
    """A committed `.lessonbank/lock` link to a file that does not exist yet: taking the bank's lock
    (capture, groom, the Stop hook's capture) makes no file at its target, and says why in one line."""
    from tests.conftest import run as bank_command

    target = tmp_path / "home" / ".profile"
    target.parent.mkdir()
    os.symlink(target, bank / ".lessonbank" / statedir.LOCK)
    result = bank_command(bank, "capture", "--when", "the zq build step fails", "--do", "run zq first", "--promote-to", "rule:x")
    assert result.exit_code == 1 and result.output.startswith("Error: ") and result.output.count("\n") == 1
    assert not target.exists()


def test_a_lesson_linked_to_a_fifo_is_read_as_nothing_at_once(tmp_path: Path) -> None:
    """statedir.read_text refuses what is no regular file before reading it: a FIFO with no writer
    would otherwise hold the hook until it is killed."""
    fifo = tmp_path / "lessons" / "guard.md"
    fifo.parent.mkdir()
    os.mkfifo(fifo)
    import signal

    def waited(*_: object) -> None:
        raise RuntimeError("read_text waited for a writer on the FIFO")  # not an OSError: read_text catches those

    before = signal.signal(signal.SIGALRM, waited)
    signal.alarm(5)
    try:
        assert statedir.read_text(str(fifo), limit=10) is None
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, before)
