"""The compiled index (`.lessonbank/index.bin`) of a bank brought up to date, after INDEX.md was written by bank.render.

It is built from INDEX.md as written (what the hooks read) through compiled_build, with each
row's piece taken from the derived cache (index.derived) when it was worked out before, and the
command regexes compiled before from `.lessonbank/triggers.cache` (`Packed`). Nothing is built when the
file already describes INDEX.md and bank.toml; when only `seen` counts changed, only its
staleness key is rewritten; when only a few rows changed, came or went, it is patched from the file
on disk (compiled_patch). The file is compared and written in parts, never
joined, by the `Writer` the caller gives (bank.store.write_atomic): the bank is a `Place`, its
root and state folder, so nothing here imports the bank.
"""

from __future__ import annotations

import contextlib
import hashlib
import marshal
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Protocol

from lessonbank.errors import BankError
from lessonbank.index import (
    compiled_build,
    compiled_bytes,
    compiled_patch,
    compiled_pieces,
    compiled_read,
    index_md,
)
from lessonbank.index.compiled_pieces import KIND, SOURCE, TRIGGERS, Packed
from lessonbank.index.derived import Derived
from lessonbank.state import statedir

# Up to this many new rows, their regexes are compiled rather than looked up in triggers.cache.
FEW_NEW_ROWS = 20
# What the derived cache's meta "compiled" holds (a marshalled tuple): the shape the file on disk
# was built from, its stat key, and the hash of the INDEX.md text it was built from.
C_SHAPE, C_KEY, C_SOURCE = range(3)


class Place(Protocol):
    """Where a compiled index is built from and written: a bank (bank.store.Bank is one)."""

    @property
    def root(self) -> Path: ...

    @property
    def state_dir(self) -> Path: ...


class Writer(Protocol):
    """Writes a file from its parts when its bytes change, comparing them with the file on disk as
    they come (bank.store.write_atomic); gives create, update or unchanged."""

    def __call__(self, path: Path, data: Iterable[bytes], dry_run: bool = ..., sync: bool = ...) -> str: ...


def compiled_path(bank: Place) -> Path:
    """Where the compiled index lives."""
    return bank.state_dir / compiled_read.NAME


def build(
    bank: Place, custom: bool, dry_run: bool, derived: Derived | None, index_text: str | None
) -> Iterable[bytes]:
    """The compiled file's bytes, in parts: from INDEX.md on disk, or (dry run) from `index_text`,
    the INDEX.md the lessons give. With `derived`, the rows' pieces worked out before are reused
    and the new ones kept there; `custom`: the bank has its own templates (its rows may be any)."""
    return _build(bank, custom, dry_run, derived, index_text)[0]


def _build(
    bank: Place, custom: bool, dry_run: bool, derived: Derived | None, index_text: str | None
) -> tuple[Iterable[bytes], bytes | None]:
    """`build`'s parts and the hash of the INDEX.md text they were built from (None: no INDEX.md).

    From INDEX.md on disk, the file is read a line at a time and each row's piece taken as it
    comes (compiled_build.stream): a 50,000-lesson bank's rows, pieces and tables are never all
    held."""
    cache_path = bank.state_dir / statedir.TRIGGER_CACHE
    known: Mapping[str, bytes] = derived.pieces() if derived is not None else {}
    rows = derived.generated.values() if derived is not None else ()
    new_rows = sum(1 for p in rows if p.row and p.row not in known)
    # The compiled regexes kept are read only when many rows are new: a few rows' regexes compile
    # faster than the 2 MB file (at 10,000 lessons) reads, and a run that did not read it keeps it.
    wanted = derived is None or custom or new_rows > FEW_NEW_ROWS
    compiled = _read_triggers(cache_path) if wanted else Packed()
    before = len(compiled)
    if derived is not None:
        _add_pieces(derived, compiled)
    used: set[str] = set()  # the command regexes the rows name
    try:
        if dry_run:
            disk_text, toml_text, key = compiled_read.read_sources(str(bank.root))
            data = compiled_build.from_texts(index_text, toml_text, compiled, known)
            used = {entry[compiled_read.E_SOURCE] for group in data["groups"] for entry in group if entry[compiled_read.E_KIND] == "c"}
            # the key a build from the same INDEX.md on disk would get: then "unchanged" is right
            key = key if key is not None and index_text == disk_text else ("pending",)
            parts: Iterable[bytes] = compiled_bytes.serialize_parts(data, key)
            digest = None if index_text is None else _digest(index_text)
        else:
            parts, digest = _stream(bank, compiled, known, used)
    except index_md.IndexFormatError as exc:
        raise BankError(f"INDEX.md: {exc}") from None
    if wanted and len(compiled) != before and not dry_run:
        _write_triggers(cache_path, {p: v for p, v in compiled.items() if p in used})
    return parts, digest


