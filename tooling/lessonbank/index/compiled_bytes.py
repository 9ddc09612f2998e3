"""The compiled file's bytes: the tables' sections laid out behind a head, in memory or from temporary files.

The file is MAGIC, the format and the meta (`serialize_meta`: the staleness key, the settings,
each section's offset and size, the lesson numbers probed past a taken one), then the sections:
each hashed table (`pre`, `recall`) as a bit filter of its keys, an offset table and its
marshalled buckets; `lessons` as an offset table and buckets of records by lesson number;
`groups` as an offset table and its records; `grams` last. A table's size goes up in steps
(`step`), so a key or a lesson more leaves every other bucket where it was. `layout` lays out any
sections so (a build, a patch: compiled_patch gives a build's bytes through it);
a part may be a `Spool` chunk, read from its temporary file only when written out, so a
50,000-lesson file (47 MB) is never held whole. Read by compiled_read; `CompiledFile` and
`Buckets` read an old file's sections back for a patch (compiled_patch), and `spliced` writes a
section again with a few of its records replaced.
"""

import array
import marshal
import sys
from collections.abc import Iterator, Mapping
from typing import IO

from lessonbank.index.compiled_pieces import MARSHAL_VERSION
from lessonbank.index.compiled_read import FILTER_BITS, FORMAT, MAGIC, Stale, hashed, meta_size

CHUNK = 1 << 20  # bytes read back from a temporary file at a time



def serialize(data: dict, key: tuple) -> bytes:
    """The compiled file: header, meta, then hashed buckets of marshalled dicts and a lesson array."""
    return b"".join(serialize_parts(data, key))


def serialize_parts(data: dict, key: tuple) -> list[bytes]:
    """`serialize`'s bytes as a list of parts, never joined (a 50,000-lesson file is 47 MB)."""
    sections: list[tuple[str, list[bytes]]] = []
    for name in ("pre", "recall"):
        sections.extend(hashed_sections(name, data[name]))
    records = {n: r if type(r) is bytes else marshal.dumps(r, MARSHAL_VERSION) for n, r in data["lessons"].items()}
    table, payload = array_parts(list(lesson_buckets(records)))
    sections += [("lessons.table", [table]), ("lessons.data", payload)]
    table, payload = array_parts([marshal.dumps(g, MARSHAL_VERSION) for g in data["groups"]])
    sections += [("groups.table", [table]), ("groups.data", payload)]
    sections.append(grams_section(data["grams"]))
    return layout(sections, key, data["settings"], data["gram_lengths"], len(data["lessons"]), data["probed"], len(data["recall"]))


def step(count: int) -> int:
    """The size class of a table of `count` keys: the least power of two at least `count` (and 8)."""
    size = 8
    while size < count:
        size <<= 1
    return size


def table_size(count: int) -> int:
    """The number of buckets of a table of `count` keys: the least prime at least its `step`."""
    return _prime_at_least(step(count))


def lesson_buckets(records: "Mapping[int, bytes]") -> Iterator[bytes]:
    """The `lessons` table's buckets in order (lesson number -> marshalled record): a hashed
    table whose keys are their own numbers (compiled_read.DiskIndex.lesson)."""
    return hashed_buckets(records, [(n, n, n) for n in records])


def grams_section(grams: dict) -> "tuple[str, list[bytes]]":
    """The last section: gram -> how many triggers hold it, read only by `compiled_patch`."""
    return ("grams", [marshal.dumps(grams, MARSHAL_VERSION)])


def hashed_sections(name: str, mapping: dict) -> list[tuple[str, list[bytes]]]:
    """The filter, table and data sections of a hashed table (`pre` or `recall`)."""
    keys = hashed(list(mapping))
    table, payload = array_parts(list(hashed_buckets(mapping, keys)))
    return [(name + ".filter", [filter_section(mapping, keys)]), (name + ".table", [table]), (name + ".data", payload)]


def layout(
    sections: list[tuple[str, list[bytes]]], key: tuple, settings: dict, gram_lengths: tuple, count: int, probed: tuple,
    recall_keys: int,
) -> list[bytes]:
    """The file's parts: its head (meta with each section's offset and size), then the sections
    (each given as its parts) in the order given; `compiled_patch` lays out a patched file here too."""
    spans: dict[str, tuple[int, int]] = {}
    blobs: list[bytes] = []
    offset = 0
    for name, parts in sections:
        size = sum(len(part) for part in parts)
        spans[name] = (offset, size)
        blobs.extend(parts)
        offset += size
    meta = {
        "key": key,
        "byteorder": sys.byteorder,
        "settings": settings,
        "gram_lengths": gram_lengths,
        "sections": spans,
        "count": count,
        "probed": probed,
        "recall_keys": recall_keys,
    }
    return [serialize_meta(meta), *blobs]


def serialize_meta(meta: dict) -> bytes:
    """The file's head: MAGIC, the format, the meta's size, the meta (`bank index` rewrites only
    this when nothing but the staleness key changes)."""
    blob = marshal.dumps(meta, MARSHAL_VERSION)
    return MAGIC + FORMAT.to_bytes(4, "little") + len(blob).to_bytes(4, "little") + blob


