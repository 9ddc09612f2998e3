"""store.write_atomic: bytes or byte parts, written only when they change, through a temporary file."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lessonbank.bank import store
from lessonbank.errors import BankError

OLD = b"alpha beta gamma delta"


@pytest.mark.parametrize(
    ("parts", "action"),
    [
        ([b"alpha ", b"beta gamma", b" delta"], "unchanged"),
        ([OLD], "unchanged"),
        ([b"", b"alpha beta gamma delta", b""], "unchanged"),
        ([b"ALPHA ", b"beta gamma", b" delta"], "update"),  # differs in the first part
        ([b"alpha ", b"beta GAMMA", b" delta"], "update"),  # in a middle one
        ([b"alpha ", b"beta gamma", b" delta", b"!"], "update"),  # longer
        ([b"alpha ", b"beta gamma"], "update"),  # shorter: a prefix of the old bytes
        ([], "update"),  # empty
    ],
)
def test_parts_compared_and_written(tmp_path: Path, parts: list[bytes], action: str) -> None:
    path = tmp_path / "f.bin"
    path.write_bytes(OLD)
    os.chmod(path, 0o600)
    before = path.stat().st_ino
    assert store.write_atomic(path, iter(parts)) == action
    assert path.read_bytes() == b"".join(parts)
    assert (path.stat().st_ino == before) == (action == "unchanged")  # unchanged: not even rewritten
    assert path.stat().st_mode & 0o777 == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["f.bin"]


@pytest.mark.parametrize("data", ["text é", b"bytes", [b"pa", b"rts"]])
def test_create_and_dry_run(tmp_path: Path, data: str | bytes | list[bytes]) -> None:
    path = tmp_path / "sub" / "f"
    assert store.write_atomic(path, data, dry_run=True) == "create"
    assert not path.exists()
    assert store.write_atomic(path, data) == "create"
    expected = data.encode() if isinstance(data, str) else data if isinstance(data, bytes) else b"".join(data)
    assert path.read_bytes() == expected
    assert path.stat().st_mode & 0o777 == 0o644
    assert store.write_atomic(path, b"other", dry_run=True) == "update"
    assert path.read_bytes() == expected


def test_a_failing_part_leaves_the_file_and_no_temporary(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(OLD)

    def parts():
        yield b"new "
        raise RuntimeError("renderer failed")

    with pytest.raises(RuntimeError):
        store.write_atomic(path, parts())
    assert path.read_bytes() == OLD
    assert [p.name for p in tmp_path.iterdir()] == ["f"]


def test_unreadable_target_is_a_bank_error(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    with pytest.raises(BankError, match="cannot read"):
        store.write_atomic(tmp_path / "d", b"x")


@pytest.mark.parametrize("data", [b"small new", [b"x" * 5000] * 10], ids=["one write", "in parts"])
def test_a_full_disk_names_the_file_and_leaves_no_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data: bytes | list[bytes]
) -> None:
    """A write that fails with ENOSPC (close() then fails again on the same buffer) is a BankError
    naming the file; the old bytes stay and no temporary file is left beside them."""
    import errno
    import io

    class Full(io.FileIO):
        def write(self, b: object) -> int:
            raise OSError(errno.ENOSPC, "No space left on device")

    real = store._start

    def start(path: Path) -> tuple[io.BufferedWriter, str]:
        out, tmp = real(path)
        raw = Full(os.dup(out.fileno()), "wb")
        out.close()
        return io.BufferedWriter(raw), tmp

    monkeypatch.setattr(store, "_start", start)
    target = tmp_path / "out.md"
    target.write_bytes(b"old")
    with pytest.raises(BankError, match=r"cannot write .*out\.md: No space left on device"):
        store.write_atomic(target, data)
    assert target.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.md"]
