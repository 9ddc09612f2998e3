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
import bisect
import errno
import marshal
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import BinaryIO, TypeAlias

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


# A text as write_texts takes it: none, a str, a stored one, or (offset, size) in the file as read.
Text: TypeAlias = "str | Stored | tuple[int, int] | None"


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


class Columns:
    """The generated part's batches, made as `write_texts` goes: an entry at a time, or a run of kept ones sliced off the old columns."""

    def __init__(self) -> None:
        self.batches: list[bytes] = []
        self._start()

    def _start(self) -> None:
        self.names: list[str] = []
        self.digests: list[bytes] = []
        self.rows: list[str | None] = []
        self.spans = array.array("q")

    def add(self, name: str, digest: bytes, row: str | None, section: tuple[int, int] | None, piece: tuple[int, int] | None) -> None:
        self.names.append(name)
        self.digests.append(digest)
        self.rows.append(row)
        self.spans.extend(section or (0, -1))
        self.spans.extend(piece or (0, -1))
        if len(self.names) >= BATCH:
            self.flush()

    def add_run(self, names: list[str], digests: bytes, rows: list[str | None], spans: array.array) -> None:
        done = 0
        while done < len(names):
            take = min(BATCH - len(self.names), len(names) - done)
            self.names += names[done : done + take]
            self.digests.append(digests[16 * done : 16 * (done + take)])
            self.rows += rows[done : done + take]
            self.spans += spans[4 * done : 4 * (done + take)]
            done += take
            if len(self.names) >= BATCH:
                self.flush()

    def flush(self) -> None:
        if self.names:
            self.batches.append(marshal.dumps((self.names, b"".join(self.digests), self.rows, self.spans.tobytes())))
            self._start()


class KeptRun:
    """Kept parts whose texts follow each other in the file as read: their columns, and where those texts sit (offset, size)."""

    __slots__ = ("names", "digests", "rows", "spans", "offset", "size")

    def __init__(self, generated: Generated, first: int, end: int, offset: int, size: int) -> None:
        self.names, self.rows = generated.names[first:end], generated.rows[first:end]
        self.digests, self.spans = bytes(generated.digests_column[16 * first : 16 * end]), generated.spans[4 * first : 4 * end]
        self.offset, self.size = offset, size


Item: TypeAlias = "tuple[str, bytes, str | None, Text, Text]"


def current(generated: Generated, pieces: Pieces, fresh: Callable[[str, bytes], bool], stale: set[str] | None) -> Iterator[Item | KeptRun]:
    """Each current part (`fresh(name, content hash)`), sorted: (name, content hash, row, section, piece), kept texts as (offset, size);
    with `stale` (every name not fresh: the cache was packed), the kept parts between those that need a look come as `KeptRun`s."""
    kept, rows, spans, new = generated.names, generated.rows, generated.spans, generated.new
    runs = stale is not None and not spans[1::4].count(-1) and len(pieces.stored) == len(kept) - spans[3::4].count(-1)
    if not runs:  # a part kept without its section, or pieces that are not each its own part's: each looked at
        cuts = set(range(len(kept)))
    else:
        assert stale is not None
        cuts = {at for at in (bisect.bisect_left(kept, name) for name in stale | set(new)) if at < len(kept)}
        if pieces.new:  # a kept part whose row was given a piece in this run (one it had none for, say)
            cuts.update(at for at, row in enumerate(rows) if row in pieces.new)
    added, i, first = sorted(new), 0, 0
    for cut in [*sorted(cuts), len(kept)]:
        if cut > first:
            yield from _kept_run(generated, fresh, first, cut)
        while i < len(added) and (cut == len(kept) or added[i] <= kept[cut]):  # a new part before (or instead of) the kept one
            part, i = new[added[i]], i + 1
            if fresh(added[i - 1], part.digest):
                yield added[i - 1], part.digest, part.row, part.section, None if part.row is None else pieces.get_stored(part.row)
        if cut < len(kept):
            first = cut + 1
            digest = bytes(generated.digests_column[16 * cut : 16 * cut + 16])
            if kept[cut] not in new and fresh(kept[cut], digest):
                row, size = rows[cut], spans[4 * cut + 1]
                piece: Text = None
                if row is not None:  # its own kept piece, unless this run worked out another for the row
                    piece = pieces.new.get(row) or ((spans[4 * cut + 2], spans[4 * cut + 3]) if pieces.stored.get(row) == cut else pieces.get_stored(row))
                yield kept[cut], digest, row, None if size < 0 else (spans[4 * cut], size), piece


