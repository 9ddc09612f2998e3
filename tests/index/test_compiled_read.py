"""The compiled index's reader: its tables, the shared key hashes and the grouped reads."""

from __future__ import annotations

from pathlib import Path

import pytest

from lessonbank.index import compiled_build, compiled_read
from tests.hook_support import lesson, make_bank


def test_bound_maps_word_characters_to_lower_case_and_every_other_to_a_boundary() -> None:
    for code in range(0x250):
        c = chr(code)
        want = c if code >= 128 else c.lower() if c.isalnum() or c == "_" else "\x01"
        assert c.translate(compiled_read.BOUND) == want, hex(code)


@pytest.mark.parametrize("key", ["go ", "_backtra", "\x00t:Bash", "caf\u00e9", "\u3000x", "z"])
def test_a_hashed_key_gives_the_bucket_and_the_filter_bits_of_the_key(key: str) -> None:
    [(same, n, x)] = compiled_read.hashed([key])
    assert same == key
    for size in (7, 907, 21432):
        assert n % size == compiled_read.bucket(key, size)
        assert (x % size, (x >> 21) % size, (x >> 42) % size) == compiled_read.filter_bits(key, size)


@pytest.mark.parametrize(("span", "span_bytes"), [(512, 1 << 16), (3, 1 << 16), (512, 0), (1, 0)])
def test_grouped_reads_give_what_the_tables_in_memory_hold(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, span: int, span_bytes: int
) -> None:
    """However the reads are grouped (one offset read per SPAN, one data read up to SPAN_BYTES,
    or one read per record), lookups and entries equal the tables built in memory."""
    root = tmp_path / "proj"
    lessons = [
        lesson(f"l{i:02d}", commands=[rf"\b(?:cargo|tool{i})\s+test{i % 4}\b"], paths=[f"src/m{i}/**/*.rs"])
        for i in range(40)
    ]
    make_bank(root, lessons)
    monkeypatch.setattr(compiled_read, "SPAN", span)
    monkeypatch.setattr(compiled_read, "SPAN_BYTES", span_bytes)
    disk = compiled_build.load(str(root), str(root / ".lessonbank"))
    assert isinstance(disk, compiled_read.DiskIndex)
    memory = compiled_build.rebuild(str(root), str(root / ".lessonbank"), write=False)
    keys = set(memory.data["pre"]) | {"absent", "zz"}
    assert disk.lookup("pre", keys) == memory.lookup("pre", keys)
    assert disk.probe("pre", compiled_read.hashed(keys)) == memory.lookup("pre", keys)
    every = keys | {g for seconds in memory.data["pre"].values() for g in seconds}
    got = disk.entries(disk.lookup("pre", keys), every)
    assert got == memory.entries(memory.lookup("pre", keys), every)
    assert len(got) == sum(map(len, memory.data["groups"])) >= 80


def test_the_named_fields_are_what_the_build_writes(tmp_path: Path) -> None:
    """compiled_read's L_* and E_* name the fields of the records compiled_build writes."""
    root = tmp_path / "proj"
    lessons = [
        lesson("cmd", commands=[r"\bcargo\s+(?:test|bench)\b"], tools=["Bash"], priority=7, confidence=0.25),
        lesson("glob", paths=["src/**/*.rs"], priority=3, confidence=0.75),
        lesson("tool", tools=["Edit"]),
    ]
    make_bank(root, lessons)
    disk = compiled_build.load(str(root), str(root / ".lessonbank"))
    assert isinstance(disk, compiled_read.DiskIndex)
    memory = compiled_build.rebuild(str(root), str(root / ".lessonbank"), write=False)
    by_slug = {}
    assert disk.count == len(memory.data["lessons"]) == 3
    for number in memory.data["lessons"]:
        record = disk.lesson(number)
        assert record == memory.lesson(number)
        assert len(record) == compiled_read.L_TERMS + 1
        by_slug[record[compiled_read.L_SLUG]] = (number, record)
    _, record = by_slug["cmd"]
    assert (record[compiled_read.L_PRIORITY], record[compiled_read.L_CONFIDENCE]) == (7, 0.25)
    assert record[compiled_read.L_FULL] == "cmd. When working on cmd: remember cmd"
    assert record[compiled_read.L_SUMMARY] == "cmd: remember cmd"
    assert record[compiled_read.L_TERMS] == ("cmd", "remember", "work")
    entries = {e[compiled_read.E_SLUG]: e for group in memory.data["groups"] for e in group}
    assert set(entries) == {"cmd", "glob", "tool"}
    for slug, entry in entries.items():
        assert len(entry) == compiled_read.E_CHOICES + 1
        number, record = by_slug[slug]
        assert entry[compiled_read.E_NUMBER] == number == compiled_build.base_number(slug)
        assert entry[compiled_read.E_PRIORITY] == record[compiled_read.L_PRIORITY]
        assert entry[compiled_read.E_CONFIDENCE] == record[compiled_read.L_CONFIDENCE]
    cmd, glob, tool = entries["cmd"], entries["glob"], entries["tool"]
    assert (cmd[compiled_read.E_KIND], glob[compiled_read.E_KIND], tool[compiled_read.E_KIND]) == ("c", "p", "t")
    assert cmd[compiled_read.E_TOOLS] == ("Bash",) and tool[compiled_read.E_TOOLS] == ("Edit",)
    assert cmd[compiled_read.E_SOURCE] == r"\bcargo\s+(?:test|bench)\b"
    assert glob[compiled_read.E_SOURCE] == "src/**/*.rs"
    assert tool[compiled_read.E_PROGRAM] is None
    for entry in (cmd, glob):  # the program, marshalled
        assert isinstance(entry[compiled_read.E_PROGRAM], bytes)
        assert disk.program(entry[compiled_read.E_PROGRAM]) == memory.program(entry[compiled_read.E_PROGRAM])
    assert cmd[compiled_read.E_LITERALS] == ("cargo ",) and glob[compiled_read.E_LITERALS] == ("src/", ".rs")
    assert cmd[compiled_read.E_BOUNDED] == ("\x01cargo\x01",) and glob[compiled_read.E_BOUNDED] == ()
    assert cmd[compiled_read.E_CHOICES] == (("bench", "test"),) and glob[compiled_read.E_CHOICES] == ()
