"""The compiled index (`<bank>/.lessonbank/index.bin`): its format, read with a few `pread`s per hook call.

The file starts with MAGIC, the format number and a marshalled meta dict holding the staleness
key: (size, mtime_ns, ctime_ns, inode) of INDEX.md and of bank.toml when it was built; then the
sections `compiled_build` writes. `current` gives the file when it describes INDEX.md and
bank.toml as they are now, else None: the caller then rebuilds the tables from INDEX.md with
`compiled_build.rebuild` (slower, same answers), which also rewrites the file. Only the buckets a
call needs are read and unmarshalled, so the cost hardly grows with the bank: each hashed table
carries a bit filter of its keys (FILTER_BITS per key, three bits each), read once per call,
so the keys a call looks up that no lesson has (nearly all of them) cost no bucket read.
"""

import marshal
import posix
import sys

from lessonbank.state import statedir

MAGIC = b"LBANKIX\x00"
# 3: longer keys, literal checks, ranks, programs apart, key filters; 4: hazardous regexes and
# globs left out; 5: word-boundary literals and required alternations in each entry; 6: entries
# in groups by a second key; 7: each lesson record carries its terms; 8: a `grams` section at the
# end (how many triggers hold each gram, read only by compiled_patch); 9: lessons numbered by
# their slug, not their row (a new row moves no other), found by number in a hashed table, each
# entry holding its program, no ranks, tables sized in steps. A file of another format is stale,
# so it is rebuilt.
FORMAT = 9
NAME = statedir.COMPILED_INDEX
ALWAYS_COMMAND = "\x00c"
ALWAYS_PATH = "\x00p"
TOOL = "\x00t:"
# What `re`'s IGNORECASE equates with ASCII letters, folded alike in triggers and subjects.
FOLD = dict(zip(range(65, 91), range(97, 123), strict=True))
FOLD.update({0x130: 105, 0x131: 105, 0x17F: 115, 0x212A: 107})
# Every whitespace character (str.isspace, what `\s` matches) folds to a space: a trigger's `\s`
# stands in its literals as " " (regex_compiler), so "go " is a key `cargo tree` does not hold.
WHITESPACE = "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f\x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
FOLD.update(dict.fromkeys(map(ord, WHITESPACE), 32))
# The bounded form of an ASCII text: lower case, every character that is not a word character
# as \x01 (regex_compiler.BOUNDARY), with one more at each end, so that a trigger's literal with
# its word boundaries marked (`\bgo\s+test\b` -> "\x01go\x01", "\x01test\x01") is a substring
# of every text the trigger can match: "go test" holds it, "cargo test" does not. A string indexed
# by code point (one constant, nothing to build at import); str.translate leaves characters past
# its end as they are.
BOUND = (
    "\x01" * 48 + "0123456789" + "\x01" * 7 + "abcdefghijklmnopqrstuvwxyz" + "\x01" * 4 + "_\x01"
    + "abcdefghijklmnopqrstuvwxyz" + "\x01" * 5
)  # fmt: skip


# The records the hooks read, by position (compiled_build writes them; marshalled tuples cost no
# class to build or load, and an int constant bound to a local costs nothing to read).
# A lesson record (`lessons`, one per INDEX.md row): (slug, priority, confidence, full text,
# summary, terms), the terms the stemmed words of title, when and do (the layers' same-meaning check).
L_SLUG = 0
L_PRIORITY = 1
L_CONFIDENCE = 2
L_FULL = 3
L_SUMMARY = 4
L_TERMS = 5
# A trigger entry (`groups`): its lesson's number, slug, priority and confidence; the tools it
# names (none: a command trigger applies to Bash, a path trigger to any tool); its kind ("c" a
# command regex, "p" a path glob, "t" tool-only); its source text; its program, marshalled (None
# for kind "t": unmarshalled only for the few entries that get that far); the folded literals
# every match holds; the literals with a word boundary marked (checked against `bounded`); and
# its choices (alternations every match passes through: each a tuple of branches, one of which
# is in it). Lessons rank best first by priority, confidence and slug, from the entry itself.
E_NUMBER = 0
E_SLUG = 1
E_PRIORITY = 2
E_CONFIDENCE = 3
E_TOOLS = 4
E_KIND = 5
E_SOURCE = 6
E_PROGRAM = 7
E_LITERALS = 8
E_BOUNDED = 9
E_CHOICES = 10

# Candidate keys are folded literals of these lengths: a literal run of a trigger is keyed by its
# substrings of the longest length it reaches (a longer key is rarer, so fewer candidates).
KEY_LENGTHS = (8, 5, 3, 2)
FILTER_BITS = 24
_MIX = 0x9E3779B97F4A7C15
# `_records` reads the offsets of records at most SPAN apart at once, and their data at once when
# it is at most SPAN_BYTES.
SPAN = 512
SPAN_BYTES = 1 << 16