def _kept_run(generated: Generated, fresh: Callable[[str, bytes], bool], first: int, end: int) -> Iterator[Item | KeptRun]:
    """Kept parts first..end-1, none stale or replaced, each with its section and own piece: one run when their texts follow each other."""
    spans = generated.spans
    offset, last = spans[4 * first], 4 * end - 4
    stop = spans[last + 2] + spans[last + 3] if spans[last + 3] >= 0 else spans[last] + spans[last + 1]
    sizes = sum(spans[4 * first + 1 : 4 * end : 2]) + spans[4 * first + 3 : 4 * end : 4].count(-1)
    if stop - offset == sizes:
        yield KeptRun(generated, first, end, offset, sizes)
        return
    for at in range(first, end):  # laid out otherwise: one at a time
        digest, row = bytes(generated.digests_column[16 * at : 16 * at + 16]), generated.rows[at]
        piece = None if spans[4 * at + 3] < 0 else (spans[4 * at + 2], spans[4 * at + 3])
        if fresh(generated.names[at], digest):
            yield generated.names[at], digest, row, (spans[4 * at], spans[4 * at + 1]), piece


def write_texts(out: BinaryIO, parts: Iterable[Item | KeptRun], columns: Columns,
                kept: Callable[[int, int], bytes], copy_kept: Callable[[int, int], int]) -> int:  # fmt: skip
    """Write the section and piece of each part (`current`'s), their entries into `columns`; their size. Kept texts (spans, `Stored` ones
    read through `kept`, `KeptRun`s) are copied by `copy_kept(offset, size)`, those that follow each other in one go."""
    at = 0
    start = end = 0  # a run of kept texts not written yet: start and end in the file as read
    for item in parts:
        if isinstance(item, KeptRun):
            if item.offset != end or end == start:
                if end > start:
                    copy_kept(start, end - start)
                start = end = item.offset
            end += item.size
            spans, delta = item.spans, at - item.offset
            if delta:  # offsets moved; a missing piece's stays (0, -1)
                spans[0::4] = array.array("q", [v + delta for v in spans[0::4]])
                spans[2::4] = array.array("q", [v + delta if n >= 0 else 0 for v, n in zip(spans[2::4], spans[3::4], strict=True)])
            columns.add_run(item.names, item.digests, item.rows, spans)
            at += item.size
            continue
        name, digest, row, *texts = item
        placed: list[tuple[int, int] | None] = []
        for text in texts:
            if text is None:
                placed.append(None)
                continue
            if isinstance(text, Stored) and text.read == kept:
                text = (text.offset, text.size)
            if isinstance(text, tuple):
                offset, size = text
                if offset != end or end == start:
                    if end > start:
                        copy_kept(start, end - start)
                    start = end = offset
                end += size
            else:
                if end > start:
                    copy_kept(start, end - start)
                start = end = 0
                data = text.encode("utf-8") if isinstance(text, str) else text.data()
                out.write(data)
                size = len(data)
            placed.append((at, size))
            at += size
        columns.add(name, digest, row, placed[0], placed[1])
    if end > start:
        copy_kept(start, end - start)
    columns.flush()
    return at


# os.copy_file_range's errors that mean "not between these files": copied through memory instead
NO_KERNEL_COPY = frozenset((errno.EXDEV, errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP, errno.EBADF, errno.EPERM))


def copy(source: BinaryIO, out: BinaryIO, offset: int, size: int) -> int:
    """Copy `size` bytes from `offset` of `source` to where `out` stands, in the kernel where it can (os.copy_file_range); the size."""
    done = 0
    try:
        files = (source.fileno(), out.fileno()) if size and hasattr(os, "copy_file_range") else None
    except (OSError, ValueError):  # not files on disk (io.BytesIO)
        files = None
    if files is not None:
        out.flush()
        at = out.tell()
        try:
            while done < size:
                moved = os.copy_file_range(*files, size - done, offset + done, at + done)
                if not moved:
                    raise OSError(0, "the file changed meanwhile")
                done += moved
        except OSError as exc:
            if exc.errno not in NO_KERNEL_COPY:
                raise
        out.seek(at + done)
    source.seek(offset + done)
    left = size - done
    while left:
        chunk = source.read(min(left, 1 << 20))
        if not chunk:
            raise OSError(0, "the file changed meanwhile")
        out.write(chunk)
        left -= len(chunk)
    return size


def chain(first: bytes, rest: Iterable[bytes]) -> Iterator[bytes]:
    yield first
    yield from rest
