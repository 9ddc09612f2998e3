"""The compiled index (`.lessonbank/index.bin`) of a bank, written after INDEX.md by bank.render.

It is built from INDEX.md as written (what the hooks read) through kernel.compiled_build, with
each row's piece taken from the derived cache (bank.derived) when it was worked out before, and
the command regexes compiled before from `.lessonbank/triggers.cache`. Nothing is built when the
file already describes INDEX.md and bank.toml; when only `seen` counts changed, only its
staleness key is rewritten; when only a few rows changed, came or went, it is patched from the file
on disk (kernel.compiled_patch, kernel.compiled_rows). The file is compared and written in parts,
never joined.
"""

from __future__ import annotations

import contextlib
import hashlib
import marshal
import os
import tempfile
from pathlib import Path

from lessonbank.bank import derived as derived_mod
from lessonbank.bank.store import Bank
from lessonbank.errors import BankError
from lessonbank.kernel import compiled_build, compiled_patch, compiled_read, compiled_rows, statedir
from lessonbank.kernel import index_md as index_mod

# Up to this many new rows, their regexes are compiled rather than looked up in triggers.cache.
FEW_NEW_ROWS = 20


def compiled_path(bank: Bank) -> Path:
    """Where the compiled index lives."""
    return bank.state_dir / compiled_read.NAME


def build(
    bank: Bank, custom: bool, dry_run: bool, derived: derived_mod.Derived | None, index_text: str | None
) -> list[bytes]:
    """The compiled file's bytes, in parts: from INDEX.md on disk, or (dry run) from `index_text`,
    the INDEX.md the lessons give. With `derived`, the rows' pieces worked out before are reused
    and the new ones kept there; `custom`: the bank has its own templates (its rows may be any)."""
    return _build(bank, custom, dry_run, derived, index_text)[0]


def _build(
    bank: Bank, custom: bool, dry_run: bool, derived: derived_mod.Derived | None, index_text: str | None
) -> tuple[list[bytes], str | None]:
    """`build`'s parts and the INDEX.md text they were built from."""
    disk_text, toml_text, key = compiled_read.read_sources(str(bank.root))
    if dry_run:
        expected = index_text
        if expected != disk_text:
            key = None
        disk_text = expected
    cache_path = bank.state_dir / statedir.TRIGGER_CACHE
    known = derived.pieces() if derived is not None else {}
    rows = derived.generated.values() if derived is not None else ()
    new_rows = sum(1 for p in rows if p[derived_mod.ROW] and p[derived_mod.ROW] not in known)
    # The compiled regexes kept are read only when many rows are new: a few rows' regexes compile
    # faster than the 2 MB file (at 10,000 lessons) reads, and a run that did not read it keeps it.
    wanted = derived is None or custom or new_rows > FEW_NEW_ROWS
    compiled = _read_triggers(cache_path) if wanted else {}
    before = len(compiled)
    try:
        if derived is not None:
            _add_pieces(derived, compiled)
        data = compiled_build.from_texts(disk_text, toml_text, compiled, known)
    except index_mod.IndexFormatError as exc:
        raise BankError(f"INDEX.md: {exc}") from None
    if wanted and len(compiled) != before and not dry_run:
        used = {entry[6] for group in data["groups"] for entry in group if entry[5] == "c"}
        _write_triggers(cache_path, {p: v for p, v in compiled.items() if p in used})
    return compiled_build.serialize_parts(data, key if key is not None else ("pending",)), disk_text


def _add_pieces(derived: derived_mod.Derived, compiled: dict) -> None:
    """Work out the pieces of the rows the derived cache has none for."""
    known = derived.pieces()
    for part in derived.generated.values():
        row = part[derived_mod.ROW]
        if row is not None and row not in known:
            known[row] = marshal.dumps(compiled_build.piece(index_mod.parse_row(row, 0), compiled))
            derived.changed = True


def write(
    bank: Bank, custom: bool, derived: derived_mod.Derived, index_text: str | None, dry_run: bool, old_index: str | None = None
) -> str:
    """Write the compiled index after INDEX.md; nothing is built when the file on disk already
    describes INDEX.md and bank.toml as they are (it was built from those very bytes). Else, when
    the file on disk was built from `old_index` (the INDEX.md before this run): only its staleness
    key is rewritten when what changed in INDEX.md is nothing but `seen` counts, and it is patched
    (kernel.compiled_patch or compiled_rows) when only a few rows changed, came or went."""
    found = compiled_read.current(str(bank.root), str(bank.state_dir))
    if found is not None:
        found.close()
        if not dry_run or index_text is None:
            return "unchanged"
    path = compiled_path(bank)
    action, source = None, index_text
    if not dry_run and index_text is not None and old_index is not None:
        action, source = _patch(bank, derived, old_index, custom) or (None, index_text)
    if action is None:
        parts, source = _build(bank, custom, dry_run, derived, index_text)
        action = write_parts(path, parts, dry_run)
    if not dry_run and index_text is not None:
        # what the file on disk was built from: its stat key and INDEX.md's hash (a patch's start)
        derived.meta["compiled"] = (_stat_key(path), None if source is None else _digest(source))
        derived.changed = True
    return action


def _digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode(), digest_size=16).digest()


