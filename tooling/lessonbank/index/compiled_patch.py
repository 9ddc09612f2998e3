"""The compiled index patched for rows whose wording changed, not their place, triggers or rank.

`bank index` after a lesson's title, when, do, keywords or tags changed (not its commands, paths,
tools, priority, confidence or slug, nor the rows' order): of the file built from the old INDEX.md
only the changed rows' lesson records and the recall postings are worked out again; the key
tables, trigger groups and programs are copied as they are (nothing in them depends on a row's
wording). The sections are laid out by `compiled_bytes.layout`, as a build lays them out, so the
bytes are those of a build from the new INDEX.md; a change a patch cannot make gives None and
the caller joins all the rows' pieces instead (or, for rows that came, went or moved,
`compiled_rows` patches them).
"""

import array
import marshal
import sys
from collections.abc import Callable

from lessonbank.index import compiled_bytes, index_md
from lessonbank.index.compiled_pieces import HEAD, KEYS, MARSHAL_VERSION, RECORD, TOOLS, TRIGGERS
from lessonbank.index.compiled_read import Stale, bucket, meta_size

# More changed rows than this and the join from all pieces is used (a patch is for small edits).
MOST_ROWS = 50


def patch(
    old_file: bytes,
    changes: "list[tuple[int, str, str]]",
    piece: "Callable[[str], tuple | None]",
    settings: dict,
    key: tuple,
) -> "list[bytes] | None":
    """The compiled file, as parts, for the INDEX.md rows `old_file` was built from (with these
    settings) with `changes` made: (row number, old line, new line) each, the same rows in the
    same order; `piece` gives a row line's `compiled_pieces.piece` (None when unknown). None when
    the change is not one a patch can make."""
    if not changes or len(changes) > MOST_ROWS:
        return None
    swaps: dict[int, tuple[tuple, tuple]] = {}
    for n, old_line, new_line in changes:
        before, after = piece(old_line), piece(new_line)
        # head (slug, priority, confidence: numbers and ranks), tools and triggers the same
        if n in swaps or before is None or after is None or before[HEAD] != after[HEAD] or before[TOOLS : TRIGGERS + 1] != after[TOOLS : TRIGGERS + 1]:
            return None
        swaps[n] = (before, after)
    try:
        return _patched(old_file, swaps, settings, key)
    except (ValueError, EOFError, TypeError, KeyError, IndexError):  # not the file it should be
        return None


def changed_rows(old_lines: "list[str]", new_lines: "list[str]") -> "list[tuple[int, str, str]] | None":
    """(row number, old line, new line) of the INDEX.md table rows that differ between two texts
    (given as their lines) whose other lines are the same (None otherwise, or when they differ in
    more than MOST_ROWS lines): the lines are compared as they are, the table is not parsed."""
    if len(old_lines) != len(new_lines):
        return None
    differ = [i for i, (a, b) in enumerate(zip(old_lines, new_lines, strict=True)) if a != b]
    if not differ or len(differ) > MOST_ROWS:
        return None
    first = first_row(new_lines)
    if first is None or differ[0] < first:
        return None
    # a line past the rows has no piece, so `patch` declines it
    return [(i - first, old_lines[i].strip(), new_lines[i].strip()) for i in differ]


def first_row(lines: "list[str]") -> "int | None":
    """The index of the table's first row among INDEX.md's lines as `bank index` writes them (its
    header and rule lines just before); None without them."""
    header = index_md.row_line(list(index_md.COLUMNS))
    try:
        at = lines.index(header)  # a scan at C speed: `table_lines` would split every row
    except ValueError:
        return None
    if lines[at + 1 : at + 2] != [index_md.row_line(["---"] * len(index_md.COLUMNS))]:
        return None
    return at + 2


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
        """Every record (or bucket, {} for an empty one) of an array or hashed section, unmarshalled."""
        table, data = self.offsets(name), self.section(name + ".data")
        return [marshal.loads(data[table[i] : table[i + 1]]) if table[i + 1] > table[i] else {} for i in range(len(table) - 1)]


