"""How the derived cache (index.derived) keeps its parts on disk and in memory, so that a
50,000-lesson bank's rows, sections and pieces are never all held as objects at once.

- A part is written as marshalled batches (`write_batches`), each read back on its own: no part
  is ever one 20 or 30 MB blob in memory, when written or read.
- The generated part is held by column (`Generated`): names, content hashes, rows, and where each
  section and piece sits among the texts; a file's `Part` is made when asked for, and only the
  new or changed ones are held as Parts.
- A section or a piece stays in the file (`Stored`) until it is written out.
"""

from __future__ import annotations

import array
import marshal
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import BinaryIO

BATCH = 2048  # records per marshalled batch


def write_batches(out: BinaryIO, blobs: Iterable[bytes]) -> int:
    """Write each blob with its size before it; the bytes written."""
    total = 0
    for blob in blobs:
        out.write(len(blob).to_bytes(4, "little"))
        out.write(blob)
        total += 4 + len(blob)
    return total


def read_batches(handle: BinaryIO, size: int) -> Iterator[bytes]:
    """The blobs `write_batches` wrote in `size` bytes from where `handle` stands."""
    while size > 0:
        length = int.from_bytes(handle.read(4), "little")
        blob = handle.read(length)
        if len(blob) != length or length + 4 > size:
            raise ValueError("a batch cut short")
        size -= 4 + length
        yield blob
    if size:
        raise ValueError("batches do not fill their part")


def read_blob(handle: BinaryIO, end: int) -> bytes:
    """The blob `write_batches` wrote where `handle` stands, which ends by `end`."""
    length = int.from_bytes(handle.read(4), "little")
    blob = handle.read(length)
    if len(blob) != length or handle.tell() > end:
        raise ValueError("a batch cut short")
    return blob


def read_column(handle: BinaryIO, at: int, end: int, count: int) -> tuple[list, int]:
    """The `count` values of a column that `by_column` wrote from `at` (by `end`), and where the
    next column begins."""
    handle.seek(at)
    values: list = []
    while len(values) < count:
        batch = marshal.loads(read_blob(handle, end))
        if not isinstance(batch, list) or not batch:
            raise ValueError("not a column")
        values += batch
    if len(values) != count:
        raise ValueError("a column of another length")
    return values, handle.tell()


def read_generated(handle: BinaryIO | None, offset: int, size: int, fingerprint: str, read: Callable[[int, int], bytes]) -> Generated:
    """The generated part at `offset` (none, or an empty one when it was stored under another
    fingerprint or does not read)."""
    generated = Generated(read)
    try:
        if not size or handle is None:
            raise ValueError("none")
        handle.seek(offset)
        batches = read_batches(handle, size)
        if marshal.loads(next(batches)) != fingerprint:
            raise ValueError("another fingerprint")
        for blob in batches:
            generated.load(marshal.loads(blob))
    except Exception:
        generated = Generated(read)
    return generated


def read_small(handle: BinaryIO, end: int, width: int) -> tuple[dict, str, list[list], int]:
    """The small part's meta, names (joined by NULs) and the first `width` columns of its first
    field (`by_column` wrote them where `handle` stands, the part ending by `end`), and where the
    other columns begin."""
    meta, count, names = (marshal.loads(read_blob(handle, end)) for _ in range(3))
    if not isinstance(meta, dict) or not isinstance(names, str) or (names.count("\0") + 1 if names else 0) != count:
        raise ValueError("not a small part")
    at, first = handle.tell(), []
    for _ in range(width):
        column, at = read_column(handle, at, end, count)
        first.append(column)
    return meta, names, first, at


def read_more(handle: BinaryIO | None, at: int, end: int, columns: list[list], width: int, count: int) -> int:
    """Read the columns that follow `columns` (of `count` values each) from `at` till there are
    `width`; where the next begins."""
    while len(columns) < width:
        if count and handle is None:
            raise ValueError("the cache was let go")
        column, at = read_column(handle, at, end, count) if handle is not None and count else ([], at)
        columns.append(column)
    return at