def _patch(bank: Bank, derived: derived_mod.Derived, old_index: str, custom: bool) -> tuple[str, str] | None:
    """(action, INDEX.md text) when the file on disk, built from `old_index`, could be rekeyed
    or patched into the one INDEX.md on disk gives; None when a build is needed (a bank with its
    own templates is only rekeyed: its rows may be any)."""
    path = compiled_path(bank)
    stored = derived.meta.get("compiled")
    if not isinstance(stored, tuple) or len(stored) != 2 or stored[0] != _stat_key(path) or stored[1] != _digest(old_index):
        return None
    disk_text, toml_text, key = compiled_read.read_sources(str(bank.root))
    if disk_text is None or key is None:
        return None
    old_lines, new_lines = old_index.splitlines(), disk_text.splitlines()
    settings = compiled_build.settings_from_toml(toml_text)
    if _seen_only(old_lines, new_lines):
        action = _rekey(bank, key, settings)  # the tables do not read `seen`
        return None if action is None else (action, disk_text)
    if custom:
        return None
    changes = compiled_patch.changed_rows(old_lines, new_lines)
    try:
        old_file = path.read_bytes()
    except OSError:
        return None
    regexes: dict = {}
    worked_out = [0]

    def piece(line: str) -> tuple | None:
        # A patch wants the pieces of a few rows: worked out from their lines, the derived cache's
        # pieces (20 MB at 10,000 lessons, read and written again) are read only past a few
        # (rows filed again). A new row's piece is then kept by the next full build.
        if worked_out[0] >= FEW_NEW_ROWS:
            blob = derived.pieces().get(line)
            if blob is not None:
                return marshal.loads(blob)
        worked_out[0] += 1
        try:
            return compiled_build.piece(index_mod.parse_row(line, 0), regexes)
        except index_mod.IndexFormatError:
            return None

    parts = None if changes is None else compiled_patch.patch(old_file, changes, piece, settings, key)
    if parts is None:  # rows added or removed, or a change of rank or triggers
        parts = compiled_rows.patch_rows(old_file, old_lines, new_lines, piece, settings, key)
    if parts is None:
        return None
    return write_parts(path, parts, dry_run=False), disk_text


def _seen_only(old_lines: list[str], new_lines: list[str]) -> bool:
    """Whether two INDEX.md texts (as lines) differ in nothing but table rows' `seen` cells."""
    if len(old_lines) != len(new_lines):
        return False
    differ = [i for i, (a, b) in enumerate(zip(old_lines, new_lines, strict=True)) if a != b]
    if not differ:
        return True
    first = compiled_patch.first_row(new_lines)
    return first is not None and differ[0] >= first and all(
        new_lines[i].startswith("|") and _without_seen(old_lines[i]) == _without_seen(new_lines[i]) for i in differ
    )


def _without_seen(line: str) -> tuple[str, str, str]:
    """A row line less its `seen` cell, which the compiled tables never read: (the cells before it,
    priority, confidence)."""
    head, _, confidence = line.rpartition(" | ")  # ... | seen | priority | confidence |
    head, _, priority = head.rpartition(" | ")
    head, _, _seen = head.rpartition(" | ")
    return head, priority, confidence


def _stat_key(path: Path) -> tuple[int, int, int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)


def _rekey(bank: Bank, key: tuple, settings: dict) -> str | None:
    """Rewrite only the staleness key of the file on disk, whose tables are byte for byte what a
    build would give (the caller found INDEX.md changed in `seen` counts alone); None when it
    cannot (the file is unreadable, or was built with other settings)."""
    path = compiled_path(bank)
    try:
        with open(path, "rb") as handle:
            head = handle.read(16)
            meta = marshal.loads(handle.read(int.from_bytes(head[12:16], "little")))
            body = handle.read()
    except (OSError, ValueError, EOFError):
        return None
    if head[:8] != compiled_read.MAGIC or int.from_bytes(head[8:12], "little") != compiled_read.FORMAT or meta.get("settings") != settings:
        return None
    meta["key"] = key
    fresh = compiled_build.serialize_meta(meta)
    return write_parts(path, [fresh, body], dry_run=False)


def write_parts(path: Path, parts: list[bytes], dry_run: bool) -> str:
    """write_atomic for bytes in parts, compared with the file on disk piece by piece (neither the
    new file nor the old is ever held whole)."""
    try:
        with open(path, "rb") as old:
            same = all(old.read(len(part)) == part for part in parts) and not old.read(1)
        if same:
            return "unchanged"
        action = "update"
    except FileNotFoundError:
        action = "create"
    except OSError as exc:
        raise BankError(f"cannot read {path}: {exc.strerror}") from None
    if dry_run:
        return action
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # Named as store.write_atomic names its temporaries (store.TEMP_RE), so groom's recovery
        # knows one a killed `bank index` left.
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.writelines(parts)
            os.chmod(tmp, 0o644)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
    except OSError as exc:
        raise BankError(f"cannot write {path}: {exc.strerror}") from None
    return action


def _read_triggers(path: Path) -> dict:
    """The compiled command regexes `bank index` kept (pattern -> compiled_build.command_trigger);
    {} when missing or written by another format."""
    try:
        data = marshal.loads(path.read_bytes())
    except Exception:
        return {}
    if not isinstance(data, dict) or data.get("format") != compiled_read.FORMAT:
        return {}
    triggers: dict = data["triggers"]
    return triggers


def _write_triggers(path: Path, triggers: dict) -> None:
    with contextlib.suppress(OSError, ValueError):  # only speed is lost
        statedir.write_atomic(str(path), marshal.dumps({"format": compiled_read.FORMAT, "triggers": triggers}))
