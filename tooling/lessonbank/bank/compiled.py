"""The hooks' compiled index: `<bank>/.lessonbank/index.bin`, built from INDEX.md and bank.toml.

`generate.regenerate` calls `write` right after writing INDEX.md. The file is local state
(never committed); the hooks check its staleness key on every call and rebuild from INDEX.md
when it is missing or stale, so it only ever makes them faster. Format: lessonbank.kernel.compiled_build.
"""

from __future__ import annotations

from pathlib import Path

from lessonbank.bank.lesson import Lesson
from lessonbank.bank.store import Bank, write_atomic
from lessonbank.errors import BankError
from lessonbank.kernel import compiled_build as build
from lessonbank.kernel import compiled_read as compiled
from lessonbank.kernel import index_md as index_mod


def path(bank: Bank) -> str:
    """Where the compiled index lives."""
    return str(bank.state_dir / compiled.NAME)


def render(bank: Bank, lessons: list[Lesson], dry_run: bool = False) -> bytes:
    """The compiled bytes: from INDEX.md on disk, or (dry run) from the INDEX.md the lessons give."""
    index_text, toml_text, key = compiled.read_sources(str(bank.root))
    if dry_run:
        from lessonbank.bank import render as generate

        expected = generate.render(bank, lessons)["INDEX.md"]
        if expected != index_text:
            key = None
        index_text = expected
    try:
        data = build.from_texts(index_text, toml_text)
    except index_mod.IndexFormatError as exc:
        raise BankError(f"INDEX.md: {exc}") from None
    return build.serialize(data, key if key is not None else ("pending",))


def write(bank: Bank, lessons: list[Lesson], dry_run: bool = False) -> str:
    """Write the compiled index when its bytes change; return create, update or unchanged.

    It is built from INDEX.md as it is on disk (the hooks' source of truth), so call this
    after writing INDEX.md; `lessons` only matter for a dry run, which cannot rely on INDEX.md.
    """
    return write_atomic(Path(path(bank)), render(bank, lessons, dry_run), dry_run=dry_run)
