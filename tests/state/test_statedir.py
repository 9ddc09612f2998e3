"""The state folder's primitives: reading never raises, names never collide."""

from __future__ import annotations

from pathlib import Path

import pytest

from lessonbank.state import statedir, userdirs


def test_read_text_of_a_folder_or_a_missing_file_is_none(tmp_path: Path) -> None:
    assert statedir.read_text(str(tmp_path)) is None
    assert statedir.read_text(str(tmp_path / "missing")) is None


def test_read_text_reads_a_file(tmp_path: Path) -> None:
    (tmp_path / "mode").write_text("test\n", encoding="utf-8")
    assert statedir.read_text(str(tmp_path / "mode")) == "test\n"


def test_safe_names_of_distinct_ids_differ() -> None:
    ids = ["a/b", "a_b", "a%2Fb", ".hidden", "", "ok-1.2"]
    names = [statedir.safe_name(i) for i in ids]
    assert len(set(names)) == len(ids)
    assert all("/" not in n and not n.startswith(".") for n in names)


@pytest.mark.parametrize("slug", ["plain-slug", "a b", ".hidden", "é-ü", "%41", "x/y", "50%"])
def test_claimed_slugs_undo_safe_names(tmp_path: Path, slug: str) -> None:
    session = statedir.Session(str(tmp_path), "s")
    assert session.claimed_slugs() == set()
    assert session.claim(slug, 5)
    assert session.claimed_slugs() == {slug}


def test_user_pending_is_in_the_users_state_folder(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("XDG_STATE_HOME", raising=False)
    assert userdirs.user_pending("/work/my bank") == f"{tmp_path}/home/.local/state/lessonbank/pending/%2Fwork%2Fmy%20bank.jsonl"
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    assert userdirs.user_pending("/b").startswith(f"{tmp_path}/state/lessonbank/pending/")
    monkeypatch.setenv("XDG_STATE_HOME", "relative/ignored")
    assert userdirs.user_pending("/b").startswith(f"{tmp_path}/home/.local/state/")


def test_a_failed_write_names_its_file_and_leaves_no_temporary(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import errno

    def full(fd: int, data: bytes) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(statedir.posix, "write", full)
    with pytest.raises(OSError) as info:
        statedir.write_atomic(str(tmp_path / "x"), b"data")
    assert (info.value.errno, info.value.filename) == (errno.ENOSPC, str(tmp_path / "x"))
    with pytest.raises(OSError) as info:
        statedir.append_line(str(tmp_path / "log"), "a line")
    assert info.value.filename == str(tmp_path / "log")
    monkeypatch.undo()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["log"]


def test_makedirs_survives_another_process_making_the_folder_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Parallel hook calls of a new session each make sessions/<id>/claims; the one that loses the
    # race used to fail (FileExistsError), so its lesson was never handed over.
    target = str(tmp_path / "sessions" / "s1" / "claims")
    real_mkdir = statedir.posix.mkdir
    calls: list[str] = []

    def racing_mkdir(path: str, mode: int = 0o777) -> None:
        calls.append(path)
        if path == target and calls.count(target) == 2:  # the retry after the parents were made
            real_mkdir(path, mode)  # …but the other process got there first
        real_mkdir(path, mode)

    monkeypatch.setattr(statedir.posix, "mkdir", racing_mkdir)
    statedir.makedirs(target)
    assert Path(target).is_dir() and calls.count(target) == 2


def test_user_cache_is_under_xdg_cache_home_or_home(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", "/x/cache")
    assert userdirs.user_cache("f") == "/x/cache/lessonbank/f"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative")  # not absolute: ignored, as the XDG spec says
    monkeypatch.setenv("HOME", "/home/u")
    assert userdirs.user_cache("f") == "/home/u/.cache/lessonbank/f"


def test_user_pending_names_a_bank_by_its_real_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The Stop hook names the file from the cwd, `bank capture --pending` from the resolved root:
    through a symlink both must reach the same file."""
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    assert userdirs.user_pending(str(tmp_path / "link")) == userdirs.user_pending(str(real))


def test_user_folders_are_none_without_xdg_or_home(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "HOME"):
        monkeypatch.delenv(name, raising=False)
    assert userdirs.user_pending("/b") is None
    assert userdirs.user_cache("f") is None
    assert userdirs.user_dir("XDG_DATA_HOME", ".local/share") is None


def test_a_state_file_linked_to_a_device_reads_as_none(tmp_path: Path) -> None:
    """A repository may commit `.lessonbank/mode` as a link to /dev/zero: read on every hook call,
    it must not read for ever."""
    import subprocess
    import sys

    state = tmp_path / statedir.STATE
    state.mkdir()
    (state / statedir.MODE).symlink_to("/dev/zero")
    code = "import sys; from lessonbank.state import statedir; print(statedir.read_text(sys.argv[1]), statedir.mode(sys.argv[2]))"
    args = [str(state / statedir.MODE), str(state)]
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=20)
    assert done.stdout.split()[0] == "None"