def hashed_buckets(mapping: "Mapping", keys: "list[tuple] | None" = None) -> Iterator[bytes]:
    """A hashed table's buckets in order, each marshalled as soon as it is filled (an array value
    as the tuple it stands for), so no second copy of the mapping is made; `keys`: the mapping's
    keys `hashed` (compiled_read.bucket's number for each), when the caller has them."""
    size = table_size(len(mapping))
    placed = sorted((n % size, key) for key, n, _ in (hashed(list(mapping)) if keys is None else keys))
    start = 0
    for number in range(size):
        found = {}
        while start < len(placed) and placed[start][0] == number:
            key = placed[start][1]
            value = mapping[key]
            found[key] = tuple(value) if type(value) is array.array else value
            start += 1
        yield marshal.dumps(found, MARSHAL_VERSION) if found else b""


def filter_section(mapping: dict, keys: "list[tuple[str, int, int]] | None" = None) -> bytes:
    """A bit filter of the keys: three bits each (compiled_read.filter_bits), FILTER_BITS bits
    per key (a lookup of a key not in it reads no bucket, but for about one in a hundred);
    `keys` as for `hashed_buckets`."""
    bits = bytearray(filter_bytes(len(mapping)))
    size = len(bits) * 8
    for _, _, x in hashed(list(mapping)) if keys is None else keys:
        for bit in (x % size, (x >> 21) % size, (x >> 42) % size):
            bits[bit >> 3] |= 1 << (bit & 7)
    return bytes(bits)


def filter_bytes(count: int) -> int:
    """The size of the bit filter of a table of `count` keys: FILTER_BITS bits per key of its `step`."""
    return max(64, step(count) * FILTER_BITS // 8)


def array_parts(blobs: list[bytes]) -> tuple[bytes, list[bytes]]:
    offsets = array.array("I", [0])
    for blob in blobs:
        offsets.append(offsets[-1] + len(blob))
    return offsets.tobytes(), blobs


def _prime_at_least(n: int) -> int:
    def prime(k: int) -> bool:
        return k > 1 and all(k % d for d in range(2, int(k**0.5) + 1))

    while not prime(n):
        n += 1
    return n


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
        """The section's offset table, as array_parts gives it."""
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


class CompiledFile:
    """The sections of a compiled file as built with these settings (ValueError for another file)."""

    def __init__(self, data: bytes, settings: dict) -> None:
        try:
            size = meta_size(data)
        except Stale:
            raise ValueError("another format") from None
        self.meta = marshal.loads(data[16 : 16 + size])
        if self.meta["settings"] != settings or self.meta["byteorder"] != sys.byteorder:
            raise ValueError("other settings")
        self.view, self.base = memoryview(data), 16 + size  # sections are views: 10 MB is not copied

    def section(self, name: str) -> memoryview:
        offset, length = self.meta["sections"][name]
        return self.view[self.base + offset : self.base + offset + length]

    def offsets(self, name: str) -> array.array:
        table = array.array("I")
        table.frombytes(self.section(name + ".table"))
        return table

    def records(self, name: str) -> list:
        """Every record (or bucket, {} for an empty one) of a section, unmarshalled."""
        table, data = self.offsets(name), self.section(name + ".data")
        return [marshal.loads(data[table[i] : table[i + 1]]) if table[i + 1] > table[i] else {} for i in range(len(table) - 1)]


class Buckets:
    """The buckets of one section of the old file, each unmarshalled when first asked for; the
    ones changed are written again, the others copied."""

    def __init__(self, old: CompiledFile, name: str) -> None:
        self.name, self.table, self.data = name, old.offsets(name), old.section(name + ".data")
        self.size = len(self.table) - 1
        self.read: dict[int, dict] = {}
        self.changed: set[int] = set()

    def __getitem__(self, number: int) -> dict:
        found = self.read.get(number)
        if found is None:
            start, end = self.table[number], self.table[number + 1]
            found = self.read[number] = marshal.loads(self.data[start:end]) if end > start else {}
        return found

    def every(self) -> dict:
        """All buckets' contents as one mapping."""
        out: dict = {}
        for number in range(self.size):
            out.update(self[number])
        return out

    def sections(self) -> list[tuple[str, list]]:
        """The table and data sections, the changed buckets marshalled again (keys sorted, as a
        build writes them) and each run of unchanged ones copied as one view of the old file."""
        return spliced(self.name, self.table, self.data, {
            n: marshal.dumps(dict(sorted(self.read[n].items())), MARSHAL_VERSION) if self.read[n] else b"" for n in self.changed
        })  # fmt: skip


def spliced(name: str, table: array.array, data: memoryview, blobs: "dict[int, bytes]") -> list[tuple[str, list]]:
    """An offset table and data section with the records numbered in `blobs` replaced: the
    offsets between two replaced records move by one sum, and the data between them is one view."""
    offsets = array.array("I", [0])
    parts: list = []
    start, delta = 0, 0
    for n in sorted(blobs):
        if n > start:  # the records start .. n-1 as they were
            offsets.extend(array.array("I", [x + delta for x in table[start + 1 : n + 1]]) if delta else table[start + 1 : n + 1])
            parts.append(data[table[start] : table[n]])
        blob = blobs[n]
        parts.append(blob)
        offsets.append(offsets[-1] + len(blob))
        delta = offsets[-1] - table[n + 1]
        start = n + 1
    if start < len(table) - 1:
        offsets.extend(array.array("I", [x + delta for x in table[start + 1 :]]) if delta else table[start + 1 :])
        parts.append(data[table[start] : table[-1]])
    return [(name + ".table", [offsets.tobytes()]), (name + ".data", parts)]
