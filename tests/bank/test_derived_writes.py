"""The derived cache's writing side: a capture's save copies kept parts by runs and leaves what a full `bank index` leaves."""

from __future__ import annotations

import errno
import hashlib
import io
import os
import random
import shutil
from pathlib import Path

import jinja2
import pytest

from lessonbank.bank import render
from lessonbank.bank.store import Bank
from lessonbank.capture.draft import Draft
from lessonbank.capture.pipeline import capture
from lessonbank.index import derived, derived_write
from tests.bank.test_derived import _random_lesson
from tests.hook_support import make_bank


def _parts(root: Path) -> dict[str, tuple]:
    """Each lesson file's (content hash, row, section) in the bank's derived cache, and its piece when it has one."""
    bank = Bank.open(root)
    cache = render.open_cache(bank)
    try:
        pieces = cache.pieces()
        return {
            name: (part.digest, part.row, None if part.section is None else str(part.section), pieces.get(part.row) if part.row else None)
            for name, part in cache.generated.items()
        }
    finally:
        cache.close()


def _from_nothing(bank: Bank, where: Path) -> tuple[bytes, bytes, dict[str, tuple]]:
    shutil.rmtree(where, ignore_errors=True)
    where.mkdir()
    shutil.copy(bank.root / "bank.toml", where / "bank.toml")
    shutil.copytree(bank.lessons_dir, where / "lessons")
    render.regenerate(Bank.open(where))
    return (where / "INDEX.md").read_bytes(), (where / "BANK.md").read_bytes(), _parts(where)


def test_captures_leave_the_files_and_the_cache_a_full_index_leaves(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(derived, "RACY_NS", -(10**18))
    rng = random.Random(7)
    bank = make_bank(tmp_path / "b", [_random_lesson(rng, f"l-{i:02}") for i in range(40)])
    kinds: list[str] = []
    real = derived_write.current

    def current(*args: object, **kwargs: object):  # type: ignore[no-untyped-def]
        for item in real(*args, **kwargs):  # type: ignore[arg-type]
            kinds.append(type(item).__name__)
            yield item

    monkeypatch.setattr(derived_write, "current", current)
    # new lessons sorting before, among and after the kept ones, then a repeat that bumps one
    drafts = [("a first zebra appears", "one"), ("l-17 walrus hums", "two"), ("l-30 heron sleeps", "three"), ("zz yak grazes", "four")]
    for when, session in [*drafts, ("l-17 walrus hums", "five")]:
        kinds.clear()
        draft = Draft(when=when, do=f"remember the {when.split()[1]} {session}", promote_to="rule:testing", session=session)
        assert capture(Bank.open(bank.root), draft).action == ("bump" if session == "five" else "create")
        assert "KeptRun" in kinds  # the kept parts were copied as runs, not one at a time
        index_md, bank_md, parts = _from_nothing(bank, tmp_path / "full")
        assert (bank.root / "INDEX.md").read_bytes() == index_md
        assert (bank.root / "BANK.md").read_bytes() == bank_md
        mine = _parts(bank.root)
        assert mine.keys() == parts.keys()
        for name, (digest, row, section, piece) in mine.items():
            assert (digest, row, section) == parts[name][:3], name
            assert piece in (None, parts[name][3]), name  # a capture may leave a new row's piece to the next full build


def _files(tmp_path: Path, data: bytes) -> tuple[io.BufferedReader, io.BufferedWriter]:
    (tmp_path / "src").write_bytes(data)
    out = open(tmp_path / "out", "wb")  # noqa: SIM115 -- closed by the test
    out.write(b"head")
    return open(tmp_path / "src", "rb"), out  # noqa: SIM115 -- closed by the test


@pytest.mark.parametrize("refused_after", [0, 1])
def test_a_copy_the_kernel_refuses_goes_through_memory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, refused_after: int) -> None:
    data = os.urandom(300_000)
    calls = []
    real = os.copy_file_range

    def kernel(src: int, dst: int, count: int, offset_src: int, offset_dst: int) -> int:
        calls.append(count)
        if len(calls) > refused_after:
            raise OSError(errno.EXDEV, "cross-device")
        return real(src, dst, min(count, 1000), offset_src, offset_dst)

    monkeypatch.setattr(os, "copy_file_range", kernel)
    source, out = _files(tmp_path, data)
    with source, out:
        assert derived_write.copy(source, out, 5, 200_000) == 200_000
        out.write(b"tail")
    assert (tmp_path / "out").read_bytes() == b"head" + data[5:200_005] + b"tail"


def test_a_copy_between_files_in_memory_goes_through_memory() -> None:
    out = io.BytesIO(b"head")
    out.seek(4)
    assert derived_write.copy(io.BytesIO(b"0123456789"), out, 2, 5) == 5
    assert out.getvalue() == b"head23456"


def test_a_copy_of_a_file_cut_short_fails(tmp_path: Path) -> None:
    source, out = _files(tmp_path, b"x" * 100)
    with source, out, pytest.raises(OSError, match="changed meanwhile"):
        derived_write.copy(source, out, 50, 100)


@pytest.mark.parametrize("part", [1, 3, 8, 1 << 16])
def test_a_stream_makes_the_last_newlines_one_whatever_its_parts(monkeypatch: pytest.MonkeyPatch, part: int) -> None:
    monkeypatch.setattr(render, "STREAM_PART", part)
    source = "# T\n\n\n{% for x in xs %}{{ x }}\n\n{% endfor %}\n\n{{ tail }}"
    env = jinja2.Environment(loader=jinja2.DictLoader({"X.j2": source}), keep_trailing_newline=True)
    for ctx in ({"xs": ["a", "bb\n", "", "c\n\n"], "tail": "\n\n"}, {"xs": [], "tail": ""}, {"xs": ["\n"] * 5, "tail": "end\n"}):
        want = env.get_template("X.j2").render(**ctx).rstrip("\n") + "\n"
        digest = hashlib.blake2b(digest_size=16)
        got = b"".join(render._stream(env, "X", ctx, digest))  # type: ignore[arg-type]
        assert got == want.encode()
        assert digest.digest() == hashlib.blake2b(want.encode(), digest_size=16).digest()