def read_records(handle: BinaryIO, at: int, end: int, names: list[str], first: list[list], fields: tuple[int, ...],
                 width: int) -> dict[str, tuple]:  # fmt: skip
    """Name -> record, of `read_small`'s names and columns and the others, read from `at` to
    `end` (`fields` and `width` are `by_column`'s); the first field is a tuple, None where its
    first column holds None."""
    at = read_more(handle, at, end, first, width, len(names))
    columns = {fields[0]: [None if row[0] is None else row for row in zip(*first, strict=True)] if names else []}
    for n in fields[1:]:
        columns[n], at = read_column(handle, at, end, len(names))
    if at != end:
        raise ValueError("columns do not fill the small part")
    return dict(zip(names, zip(*(columns[n] for n in range(len(fields))), strict=True), strict=True))


def by_column(records: list[tuple[str, tuple]], fields: tuple[int, ...], width: int) -> Iterator[bytes]:
    """The small part's batches after its meta, from (name, record) sorted by name: the count, the
    names joined by NULs (one string, split only when the records are read), then the records'
    `fields` one column after the other, the first (a tuple of `width` values, or None) as `width`
    columns of its own."""
    yield marshal.dumps(len(records))
    yield marshal.dumps("\0".join(name for name, _ in records))
    spans = range(0, len(records), BATCH)
    first, nothing = fields[0], (None,) * width
    for k in range(width):
        for start in spans:
            yield marshal.dumps([(rec[first] or nothing)[k] for _, rec in records[start : start + BATCH]])
    for n in fields[1:]:
        for start in spans:
            yield marshal.dumps([rec[n] for _, rec in records[start : start + BATCH]])


def batched(items: Iterable, size: int = BATCH) -> Iterator[list]:
    batch: list = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


class Stored:
    """A text kept in the cache file (a BANK.md section, a compiled piece), read when used: str()
    gives a section, `data` the bytes."""

    __slots__ = ("read", "offset", "size")

    def __init__(self, read: Callable[[int, int], bytes], offset: int, size: int) -> None:
        self.read, self.offset, self.size = read, offset, size

    def data(self) -> bytes:
        return self.read(self.offset, self.size)

    def __str__(self) -> str:
        return self.data().decode("utf-8")


class Part:
    """What a lesson file gives the generated files: the content hash it was worked out from, its
    INDEX.md row (None: the lesson is not in INDEX.md) and its BANK.md section (None: not worked out
    yet; a str, or a `Stored` one, read when turned into a string)."""

    __slots__ = ("digest", "row", "section")

    def __init__(self, digest: bytes, row: str | None = None, section: str | Stored | None = None) -> None:
        self.digest, self.row, self.section = digest, row, section


class Generated:
    """File name -> `Part`, read as a dict is: the ones kept in the file by column, the new ones
    (`new`) as Parts. A kept one's Part is made anew on each look-up, so a caller that fills one in
    stores it (`derived.part` does)."""

    def __init__(self, read: Callable[[int, int], bytes]) -> None:
        self.read = read
        self.names: list[str] = []  # sorted
        self.places: dict[str, int] | None = None  # name -> its place in `names`
        self.digests_column = bytearray()  # 16 bytes each
        self.rows: list[str | None] = []
        # (offset, size) among the texts of each one's section and piece; size -1: none
        self.spans = array.array("q")  # section offset, size, piece offset, size
        self.new: dict[str, Part] = {}

    def load(self, batch: tuple) -> None:
        names, digests, rows, spans = batch
        if self.names and names and names[0] <= self.names[-1]:
            raise ValueError("batches out of order")
        self.names += names
        self.digests_column += digests
        self.rows += rows
        self.spans.frombytes(spans)
        if not (len(self.names) * 16 == len(self.digests_column) and len(self.rows) == len(self.names) and len(self.spans) == 4 * len(self.names)):
            raise ValueError("columns of different lengths")

    def _find(self, name: str) -> int:
        if self.places is None or len(self.places) != len(self.names):  # made once, at the first look-up
            self.places = {name: at for at, name in enumerate(self.names)}
        return self.places.get(name, -1)

    def digests(self) -> Iterator[tuple[str, bytes | bytearray]]:
        """(name, content hash) of every part, no Part made: what finds the stale ones."""
        yield from ((name, part.digest) for name, part in self.new.items())
        held = self.digests_column
        for at, name in enumerate(self.names):
            if name not in self.new:
                yield name, held[16 * at : 16 * at + 16]

    def _kept(self, at: int) -> Part:
        offset, size = self.spans[4 * at], self.spans[4 * at + 1]
        section = None if size < 0 else Stored(self.read, offset, size)
        return Part(bytes(self.digests_column[16 * at : 16 * at + 16]), self.rows[at], section)

    def get(self, name: str, default: Part | None = None) -> Part | None:
        found = self.new.get(name)
        if found is not None:
            return found
        at = self._find(name)
        return default if at < 0 else self._kept(at)

    def __getitem__(self, name: str) -> Part:
        found = self.get(name)
        if found is None:
            raise KeyError(name)
        return found

    def __setitem__(self, name: str, part: Part) -> None:
        self.new[name] = part

    def __contains__(self, name: object) -> bool:
        return name in self.new or (isinstance(name, str) and self._find(name) >= 0)

    def __iter__(self) -> Iterator[str]:
        yield from self.new
        yield from (name for name in self.names if name not in self.new)

    def __len__(self) -> int:
        return len(self.new) + sum(1 for name in self.names if name not in self.new)

    def values(self) -> Iterator[Part]:
        yield from self.new.values()
        for at, name in enumerate(self.names):
            if name not in self.new:
                yield self._kept(at)

    def items(self) -> Iterator[tuple[str, Part]]:
        """(name, part), sorted by name."""
        new = sorted(self.new)
        i = 0
        for at, name in enumerate(self.names):
            while i < len(new) and new[i] < name:
                yield new[i], self.new[new[i]]
                i += 1
            if i < len(new) and new[i] == name:
                yield name, self.new[name]
                i += 1
            else:
                yield name, self._kept(at)
        for name in new[i:]:
            yield name, self.new[name]

    def kept_pieces(self) -> dict[str, int]:
        """Row -> the number of the kept one whose piece it is."""
        return {row: at for at, row in enumerate(self.rows) if row is not None and self.spans[4 * at + 3] >= 0}

    def piece(self, at: int) -> Stored:
        return Stored(self.read, self.spans[4 * at + 2], self.spans[4 * at + 3])