def _patched(old_file: bytes, swaps: dict, settings: dict, key: tuple) -> "list[bytes] | None":
    try:
        found = CompiledFile(old_file, settings)
    except ValueError:
        return None
    meta, section, offsets = found.meta, found.section, found.offsets
    count = meta["count"]
    if max(swaps) >= count:
        return None

    recall = _recall_buckets(offsets("recall"), section("recall.data"), swaps)
    sections: list[tuple[str, list]] = []  # parts are bytes or views of the old file's
    for name in meta["sections"]:  # in the order a build lays them out
        if name == "recall.filter":  # with recall.table and recall.data, which follow it
            if recall is None:  # a key came or went: the table's size and filter change
                mapping = _recall(found.records("recall"), swaps)
                sections.extend(compiled_bytes.hashed_sections("recall", mapping))
            else:
                sections.append((name, [section(name)]))
                sections.extend(_splice("recall", offsets("recall"), section("recall.data"), recall))
        elif name == "lessons.table":  # with lessons.data
            records = {n: after[RECORD] for n, (_, after) in swaps.items()}
            sections.extend(_splice("lessons", offsets("lessons"), section("lessons.data"), records))
        elif name not in ("recall.table", "recall.data", "lessons.data"):
            sections.append((name, [section(name)]))
    return compiled_bytes.layout(sections, key, settings, meta["gram_lengths"], count)


def _splice(name: str, table: array.array, data: "bytes | memoryview", blobs: dict[int, bytes]) -> list[tuple[str, list]]:
    """An array's table and data sections with the records numbered in `blobs` replaced."""
    parts: list = []
    new = array.array("I", table)
    start = 0
    for n in sorted(blobs):
        blob = blobs[n]
        parts += [data[table[start] : table[n]], blob]
        start = n + 1
        delta = len(blob) - (table[n + 1] - table[n])
        if delta:
            for i in range(n + 1, len(new)):
                new[i] += delta
    parts.append(data[table[start] : table[-1]])
    return [(name + ".table", [new.tobytes()]), (name + ".data", parts)]


def _moves(swaps: dict) -> list[tuple[int, set[str], set[str]]]:
    """(row number, recall keys it leaves, recall keys it joins) of each changed row."""
    out = []
    for n, (before, after) in swaps.items():
        old, new = set(before[KEYS].split()), set(after[KEYS].split())
        out.append((n, old - new, new - old))
    return out


def _recall_buckets(table: array.array, data: "bytes | memoryview", swaps: dict) -> "dict[int, bytes] | None":
    """The recall buckets the changed rows' postings move in, re-marshalled (bucket number ->
    bytes); None when a key comes or goes (then the table's size and filter change)."""
    size = len(table) - 1
    touched: dict[int, dict] = {}

    def holding(term: str) -> dict:
        number = bucket(term, size)
        if number not in touched:
            start, end = table[number], table[number + 1]
            touched[number] = marshal.loads(data[start:end]) if end > start else {}
        return touched[number]

    for n, leaves, joins in _moves(swaps):
        for term in leaves:
            found = holding(term)
            rest = tuple(x for x in found[term] if x != n)
            if not rest:
                return None
            found[term] = rest
        for term in joins:
            found = holding(term)
            if term not in found:
                return None
            found[term] = tuple(sorted((*found[term], n)))
    return {number: marshal.dumps(found, MARSHAL_VERSION) for number, found in touched.items()}


def _recall(buckets: list, swaps: dict) -> dict:
    """The whole recall table (key -> lesson numbers), from its buckets, with the changed rows'
    postings moved."""
    mapping: dict[str, tuple[int, ...]] = {}
    for found in buckets:
        mapping.update(found)
    for n, leaves, joins in _moves(swaps):
        for term in leaves:
            rest = tuple(x for x in mapping[term] if x != n)
            if rest:
                mapping[term] = rest
            else:
                del mapping[term]
        for term in joins:
            mapping[term] = tuple(sorted((*mapping.get(term, ()), n)))
    return mapping
