"""The compiled index built in bounded memory: compiled_build's tables, with what is big kept in
temporary files until it is written out.

`bank index` builds from INDEX.md read a line at a time; each row's piece is taken as it comes.
Lesson records, programs, the waiting trigger entries, the groups and the recall buckets go to
temporary files as they are made (at 50,000 lessons the file is 70 MB), so what is held is the
grams, the recall postings (as arrays) and the offsets. The bytes are those of
`compiled_build.serialize_parts(compiled_build.assemble(...))`, to the byte.
"""

import array
import marshal
from collections.abc import Callable, Iterable, Iterator
from typing import IO

from lessonbank.index import compiled_build as build

CHUNK = 1 << 20  # bytes read back from a temporary file at a time


class Packed(dict):
    """pattern -> `command_trigger`'s answer, each held marshalled (23,000 patterns' programs are
    57 MB as objects, 9 MB so): what `bank index` keeps in triggers.cache, as it is there."""

    def __getitem__(self, pattern: str) -> tuple | None:
        blob = dict.__getitem__(self, pattern)
        return None if blob is None else marshal.loads(blob)

    def __setitem__(self, pattern: str, trigger: tuple | None) -> None:
        dict.__setitem__(self, pattern, None if trigger is None else marshal.dumps(trigger))


class Spool:
    """An array section kept in a temporary file: blobs appended, read back one by one or in
    chunks when written out."""

    def __init__(self) -> None:
        import tempfile  # only for a build from a file (8 ms)

        self.file: IO[bytes] = tempfile.TemporaryFile(prefix="lessonbank-compiled-")  # noqa: SIM115 -- kept until the parts are written out, closed by `close`
        self.offsets = array.array("Q", [0])
        self.reading = False

    def append(self, blob: bytes) -> None:
        if self.reading:  # a read moved the position: back to the end
            self.file.seek(self.offsets[-1])
            self.reading = False
        self.file.write(blob)
        self.offsets.append(self.offsets[-1] + len(blob))

    def __getitem__(self, number: int) -> bytes:
        start, end = self.offsets[number], self.offsets[number + 1]
        self.reading = True
        self.file.seek(start)
        return self.read(end - start)

    def read(self, size: int) -> bytes:
        data = self.file.read(size)
        if len(data) != size:
            raise OSError("a temporary file lost bytes")
        return data

    def table(self) -> bytes:
        """The section's offset table, as compiled_build.array_parts gives it."""
        return array.array("I", self.offsets).tobytes()

    def chunks(self) -> list:
        size = self.offsets[-1]
        return [_Chunk(self, at, min(CHUNK, size - at)) for at in range(0, size, CHUNK)]

    def close(self) -> None:
        self.file.close()


class _Chunk:
    """Bytes of a temporary file, read when their turn comes (`layout` takes their length)."""

    __slots__ = ("spool", "offset", "size")

    def __init__(self, spool: Spool, offset: int, size: int) -> None:
        self.spool, self.offset, self.size = spool, offset, size

    def __len__(self) -> int:
        return self.size

    def bytes(self) -> bytes:
        self.spool.reading = True
        self.spool.file.seek(self.offset)
        return self.spool.read(self.size)


def stream(pieces: Iterable[tuple], settings: dict, key: Callable[[], tuple]) -> Iterator[bytes]:
    """`serialize_parts(assemble(pieces, settings), key())`'s bytes, in parts, with the pieces
    taken one at a time; `key` is asked once every piece was taken (the sources' key after
    reading them). The temporary files go when the parts are done."""
    spools: list[Spool] = []

    def spool() -> Spool:
        spools.append(Spool())
        return spools[-1]

    try:
        records, programs, pending = spool(), spool(), spool()
        data = build._gather(pieces, settings, records.append, programs.append, pending)  # type: ignore[arg-type]
        sections: list[tuple[str, list]] = list(build.hashed_sections("pre", data["pre"]))
        recall = spool()
        for blob in build.hashed_buckets(data["recall"]):
            recall.append(blob)
        sections += [("recall.filter", [build.filter_section(data["recall"])]), ("recall.table", [recall.table()]),
                     ("recall.data", recall.chunks())]  # fmt: skip
        del data["recall"]
        groups = spool()
        for group in data.pop("groups"):
            groups.append(marshal.dumps(group, build.MARSHAL_VERSION))
        for name, spooled in (("lessons", records), ("programs", programs), ("groups", groups)):
            sections += [(name + ".table", [spooled.table()]), (name + ".data", spooled.chunks())]
        sections.append(build.grams_section(data["grams"]))
        parts = build.layout(sections, key(), data["settings"], data["gram_lengths"], data["count"])
    except BaseException:
        for each in spools:
            each.close()
        raise
    return _read_out(parts, spools)


def _read_out(parts: list, spools: list[Spool]) -> Iterator[bytes]:
    try:
        for part in parts:
            yield part if type(part) is bytes else part.bytes()
    finally:
        for each in spools:
            each.close()
