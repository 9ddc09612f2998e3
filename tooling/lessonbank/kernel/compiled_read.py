"""Reading the compiled index (`<bank>/.lessonbank/index.bin`) with a few `pread`s per hook call.

If INDEX.md or bank.toml differ from the staleness key in the file (see `compiled_build`), or the
file is missing, unreadable or of another format, `load` rebuilds the tables from INDEX.md itself
(slower, same answers) and rewrites the file for the next call. Only the buckets a call needs are
read and unmarshalled, so the cost hardly grows with the bank.
"""

import marshal
import posix
import sys

from lessonbank.kernel import compiled_build as build
from lessonbank.kernel import statedir as state
from lessonbank.kernel.compiled_build import FORMAT, MAGIC, NAME, bucket, read_sources, source_key


class Stale(Exception):
    """The compiled file does not describe the current INDEX.md and bank.toml."""


class DiskIndex:
    """The compiled file, read lazily by section and bucket."""

    def __init__(self, path: str, key: tuple) -> None:
        self.fd = posix.open(path, posix.O_RDONLY)
        try:
            head = posix.pread(self.fd, 4096, 0)
            if head[:8] != MAGIC or int.from_bytes(head[8:12], "little") != FORMAT:
                raise Stale("format")
            size = int.from_bytes(head[12:16], "little")
            raw = head[16 : 16 + size]
            if len(raw) < size:
                raw = posix.pread(self.fd, size, 16)
            meta = marshal.loads(raw)
            if meta["key"] != key or meta["byteorder"] != sys.byteorder:
                raise Stale("key")
        except BaseException:
            posix.close(self.fd)
            raise
        self.base = 16 + size
        self.sections = meta["sections"]
        self.settings = meta["settings"]
        self.gram_lengths = meta["gram_lengths"]
        self.count = meta["count"]
        self._tables: dict[str, memoryview] = {}

    def _read(self, name: str, start: int = 0, length: int | None = None) -> bytes:
        offset, size = self.sections[name]
        if length is None:
            length = size - start
        data = posix.pread(self.fd, length, self.base + offset + start)
        if len(data) != length:
            raise Stale("truncated")
        return data

    def _table(self, name: str) -> memoryview:
        table = self._tables.get(name)
        if table is None:
            table = memoryview(self._read(name + ".table")).cast("I")
            self._tables[name] = table
        return table

    def lookup(self, section: str, keys: "list[str] | set[str]") -> dict:
        """The stored values of those `keys` present in `section` ("pre" or "recall")."""
        table = self._table(section)
        size = len(table) - 1
        wanted: dict[int, list[str]] = {}
        for key in keys:
            wanted.setdefault(bucket(key, size), []).append(key)
        found = {}
        for number, names in wanted.items():
            start, end = table[number], table[number + 1]
            if start == end:
                continue
            content = marshal.loads(self._read(section + ".data", start, end - start))
            for name in names:
                if name in content:
                    found[name] = content[name]
        return found

    def lesson(self, number: int) -> tuple:
        """(slug, priority, confidence, full text, summary) of lesson `number`."""
        table = self._table("lessons")
        start, end = table[number], table[number + 1]
        return marshal.loads(self._read("lessons.data", start, end - start))


class MemIndex:
    """The same interface over tables built in memory (the fallback)."""

    def __init__(self, data: dict) -> None:
        self.data = data
        self.settings = data["settings"]
        self.gram_lengths = data["gram_lengths"]
        self.count = len(data["lessons"])

    def lookup(self, section: str, keys: "list[str] | set[str]") -> dict:
        table = self.data[section]
        return {key: table[key] for key in keys if key in table}

    def lesson(self, number: int) -> tuple:
        return self.data["lessons"][number]


def load(root: str, state_dir: str) -> "DiskIndex | MemIndex":
    """The bank's index: the compiled file when it is current, else rebuilt from INDEX.md."""
    key = source_key(root)
    try:
        return DiskIndex(state_dir + "/" + NAME, key)
    except (OSError, Stale, ValueError, EOFError, TypeError, KeyError):
        pass
    return rebuild(root, state_dir)


def rebuild(root: str, state_dir: str, write: bool = True) -> MemIndex:
    """Build the tables from INDEX.md (and bank.toml) and, when asked, rewrite the compiled file."""
    index_text, toml_text, key = read_sources(root)
    data = build.from_texts(index_text, toml_text)
    if write and key is not None:
        try:
            state.write_atomic(state_dir + "/" + NAME, build.serialize(data, key))
        except OSError:
            return MemIndex(data)  # a read-only state folder only costs speed
    return MemIndex(data)
