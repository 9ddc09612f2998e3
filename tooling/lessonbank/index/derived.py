"""What each lesson file gives the whole-bank commands, kept by file so that only changed files are parsed.

`.lessonbank/derived.cache` holds, by lesson file name, the file's stat key and content hash and
what is worked out from its text alone, in three parts, each read only when used:

- the small part, all that `bank list`, `stats`, `check` and capture's duplicate gate read: the
  lesson's summary, slug and id, its problems with their lines (a parse error, or `lint`'s), the
  words of its *when* and *do*; kept by column, the summaries first, so that `bank list` of a
  settled bank reads its meta, names and the summaries' columns (but the tags), and no more;
- the generated part (bank.render, index.compiled_update): its INDEX.md row, and where its BANK.md section
  and the compiled-index piece of its row sit in the file;
- the texts: each section and piece, read one at a time when they are written out (at 50,000
  lessons they are 30 and 75 MB, never held at once).

A file whose stat key (size, mtime, ctime, inode) is unchanged is not even read; one whose key
changed is read and hashed, and parsed only when its bytes changed. A file changed in the last
seconds keeps no stat key (git's "racy" case: it could change again within one clock tick), so it
is hashed on every run until it settles. The cache is written only when something in it changed,
a part not read in the run copied as it was; a broken or foreign cache is ignored and rebuilt.
"""

from __future__ import annotations

import contextlib
import itertools
import marshal
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

from lessonbank.errors import LessonFormatError
from lessonbank.index import derived_file, derived_write, listing
from lessonbank.index.derived_file import Part
from lessonbank.index.listing import STAT_KEY, content_hash, listed, patched, same_bytes, scan, stat_key
from lessonbank.state import statedir

MAGIC = b"LBDERIV\x00"
# Bump when what a record holds, or how a row, section or piece is worked out, changes.
VERSION = 10
# The small part of a record: (stat key or None, content hash, slug, id, summary, terms, problems);
# slug, id, summary and terms are None for a file that does not parse; each problem is (line,
# message, whether it is a bad value: a lesson with one is left out of what `bank index` writes).
# Named constants, not a NamedTuple: the records come from marshal as tuples, and making 50,000
# NamedTuples of them (and tuples again to save them) costs 25-45 ms on every `bank list`.
KEY, DIGEST, SLUG, ID, SUMMARY, TERMS, PROBLEMS = range(7)
# The small part is kept by column: its meta, the record count, the names, then each field in this
# order, each column in batches, the summary's fields (bank.catalog's S_ ones) a column each;
# `bank list` reads the names and the summaries' columns but the last (the tags), and stops there.
ON_DISK = (SUMMARY, KEY, DIGEST, SLUG, ID, TERMS, PROBLEMS)
SUMMARY_FIELDS = 8
HEAD = 36  # MAGIC, VERSION, then the sizes of the small part, the texts and the generated part
# A file changed within the last seconds may change again within the same clock tick without its
# stat key changing (git's "racy" case): its key is not kept, so it is hashed again next time.
RACY_NS = 2_000_000_000
UNSETTLED = 100  # up to this many such files are hashed on each run rather than all records read (and settled)
# What the bank makes of a lesson file's text: (slug, id, summary, terms, problems) and the parsed
# lesson, or LessonFormatError with a line (bank.catalog.describe).
Describe = Callable[[Path, str], "tuple[tuple, Any]"]