def bucket(key: str, size: int) -> int:
    """A key's bucket: stable across processes (unlike `hash`); its number from `hashed`."""
    [(_, number, _)] = hashed([key])
    return number % size


def filter_bits(key: str, bits: int) -> "tuple[int, int, int]":
    """The three bits of a key in a filter of `bits` bits."""
    [(_, _, x)] = hashed([key])
    return x % bits, (x >> 21) % bits, (x >> 42) % bits


def hashed(keys: "list[str] | set[str]") -> "list[tuple[str, int, int]]":
    """(key, its number, its mixed hash) of each key: what `bucket` and `filter_bits` take the
    remainders of, worked out once per call however many layers' indexes it looks up."""
    out = []
    for key in keys:
        n = int.from_bytes(key.encode("utf-8"), "little")
        out.append((key, n, (n % 2305843009213693951 * _MIX) & 0xFFFFFFFFFFFFFFFF))
    return out


def fold(text: str) -> str:
    """The folded form the candidate keys use: ASCII lower case plus re's ASCII look-alikes, and
    every whitespace character as a space."""
    return text.translate(FOLD)


def bounded(text: str) -> "str | None":
    """The bounded form of an ASCII text, or None for any other (whose word characters are not
    ASCII's, so the check is left out)."""
    return "\x01" + text.translate(BOUND) + "\x01" if text.isascii() else None


def grams(texts: "list[str]", lengths: "tuple[int, ...]") -> "set[str]":
    """Every folded substring of these lengths: the keys a call looks up."""
    out: set[str] = set()
    for text in texts:
        folded = text.translate(FOLD)
        for size in lengths:
            out.update(folded[i : i + size] for i in range(len(folded) - size + 1))
    return out


def source_key(root: str) -> tuple:
    """What the compiled file was built from: (size, mtime_ns, ctime_ns, inode) of INDEX.md and
    bank.toml. An atomic rewrite changes the inode, any write the ctime (which utime cannot set)."""
    key: list[tuple[int, int, int, int] | None] = []
    for name in ("INDEX.md", "bank.toml"):
        try:
            st = posix.stat(root + "/" + name)
            key.append((st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino))
        except OSError:
            key.append(None)
    return tuple(key)


def read_sources(root: str) -> "tuple[str | None, str | None, tuple | None]":
    """INDEX.md and bank.toml texts and the key they were read at (None for a missing file).

    The key is taken before and after reading; if they differ the files were changing and
    the key is None, so that nothing built from this read is ever taken for current.
    """
    before = source_key(root)
    index_md, bank_toml = (statedir.read_text(root + "/" + name) for name in ("INDEX.md", "bank.toml"))
    after = source_key(root)
    return index_md, bank_toml, (before if before == after else None)


class Stale(Exception):
    """The compiled file does not describe the current INDEX.md and bank.toml."""


def meta_size(head: bytes) -> int:
    """The size of the meta after a compiled file's first 16 bytes (Stale for another format)."""
    if head[:8] != MAGIC or int.from_bytes(head[8:12], "little") != FORMAT:
        raise Stale("format")
    return int.from_bytes(head[12:16], "little")


