"""`lessonbank.compile.write`: create, update, unchanged, dry run; the settings baked in."""

from __future__ import annotations

from pathlib import Path

from lessonbank.bank import render
from lessonbank.bank.store import Bank
from lessonbank.kernel import compiled_build, compiled_read
from tests.hook_support import lesson, make_bank


def test_write_actions(tmp_path: Path) -> None:
    bank = make_bank(tmp_path / "p", [lesson("one", commands=["make"])])
    target = Path(render.compiled_path(bank))
    lessons = [item.lesson for item in bank.load()]
    assert target.is_file()
    assert render.write_compiled(bank, lessons) == "unchanged"
    before = target.read_bytes()
    lessons.append(lesson("two", commands=["tox"]))
    assert render.write_compiled(bank, lessons, dry_run=True) == "update"
    assert target.read_bytes() == before
    target.unlink()
    assert render.write_compiled(bank, lessons, dry_run=True) == "create"
    assert not target.exists()
    assert render.write_compiled(bank, lessons) == "create"


def test_settings_come_from_bank_toml(tmp_path: Path) -> None:
    bank = make_bank(tmp_path / "p", [lesson("one", commands=["make"])])
    (bank.root / "bank.toml").write_text("[recall]\nmax_lessons = 2\nmax_bytes = 900\n", encoding="utf-8")
    bank = Bank.open(bank.root)
    assert dict(render.regenerate(bank))["compiled index"] == "update"
    index = compiled_build.load(str(bank.root), str(bank.state_dir))
    assert isinstance(index, compiled_read.DiskIndex)
    assert index.settings == {
        "max_lessons": 2,
        "max_bytes": 900,
        "prompt_max_lessons": 3,
        "compact_priority": 7,
    }


def test_a_broken_bank_toml_falls_back_to_defaults(tmp_path: Path) -> None:
    bank = make_bank(tmp_path / "p", [lesson("one", commands=["make"])])
    (bank.root / "bank.toml").write_text("[recall\n", encoding="utf-8")
    index = compiled_build.load(str(bank.root), str(bank.state_dir))
    assert index.settings["max_lessons"] == 3


def test_the_same_tables_give_the_same_bytes_whatever_the_process_holds() -> None:
    """Interning and sharing must not leak into the file, or `bank index` rewrites unchanged files."""
    import sys

    from lessonbank.kernel import compiled_build as build

    def tables(name: str) -> dict:
        return build.from_texts(None, None) | {"lessons": [(name, 5, 0.7, name + " text", name)]}

    fresh = "".join(["ma", "ke"])  # equal to "make", but neither interned nor shared
    assert fresh is not sys.intern("make")
    assert build.serialize(tables(fresh), ("k",)) == build.serialize(tables(sys.intern("make")), ("k",))