class Derived:
    """The cache of one bank, brought up to date with its lesson files by `refresh`.

    The file holds the small part (meta, then the records by column: the names and summaries read
    at once, the rest on first use of `small`), the texts, and the generated part (fingerprint,
    file name -> (content hash, row, where its section and its row's piece sit among the texts)),
    read on first use. `meta` holds the fingerprint the generated parts were worked out with and
    the hashes of the INDEX.md and BANK.md last written from them, so a run where nothing changed
    reads neither the generated part nor the texts, and the listing (names, stat keys, the hash of
    those not settled) the records were last brought in line with. `describe` parses the files."""

    def __init__(self, lessons_dir: Path, state_dir: Path, describe: Describe, fingerprint: str = "",
                 on_parse: Callable[[Derived, str, Any], None] | None = None) -> None:  # fmt: skip
        # A plain class, not a dataclass: making one of 20 fields is 1.5 ms of every `bank list`.
        self.lessons_dir, self.state_dir, self.describe, self.fingerprint = lessons_dir, state_dir, describe, fingerprint
        self._small: dict[str, tuple] | None = None  # the records (`small`), put together from the columns on first use
        self.meta: dict = {}
        # Called with (this cache, file name, lesson) for each file parsed in this run (bank.render
        # works out its generated part at once, so no lesson is kept: 50,000 would not fit in memory).
        self.on_parse = on_parse
        self.changed = False  # something to save
        self.settled = 0  # records changed in their stat key alone, and the listing (`save`'s `unsaved`)
        # Where the texts and the generated part sit in the file as read: (offset, size) each.
        self._spans: list[tuple[int, int]] = [(0, 0), (0, 0)]
        self._handle: BinaryIO | None = None
        self._generated: derived_file.Generated | None = None
        self._pieces: derived_file.Pieces | None = None
        self.spool = derived_file.Spool()  # texts worked out in this run, until saved
        # The small part's records marshalled in batches in the spool, as `save` writes them, once `pack` let go of
        # `small`; with the names of the generated parts to drop (their file changed or went).
        self._packed: list[derived_file.Stored] | None = None
        self._stale: set[str] = set()
        self._closed = False  # saved or let go: a later `save` does nothing (parts not read are gone)
        # The small part as read, until the records are put together: the names, the summaries, and
        # where the other columns begin and the small part ends (`bank list` reads no more than that).
        self._names = ""  # joined by NULs (no file name holds one)
        self._summaries: list[list] = []  # by field, None in each for a file that does not parse
        self._rest = (0, 0)

    @property
    def path(self) -> Path:
        return self.state_dir / statedir.DERIVED_CACHE

    @property
    def small(self) -> dict[str, tuple]:
        """File name -> its small record (KEY ... PROBLEMS), read from the file's columns on first use."""
        if self._small is None:
            self._small = self._records()
        return self._small

    @classmethod
    def open(
        cls,
        lessons_dir: Path,
        state_dir: Path,
        describe: Describe,
        fingerprint: str = "",
        on_parse: Callable[[Derived, str, Any], None] | None = None,
    ) -> Derived:
        """The cache in `state_dir` as it is on disk, up to date with `lessons_dir` (only changed
        files read, through `describe`). `fingerprint` names what the generated parts are worked
        out with (templates, formats): parts stored under another one are dropped."""
        self = cls(lessons_dir, state_dir, describe, fingerprint, on_parse)
        self._read()
        self.refresh()
        return self

    def names(self) -> list[str]:
        """The lesson file names, sorted."""
        return sorted(self._small) if self._small is not None else self._names.split("\0") if self._names else []

    def summaries(self) -> list[tuple]:
        """The summary of every file that parses, sorted by file name."""
        return list(zip(*self.summary_columns(), strict=True))

    def summary_columns(self, tags: bool = True) -> list[list]:
        """`summaries` by field, a list each (as read, while the records are not needed); the last,
        S_TAGS, read from the file only for `tags` (the table of `bank list` shows none)."""
        if self._small is None and self._summaries and tags and len(self._summaries) < SUMMARY_FIELDS:
            try:
                self._rest = (derived_file.read_more(self._handle, *self._rest, self._summaries, SUMMARY_FIELDS, len(self._summaries[0])), self._rest[1])
            except Exception:  # a broken cache: read as none (`_records`)
                self._small = self._records()
        if self._small is None and self._summaries:
            slugs = self._summaries[0]  # None for a file that does not parse: left out
            return self._summaries if None not in slugs else [list(itertools.compress(c, [x is not None for x in slugs])) for c in self._summaries]
        small = self.small
        rows = [rec[SUMMARY] for name in sorted(small) if (rec := small[name])[SUMMARY] is not None]
        return [list(column) for column in zip(*rows, strict=True)] if rows else [[] for _ in range(SUMMARY_FIELDS)]

    def problems(self) -> list[tuple[str, int, str]]:
        """(file name, line, message) of the files that do not parse (what `Bank.load` skips), sorted by name."""
        if self._small is None and self._summaries and None not in self._summaries[0]:  # (a file that parses has a slug)
            return []
        broken = sorted(name for name, rec in self.small.items() if rec[SLUG] is None)
        return [(name, line, message) for name in broken for line, message, _ in self.small[name][PROBLEMS][:1]]

    def sources(self) -> bytes:
        """A hash of every lesson file's name and content hash: what generated files depend on."""
        import hashlib  # here: its import loads OpenSSL (3-10 ms), which `bank list` on a settled bank never needs

        digest = hashlib.blake2b(digest_size=16)
        for name in sorted(self.small):
            digest.update(name.encode() + b"\x00" + self.small[name][DIGEST])
        return digest.digest()

    def lesson(self, name: str) -> Any:
        """The parsed lesson of a well-formed file (read and parsed again)."""
        path = self.lessons_dir / name
        return self.describe(path, path.read_text(encoding="utf-8"))[1]

    def refresh(self, only: list[str] | None = None) -> None:
        """Bring the records in line with lessons/: new, changed and deleted files; with `only`,
        just those file names (a caller that has just written them, the rest seen moments ago)."""
        now = time.time_ns()
        if only is not None:
            kept, moved = self.meta.get("listing"), {}
            for name in only:
                moved[name] = key = stat_key(self.lessons_dir / name)
                if key is None and self.small.pop(name, None) is not None:
                    self.changed = True
                if key is not None and self._update(name, key, now) is None:
                    kept = None  # unreadable: the listing cannot say what its record holds
            small = self.small
            unsettled = {name: rec[DIGEST] if (rec := small.get(name)) and rec[KEY] is None else None for name in only}
            return self._keep_listing(None if kept is None else patched(kept, moved, unsettled))
        names, stats = scan(self.lessons_dir)
        # The files as the folder held them when the records were last brought in line (names, stat
        # keys; the hash of those not settled then): the same again and no record is read (those hashed).
        joined, packed, kept = "\0".join(names), listed(stats), self.meta.get("listing")
        if (packed is not None and kept is not None and (kept[listing.LISTED_NAMES], kept[listing.LISTED_KEYS]) == (joined, packed)
                and len(kept[listing.LISTED_HASHES]) <= UNSETTLED
                and all(same_bytes(self.lessons_dir / n, d) for n, d in kept[listing.LISTED_HASHES].items())):  # fmt: skip
            return None
        keys = list(zip(names, map(STAT_KEY, stats), strict=True))
        small, missed, unsettled = self.small, 0, {}
        for name, key in keys:  # the unchanged files cost a look-up each, not a call
            old = small.get(name)
            if old is None or old[KEY] != key:
                settled = self._update(name, key, now)
                if settled is None:
                    missed += 1
                elif not settled:
                    unsettled[name] = small[name][DIGEST]
        if len(small) != len(keys) - missed:  # records of files that went
            present = set(names)
            for name in [n for n in small if n not in present]:
                del small[name]
                self.changed = True
        # every record now of a listed file at the key listed (one that is not settled has none)
        return self._keep_listing((joined, packed, unsettled) if not missed and len(small) == len(keys) and packed is not None else None)

    def _keep_listing(self, listing: tuple | None) -> None:
        if self.meta.get("listing") != listing:
            self.meta["listing"] = listing
            self.settled += 1

    def _update(self, name: str, key: tuple, now: int) -> bool | None:
        """Bring one file's record in line with its stat key (read and hashed only when it moved):
        whether its record now holds that key (False: changed too recently to be settled, it holds
        none); None when the file could not be read (no record then, or its old one)."""
        old = self.small.get(name)
        if old is not None and old[KEY] == key:
            return True
        settled = key if now - max(key[listing.K_MTIME], key[listing.K_CTIME]) > RACY_NS else None
        path = self.lessons_dir / name
        try:
            data = path.read_bytes()
        except OSError:
            return None
        digest = content_hash(data)
        if old is not None and old[DIGEST] == digest:
            if old[KEY] != settled:
                self.small[name] = (settled, *old[KEY + 1 :])
                self.settled += 1
            return settled is not None
        record, lesson = self._record(path, data, settled, digest)
        self.small[name] = record
        self.changed = True
        if lesson is not None and self.on_parse is not None:
            self.on_parse(self, name, lesson)
        return settled is not None

    def _record(self, path: Path, data: bytes, key: tuple | None, digest: bytes) -> tuple[tuple, Any]:
        """A file's small record, and its lesson when it parses."""
        try:
            fields, lesson = self.describe(path, data.decode("utf-8"))
        except UnicodeDecodeError:
            return (key, digest, None, None, None, None, ((1, "not UTF-8 text", False),)), None
        except LessonFormatError as exc:
            return (key, digest, None, None, None, None, ((exc.line, str(exc), False),)), None
        return (key, digest, *fields), lesson

    @property
    def generated(self) -> derived_file.Generated:
        """File name -> its generated `Part`, as a dict reads (read on first use; stale ones dropped)."""
        if self._generated is None:
            self._read_generated()
        assert self._generated is not None
        return self._generated

    def pieces(self) -> derived_file.Pieces:
        """INDEX.md row line -> its marshalled compiled piece, as a dict reads (read on first
        use, each piece read from the file when asked for); bank.render adds the new ones."""
        if self._pieces is None:
            self._read_generated()
        assert self._pieces is not None
        return self._pieces

    def _read_generated(self) -> None:
        generated = derived_file.read_generated(self._handle, *self._spans[1], self.fingerprint, self._read_text)
        self._generated, self._pieces = generated, derived_file.Pieces(self.spool, generated)

    def pack(self) -> None:
        """Keep the small part marshalled in the spool, as `save` writes it, from here on (`small`
        is emptied): what follows (the compiled index's build) has the memory, 60 MB at 50,000
        lessons."""
        if self._packed is not None:
            return
        if self._generated is not None:
            small = self.small
            self._stale = {name for name, digest in self._generated.digests() if name not in small or small[name][DIGEST] != digest}
        self._packed = [self.spool.keep(blob) for blob in derived_file.by_column(sorted(self.small.items()), ON_DISK, SUMMARY_FIELDS)]
        self._small = {}

    def keep(self, text: str) -> derived_file.Stored:
        """A section worked out in this run, kept in the spool (not in memory) until saved."""
        return self.spool.keep(text.encode("utf-8"))

    def part(self, name: str) -> Part:
        """A well-formed file's generated part (section None until worked out, row None when not in INDEX.md); bank.render fills it in."""
        digest = self.small[name][DIGEST]
        generated = self.generated
        found = generated.get(name)
        if found is None or found.digest != digest:
            found = generated[name] = Part(digest)
            self.changed = True
        elif found.section is None and name not in generated.new:
            generated[name] = found  # to be filled in: held, so what is filled in stays
        return found

    def parts(self, names: list[str]) -> Iterator[Part]:
        """`part` of each of these well-formed files (sorted by name), the kept ones read off the columns in one walk."""
        generated, at, count = self.generated, 0, len(self.generated.names)
        kept, digests, rows, spans = generated.names, generated.digests_column, generated.rows, generated.spans
        for name in names:
            while at < count and kept[at] < name:
                at += 1
            size, digest = spans[4 * at + 1] if at < count and kept[at] == name else -1, self.small[name][DIGEST]
            if size >= 0 and name not in generated.new and digests[16 * at : 16 * at + 16] == digest:
                yield Part(digest, rows[at], derived_file.Stored(generated.read, spans[4 * at], size))
            else:
                yield self.part(name)

    def _read(self) -> None:
        try:
            handle = open(self.path, "rb", buffering=1 << 18)  # noqa: SIM115 -- kept open: the texts are read (or copied) from this very file, closed by `close`
        except OSError:
            return
        try:
            head = handle.read(HEAD)
            if head[:8] != MAGIC or int.from_bytes(head[8:12], "little") != VERSION:
                raise ValueError("another version")
            size, texts, generated = (int.from_bytes(head[n : n + 8], "little") for n in (12, 20, 28))
            if HEAD + size + texts + generated != os.fstat(handle.fileno()).st_size:
                raise ValueError("cut short")
            self.meta, self._names, self._summaries, at = derived_file.read_small(handle, HEAD + size, SUMMARY_FIELDS - 1)
        except Exception:  # unreadable or from another version: parse everything
            handle.close()
            return
        self._rest, self._handle = (at, HEAD + size), handle
        self._spans = [(HEAD + size, texts), (HEAD + size + texts, generated)]

    def _records(self) -> dict[str, tuple]:
        """The records, from the columns of the file as read (one found broken: none, every file read again)."""
        if not self._names or self._handle is None:
            return {}
        try:
            records = derived_file.read_records(self._handle, *self._rest, self.names(), self._summaries, ON_DISK, SUMMARY_FIELDS)
        except Exception:
            records = None
        self._names, self._summaries = "", []
        if self._closed:  # kept open by `close` for this alone
            self.close()
        if records is None:
            self.meta.pop("listing", None)
            self._small = records = {}
            self.changed = True
            self.refresh()
        return records

    def _read_text(self, offset: int, size: int) -> bytes:
        """Bytes of the texts (a section or a piece) of the file as read."""
        if offset + size > self._spans[0][1] or self._handle is None:
            raise ValueError("not in the texts, or the cache was let go")
        self._handle.seek(self._spans[0][0] + offset)
        data = self._handle.read(size)
        if len(data) != size:
            raise ValueError("the cache changed meanwhile")
        return data

    def save(self, unsaved: int = 0) -> None:
        """Write the cache when anything in it changed (a read-only state folder only costs speed), but for up to `unsaved` records
        changed in their stat key alone (a reader's: hashing those files again costs less than rewriting 30 MB at 10,000 lessons)."""
        if not self._closed and (self.changed or self.settled > unsaved):
            with contextlib.suppress(OSError, ValueError):
                self.state_dir.mkdir(parents=True, exist_ok=True)
                self._write()
            self.changed, self.settled = False, 0
        self.close()

    def _write(self) -> None:
        """Write the header, the small part, the texts and the generated part (derived_write) through a temporary file and a rename."""
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        try:
            # never through a symlink a repository committed at that name (statedir)
            with os.fdopen(statedir.open_for_write(str(tmp), os.O_WRONLY | os.O_TRUNC), "wb") as out:
                out.write(bytes(HEAD))
                records: Iterator[bytes]
                if self._packed is not None:
                    records = (batch.data() for batch in self._packed)
                else:
                    records = derived_file.by_column(sorted(self.small.items()), ON_DISK, SUMMARY_FIELDS)
                small = derived_file.write_batches(out, derived_file.chain(marshal.dumps(self.meta), records))
                if self._generated is None:  # not read in this run: copied as it was
                    texts, generated = (self._copy(out, *self._spans[n]) for n in (0, 1))
                else:
                    columns = derived_write.Columns()
                    texts = self._write_texts(out, columns)
                    generated = derived_file.write_batches(out, derived_file.chain(marshal.dumps(self.fingerprint), columns.batches))
                out.seek(0)
                out.write(MAGIC + VERSION.to_bytes(4, "little") + b"".join(n.to_bytes(8, "little") for n in (small, texts, generated)))
            os.replace(tmp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise

    def _write_texts(self, out: BinaryIO, columns: derived_write.Columns) -> int:
        """Write the sections and pieces of the current generated parts (derived_write.current); their size."""
        assert self._generated is not None and self._pieces is not None
        parts = derived_write.current(self._generated, self._pieces, self.small, DIGEST, self._stale if self._packed is not None else None)
        return derived_write.write_texts(out, parts, columns, self._read_text, lambda at, size: self._copy(out, self._spans[0][0] + at, size))

    def _copy(self, out: BinaryIO, offset: int, size: int) -> int:
        if size and self._handle is None:
            raise ValueError("no cache to copy from")
        return derived_write.copy(self._handle, out, offset, size) if self._handle is not None else 0

    def close(self) -> None:
        """Let go of the file as read (save does; the parts not read by then are gone, but for the
        records: `bank check` reads them after `save`, `bank list` never)."""
        self._closed = True
        self.spool.close()
        self._spans = [(0, 0), (0, 0)]
        if self._handle is not None and (self._small is not None or not self._names):
            self._handle.close()
            self._handle = None
