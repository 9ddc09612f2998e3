"""The derived cache's writing side: its texts and generated part written anew, the kept ones copied from the file as read.

`current` lists the parts to keep, sorted by name; after a capture (the cache packed, the few stale
names known) the kept parts between the ones that changed come as `KeptRun`s: their columns sliced
off the old ones and their texts copied in one go, none looked at one by one. `write_texts` writes
them, moving a run's spans by where its texts land; `copy` copies in the kernel where it can.
"""

from __future__ import annotations

import array
import bisect
import errno
import marshal
import os
from collections.abc import Callable, Iterable, Iterator
from typing import BinaryIO, TypeAlias

from lessonbank.index.derived_file import BATCH, Generated, Pieces, Stored

# A text as write_texts takes it: none, a str, a stored one, or (offset, size) in the file as read.
Text: TypeAlias = "str | Stored | tuple[int, int] | None"


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


def current(generated: Generated, pieces: Pieces, small: dict[str, tuple], digest_at: int, stale: set[str] | None) -> Iterator[Item | KeptRun]:
    """Each current part, sorted: (name, content hash, row, section, piece), kept texts as (offset, size). Current: its file's record in
    `small` has its content hash (at `digest_at`); with `stale` (the cache was packed: every name not current), the kept parts between
    those that need a look come as `KeptRun`s."""

    def fresh(name: str, digest: bytes) -> bool:
        return name not in stale if stale is not None else name in small and small[name][digest_at] == digest

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
