"""index.compiled_build: the compiled file streamed a piece at a time is byte for byte the in-memory build's."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from lessonbank.bank import pages
from lessonbank.index import compiled_build, compiled_bytes, compiled_pieces, compiled_update, index_md
from tests.hook_support import lesson

KEY = (("INDEX.md", 1), None)
TOOLS = ("cargo", "npm", "pytest", "docker", "git")


def _rows(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    lessons = []
    for n in range(count):
        tool = rng.choice(TOOLS)
        lessons.append(lesson(
            f"{tool}-{n}",
            when=f"running {tool} {rng.choice(['build', 'test', 'push'])} in ci",
            commands=[rf"\b{tool}\s+(?:build|test)\b(?!.*--locked)"] if rng.random() < 0.6 else [],
            paths=[f"src/**/*.{rng.choice(['py', 'rs'])}"] if rng.random() < 0.4 else [],
            tools=["Bash"] if rng.random() < 0.2 else [],
            keywords=[tool, rng.choice(["cache", "lock", "tty"])],
            priority=rng.randint(1, 10),
            confidence=round(rng.random(), 2),
        ))  # fmt: skip
    return [row for row in (pages.index_row(x) for x in sorted(lessons, key=lambda x: x.slug)) if row]


def _text(rows: list[str], newline: str = "\n") -> str:
    head = [index_md.row_line(list(index_md.COLUMNS)), index_md.row_line(["---"] * len(index_md.COLUMNS))]
    return newline.join(["# INDEX", "", *head, *rows, "", "(generated)"]) + newline


@pytest.mark.parametrize(("count", "seed"), [(0, 0), (1, 1), (7, 2), (120, 3), (400, 4)])
def test_streamed_file_equals_the_in_memory_build(count: int, seed: int) -> None:
    text = _text(_rows(count, seed))
    settings = compiled_pieces.settings_from_toml("")
    expected = compiled_bytes.serialize(compiled_build.from_texts(text, ""), KEY)
    keys = []

    def key() -> tuple:
        keys.append(1)
        return KEY

    streamed = b"".join(compiled_build.stream(compiled_pieces.pieces_of(text.splitlines()), settings, key))
    assert streamed == expected
    assert keys == [1]  # asked once, after the pieces


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_index_md_read_a_line_at_a_time_gives_the_lines_of_its_text(tmp_path: Path, newline: str) -> None:
    text = _text(_rows(5, 9), newline) + "tail\u2028 with a line separator\x85and more"
    path = tmp_path / "INDEX.md"
    path.write_bytes(text.encode())
    lines = compiled_update._disk_lines(path)
    assert lines is not None and list(lines) == text.splitlines()
    assert compiled_update._disk_lines(tmp_path / "missing.md") is None


def test_spool_reads_back_what_it_kept() -> None:
    spool = compiled_bytes.Spool()
    blobs = [bytes([n]) * n for n in range(40)]
    for blob in blobs[:20]:
        spool.append(blob)
    assert spool[7] == blobs[7]
    for blob in blobs[20:]:  # appending after a read goes to the end
        spool.append(blob)
    assert [spool[n] for n in range(40)] == blobs
    assert b"".join(chunk.bytes() for chunk in spool.chunks()) == b"".join(blobs)
    spool.close()


def test_index_md_lines_across_block_boundaries(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = "é\r\nline two\rthree\u2028four\n\nfive" * 50 + "\xff broken \ud7ff end"
    path = tmp_path / "INDEX.md"
    path.write_bytes(text.encode("utf-8", "surrogatepass") + b"\xe2\x82\nx")
    real = open

    def small_reads(*args: object, **kwargs: object):  # the file read 7 bytes at a time
        handle = real(*args, **kwargs)  # type: ignore[call-overload]
        read = handle.read
        handle.read = lambda size=-1: read(7)
        return handle

    monkeypatch.setattr("builtins.open", small_reads)
    lines = compiled_update._disk_lines(path)
    monkeypatch.undo()
    assert lines is not None and list(lines) == path.read_bytes().decode("utf-8", "replace").splitlines()