class Spool:
    """Texts worked out in this run, kept in a temporary file until the cache is written (a build
    from nothing works out 30 MB of sections and 75 MB of pieces at 50,000 lessons)."""

    def __init__(self) -> None:
        self.file: BinaryIO | None = None
        self.size = 0

    def keep(self, data: bytes) -> Stored:
        if self.file is None:
            import tempfile

            self.file = tempfile.TemporaryFile(prefix="lessonbank-derived-")  # noqa: SIM115 -- kept until the cache is saved, closed by `close`
        self.file.seek(self.size)
        self.file.write(data)
        self.size += len(data)
        return Stored(self.read, self.size - len(data), len(data))

    def read(self, offset: int, size: int) -> bytes:
        if self.file is None:
            raise ValueError("nothing kept")
        self.file.seek(offset)
        data = self.file.read(size)
        if len(data) != size:
            raise ValueError("the spool lost bytes")
        return data

    def close(self) -> None:
        if self.file is not None:
            self.file.close()
            self.file = None


class Pieces(Mapping[str, bytes]):
    """INDEX.md row line -> its marshalled compiled piece, read as a dict is: those kept in the
    cache file, and the new ones (kept in `spool`), are read one at a time when asked for."""

    def __init__(self, spool: Spool, generated: Generated | None = None) -> None:
        self.generated = generated
        self.stored: dict[str, int] = {} if generated is None else generated.kept_pieces()
        self.spool = spool
        self.new: dict[str, Stored] = {}

    def get_stored(self, row: str) -> Stored | None:
        """Where the piece sits: in the cache file, or in the spool."""
        found = self.new.get(row)
        if found is not None:
            return found
        at = self.stored.get(row)
        return None if at is None or self.generated is None else self.generated.piece(at)

    def __contains__(self, row: object) -> bool:
        return row in self.new or row in self.stored

    def __getitem__(self, row: str) -> bytes:
        found = self.get_stored(row)
        if found is None:
            raise KeyError(row)
        return found.data()

    def __setitem__(self, row: str, piece: bytes) -> None:
        self.new[row] = self.spool.keep(piece)

    def __bool__(self) -> bool:
        return bool(self.new or self.stored)

    def __iter__(self) -> Iterator[str]:
        yield from self.new
        yield from (row for row in self.stored if row not in self.new)

    def __len__(self) -> int:
        return len(self.stored) + sum(1 for row in self.new if row not in self.stored)


def chain(first: bytes, rest: Iterable[bytes]) -> Iterator[bytes]:
    yield first
    yield from rest