class DiskIndex:
    """The compiled file, read lazily by section and bucket."""

    def __init__(self, path: str, key: tuple) -> None:
        self.fd = posix.open(path, posix.O_RDONLY)
        try:
            head = posix.pread(self.fd, 4096, 0)
            size = meta_size(head)
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
        self._filters: dict[str, bytes] = {}

    def close(self) -> None:
        """Close the file (the hooks' process ends instead)."""
        posix.close(self.fd)

    def _read(self, name: str, start: int = 0, length: int | None = None) -> bytes:
        offset, size = self.sections[name]
        if length is None:
            length = size - start
        data = posix.pread(self.fd, length, self.base + offset + start)
        if len(data) != length:
            raise Stale("truncated")
        return data

    def _span(self, name: str, number: int) -> "tuple[int, int]":
        """(start, end) in `name`.data of record or bucket `number`: two entries of its offset table."""
        pair = self._read(name + ".table", number * 4, 8)
        return int.from_bytes(pair[:4], sys.byteorder), int.from_bytes(pair[4:], sys.byteorder)

    def lookup(self, section: str, keys: "list[str] | set[str]") -> dict:
        """The stored values of those `keys` present in `section` ("pre" or "recall")."""
        return self.probe(section, hashed(keys))

    def probe(self, section: str, keys: "list[tuple[str, int, int]]") -> dict:
        """`lookup` of keys already `hashed`."""
        _, table_size = self.sections[section + ".table"]
        size = table_size // 4 - 1
        bits = self._filters.get(section)
        if bits is None:
            bits = self._filters[section] = self._read(section + ".filter")
        nbits = len(bits) * 8
        wanted: dict[int, list[str]] = {}
        for key, n, x in keys:
            # Most keys miss at the first bit: the other two are worked out only when it is set.
            a = x % nbits
            if not bits[a >> 3] & (1 << (a & 7)):
                continue
            b = (x >> 21) % nbits
            if not bits[b >> 3] & (1 << (b & 7)):
                continue
            c = (x >> 42) % nbits
            if bits[c >> 3] & (1 << (c & 7)):
                number = n % size
                if number in wanted:
                    wanted[number].append(key)
                else:
                    wanted[number] = [key]
        found = {}
        numbers = sorted(wanted)
        for number, content in zip(numbers, self._records(section, numbers), strict=True):
            for name in wanted[number]:
                if content is not None and name in content:
                    found[name] = content[name]
        return found

    def lesson(self, number: int) -> tuple:
        """The record of lesson `number` (its fields at L_SLUG … L_TERMS): one bucket of the
        `lessons` table (number -> marshalled record), numbered by `number` modulo its size."""
        _, table_size = self.sections["lessons.table"]
        bucket_ = self._record("lessons", number % (table_size // 4 - 1))
        return marshal.loads(bucket_[number])  # type: ignore[index]

    def program(self, code: bytes) -> object:
        """The compiled program an entry holds (its field E_PROGRAM, marshalled)."""
        return marshal.loads(code)

    def entries(self, found: dict, grams: "set[str]") -> "list[tuple]":
        """The trigger entries of the groups `lookup("pre", …)` found whose second key is in `grams`."""
        return [e for group in self._records("groups", _wanted(found, grams)) for e in group]

    def _record(self, name: str, number: int) -> object:
        start, end = self._span(name, number)
        return marshal.loads(self._read(name + ".data", start, end - start))

    def _records(self, name: str, numbers: "list[int]") -> list:
        """Records or buckets `numbers` (ascending) of `name`, None for an empty one. Numbers
        within SPAN of each other share one read of the offset table, and their data one read
        when it is at most SPAN_BYTES: a call's groups lie close together (they are numbered by
        key), so a few reads fetch them all."""
        out: list = []
        i, count = 0, len(numbers)
        while i < count:
            first = numbers[i]
            j = i + 1
            while j < count and numbers[j] - first < SPAN:
                j += 1
            last = numbers[j - 1]
            offsets = memoryview(self._read(name + ".table", first * 4, (last - first + 2) * 4)).cast("I")
            base = offsets[0]
            size = offsets[last - first + 1] - base
            data = self._read(name + ".data", base, size) if size <= SPAN_BYTES else None
            for number in numbers[i:j]:
                start, end = offsets[number - first], offsets[number - first + 1]
                if start == end:
                    out.append(None)
                elif data is not None:
                    out.append(marshal.loads(data[start - base : end - base]))
                else:
                    out.append(marshal.loads(self._read(name + ".data", start, end - start)))
            i = j
        return out


class MemIndex:
    """The same interface over tables built in memory (the fallback)."""

    def __init__(self, data: dict) -> None:
        # Records come marshalled from compiled_build (as the file holds them), by lesson number.
        data["lessons"] = {n: marshal.loads(r) if type(r) is bytes else r for n, r in data["lessons"].items()}
        self.data = data
        self.settings = data["settings"]
        self.gram_lengths = data["gram_lengths"]
        self.count = len(data["lessons"])

    def lookup(self, section: str, keys: "list[str] | set[str]") -> dict:
        table = self.data[section]
        return {key: table[key] for key in keys if key in table}

    def probe(self, section: str, keys: "list[tuple[str, int, int]]") -> dict:
        return self.lookup(section, [key for key, _, _ in keys])

    def lesson(self, number: int) -> tuple:
        return self.data["lessons"][number]

    def program(self, code: bytes) -> object:
        return marshal.loads(code)

    def entries(self, found: dict, grams: "set[str]") -> "list[tuple]":
        return [e for gid in _wanted(found, grams) for e in self.data["groups"][gid]]


def _wanted(found: dict, grams: "set[str]") -> "list[int]":
    """The group numbers among `found` (key -> {second key: group}) whose second key is "" or in `grams`."""
    return sorted(gid for seconds in found.values() for second, gid in seconds.items() if not second or second in grams)


def current(root: str, state_dir: str) -> "DiskIndex | None":
    """The compiled file when it describes INDEX.md and bank.toml as they are now, else None."""
    try:
        return DiskIndex(state_dir + "/" + NAME, source_key(root))
    except (OSError, Stale, ValueError, EOFError, TypeError, KeyError):
        return None