def _stream(bank: Place, compiled: Packed, known: Mapping[str, bytes], used: set[str]) -> tuple[Iterable[bytes], bytes | None]:
    """The compiled file's parts from INDEX.md and bank.toml on disk (`used` gets the command
    regexes its rows name), and the hash of INDEX.md as read; the staleness key is the one taken
    before reading when it is the same after (else nothing built from this read passes for current)."""
    root = str(bank.root)
    before = compiled_read.source_key(root)
    toml_text = statedir.read_text(root + "/bank.toml")
    hasher = hashlib.blake2b(digest_size=16)
    lines = _disk_lines(bank.root / "INDEX.md", hasher)

    def pieces() -> Iterator[tuple]:
        for found in compiled_pieces.pieces_of(lines, compiled, known):
            used.update(trigger[SOURCE] for trigger in found[TRIGGERS] if trigger[KIND] == "c")
            yield found

    def key() -> tuple:
        return before if compiled_read.source_key(root) == before else ("pending",)

    parts = compiled_build.stream(pieces(), compiled_pieces.settings_from_toml(toml_text), key)
    return parts, None if before[0] is None else hasher.digest()


def _disk_lines(path: Path, hasher: hashlib.blake2b | None = None) -> Iterator[str] | None:
    """INDEX.md's lines as str.splitlines gives them from statedir.read_text's text, read 1 MB at
    a time (its bytes hashed into `hasher`); None when it cannot be read."""
    try:
        handle = open(path, "rb")  # noqa: SIM115 -- closed by the generator
    except OSError:
        return None

    def lines() -> Iterator[str]:
        carry = b""
        with handle:
            while block := handle.read(1 << 20):
                if hasher is not None:
                    hasher.update(block)
                # cut after the last b"\n": no line ending or UTF-8 sequence spans the cut
                cut = block.rfind(b"\n") + 1
                if not cut:
                    carry += block
                    continue
                yield from (carry + block[:cut]).decode("utf-8", "replace").splitlines()
                carry = block[cut:]
        yield from carry.decode("utf-8", "replace").splitlines()

    return lines()


def _add_pieces(derived: Derived, compiled: dict) -> None:
    """Work out the pieces of the rows the derived cache has none for."""
    known = derived.pieces()
    for part in derived.generated.values():
        row = part.row
        if row is not None and row not in known:
            known[row] = marshal.dumps(compiled_pieces.piece(index_md.parse_row(row, 0), compiled))
            derived.changed = True


def write(
    bank: Place, custom: bool, derived: Derived, index_text: str | None, dry_run: bool, writer: Writer,
    old_index: str | None = None,
) -> str:  # fmt: skip
    """Write the compiled index after INDEX.md (`index_text`: the INDEX.md the lessons give, needed
    for a dry run; otherwise INDEX.md on disk is read); nothing is built when the file on disk
    already describes INDEX.md and bank.toml as they are (it was built from those very bytes),
    only its staleness key is rewritten when what changed in INDEX.md is nothing but `seen`
    counts, and it is patched (index.compiled_patch) when only a few rows changed,
    came or went since `old_index`, the INDEX.md it was built from."""
    found = compiled_read.current(str(bank.root), str(bank.state_dir))
    if found is not None:
        found.close()
        if not dry_run or index_text is None:
            return "unchanged"
    path = compiled_path(bank)
    # With the INDEX.md it was built from at hand, a patch tells a change of seen counts alone
    # from the rows (compiled_patch: their pieces are the same); only without it (a dry run, or
    # an INDEX.md too big to hold) is the shape hashed, read a row at a time.
    shape, source = (None, None) if dry_run or old_index is not None else _shape(bank)
    action = None
    if shape is not None:
        action = _rekey(bank, derived.meta.get("compiled"), shape, writer)
    if action is None and not dry_run and not custom and old_index is not None:
        action, source = _patch(bank, derived, old_index, writer) or (None, None)
    if action is None:
        parts, source = _build(bank, custom, dry_run, derived, index_text)
        action = write_parts(path, parts, dry_run, writer)
    if not dry_run:
        # what the file on disk was built from: its stat key and INDEX.md's hash (a patch's start)
        derived.meta["compiled"] = (shape, _stat_key(path), source)
        derived.changed = True
    return action


def _digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode(), digest_size=16).digest()


def _patch(bank: Place, derived: Derived, old_index: str, writer: Writer) -> tuple[str, bytes] | None:
    """(action, hash of INDEX.md's text) when the file on disk, built from `old_index`, could be
    patched into the one INDEX.md on disk gives (rows reworded, added, removed or moved:
    index.compiled_patch); None when a build is needed."""
    path = compiled_path(bank)
    stored = derived.meta.get("compiled")
    if not isinstance(stored, tuple) or len(stored) != 3 or stored[C_KEY] != _stat_key(path) or stored[C_SOURCE] != _digest(old_index):
        return None
    disk_text, toml_text, key = compiled_read.read_sources(str(bank.root))
    if disk_text is None or key is None:
        return None
    old_lines, new_lines = old_index.splitlines(), disk_text.splitlines()
    try:
        if path.stat().st_size > compiled_patch.MOST_BYTES:
            return None  # a big bank: the streamed build, in bounded memory
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
            return compiled_pieces.piece(index_md.parse_row(line, 0), regexes)
        except index_md.IndexFormatError:
            return None

    settings = compiled_pieces.settings_from_toml(toml_text)
    parts = compiled_patch.patch(old_file, old_lines, new_lines, piece, settings, key)
    if parts is None:
        return None
    # INDEX.md's hash as bank.render wrote it just now (its meta "outputs"), else worked out from the text read
    outputs = derived.meta.get("outputs")
    written = outputs.get("INDEX.md") if isinstance(outputs, dict) else None
    return write_parts(path, parts, False, writer), written if isinstance(written, bytes) else _digest(disk_text)


def _shape(bank: Place) -> tuple[bytes | None, bytes | None]:
    """A hash of what the compiled index is built from, less the `seen` counts it never reads:
    INDEX.md's table rows (on disk, read a line at a time) with their seen cell left out, and
    bank.toml; and the hash of INDEX.md's bytes. (None, None) when either cannot be read."""
    hasher = hashlib.blake2b(digest_size=16)
    lines = _disk_lines(bank.root / "INDEX.md", hasher)
    try:
        toml = (bank.root / "bank.toml").read_bytes()
        if lines is None:
            return None, None
        digest = hashlib.blake2b(toml, digest_size=16)
        held: list[str] = []  # hashed a few thousand rows at a time: one update, not one per row
        for _, line in index_md.table_lines(lines):
            head, _, tail = line.rpartition(" | ")  # ... | seen | priority | confidence |
            head, _, priority = head.rpartition(" | ")
            head, _, _seen = head.rpartition(" | ")
            held.append(f"{head}\x00{priority}\x00{tail}\n")
            if len(held) == 4096:
                digest.update("".join(held).encode())
                held.clear()
        digest.update("".join(held).encode())
        for _ in lines:  # the rest of the file, for its hash
            pass
    except (index_md.IndexFormatError, OSError):
        return None, None
    return digest.digest(), hasher.digest()


def _stat_key(path: Path) -> tuple[int, int, int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)


def _rekey(bank: Place, stored: object, shape: bytes, writer: Writer) -> str | None:
    """When the compiled file on disk was built (by this cache, untouched since) from the same
    shape, rewrite only its staleness key: the tables are byte for byte what a build would give.
    None when it cannot."""
    path = compiled_path(bank)
    if not isinstance(stored, tuple) or stored[C_SHAPE : C_KEY + 1] != (shape, _stat_key(path)):
        return None
    key = compiled_read.source_key(str(bank.root))
    try:
        with open(path, "rb") as handle:
            # A file of another format (written before an upgrade) has other sections: built anew.
            meta = marshal.loads(handle.read(compiled_read.meta_size(handle.read(16))))
            body = handle.read()
    except (OSError, ValueError, EOFError, compiled_read.Stale):
        return None
    meta["key"] = key
    fresh = compiled_bytes.serialize_meta(meta)
    return write_parts(path, [fresh, body], False, writer)


def write_parts(path: Path, parts: Iterable[bytes], dry_run: bool, writer: Writer) -> str:
    """`writer` for the compiled file's parts, compared with the file on disk as they come; not
    flushed to disk first (local state: a torn file is rebuilt by the hooks or the next `bank index`)."""
    return writer(path, parts, dry_run=dry_run, sync=False)


def _read_triggers(path: Path) -> Packed:
    """The compiled command regexes `bank index` kept (pattern -> compiled_pieces.command_trigger,
    held marshalled); empty when missing or written by another format."""
    try:
        data = marshal.loads(path.read_bytes())
    except Exception:
        return Packed()
    if not isinstance(data, dict) or data.get("format") != (compiled_read.FORMAT, "packed"):
        return Packed()
    return Packed(data["triggers"])


def _write_triggers(path: Path, triggers: dict) -> None:
    with contextlib.suppress(OSError, ValueError):  # only speed is lost
        data = {"format": (compiled_read.FORMAT, "packed"), "triggers": dict(triggers.items())}
        statedir.write_atomic(str(path), marshal.dumps(data))
