"""The compiled index patched for rows whose wording changed, not their place, triggers or rank.

`bank index` after a lesson's title, when, do, keywords or tags changed (not its commands, paths,
tools, priority, confidence or slug, nor the rows' order): of the file built from the old INDEX.md
only the changed rows' lesson records and the recall postings are worked out again; the key
tables, trigger groups and programs are copied as they are (nothing in them depends on a row's
wording). The sections are laid out by `compiled_build.layout`, as a build lays them out, so the
bytes are those of a build from the new INDEX.md; a change a patch cannot make gives None and
the caller joins all the rows' pieces instead.
"""

import array
import marshal
import sys
from collections.abc import Callable

from lessonbank.kernel import compiled_build, index_md
from lessonbank.kernel.compiled_read import FORMAT, MAGIC, bucket

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
    same order; `piece` gives a row line's `compiled_build.piece` (None when unknown). None when
    the change is not one a patch can make."""
    if not changes or len(changes) > MOST_ROWS:
        return None
    swaps: dict[int, tuple[tuple, tuple]] = {}
    for n, old_line, new_line in changes:
        before, after = piece(old_line), piece(new_line)
        # head (slug, priority, confidence: numbers and ranks), tools and triggers the same
        if n in swaps or before is None or after is None or before[0] != after[0] or before[2:4] != after[2:4]:
            return None
        swaps[n] = (before, after)
    try:
        return _patched(old_file, swaps, settings, key)
    except (ValueError, EOFError, TypeError, KeyError, IndexError):  # not the file it should be
        return None


def changed_rows(old_text: str, new_text: str) -> "list[tuple[int, str, str]] | None":
    """(row number, old line, new line) of the INDEX.md table rows that differ between two texts
    whose other lines are the same (None otherwise, or when they differ in more than MOST_ROWS
    lines): the lines are compared as they are, the table is not parsed."""
    old_lines, new_lines = old_text.splitlines(), new_text.splitlines()
    if len(old_lines) != len(new_lines):
        return None
    differ = [i for i, (a, b) in enumerate(zip(old_lines, new_lines, strict=True)) if a != b]
    if not differ or len(differ) > MOST_ROWS:
        return None
    try:
        first = next(index_md.table_lines(new_text))[0] - 1  # the rows follow one another from there
    except (StopIteration, index_md.IndexFormatError):
        return None
    if differ[0] < first:
        return None
    # a line past the rows has no piece, so `patch` declines it
    return [(i - first, old_lines[i].strip(), new_lines[i].strip()) for i in differ]


def _patched(old_file: bytes, swaps: dict, settings: dict, key: tuple) -> "list[bytes] | None":
    if old_file[:8] != MAGIC or int.from_bytes(old_file[8:12], "little") != FORMAT:
        return None
    size = int.from_bytes(old_file[12:16], "little")
    meta = marshal.loads(old_file[16 : 16 + size])
    count = meta["count"]
    if meta["settings"] != settings or max(swaps) >= count or meta["byteorder"] != sys.byteorder:
        return None
    base = 16 + size

    def section(name: str) -> bytes:
        offset, length = meta["sections"][name]
        return old_file[base + offset : base + offset + length]

    def offsets(name: str) -> array.array:
        table = array.array("I")
        table.frombytes(section(name + ".table"))
        return table

    recall = _recall_buckets(offsets("recall"), section("recall.data"), swaps)
    sections: list[tuple[str, list[bytes]]] = []
    for name in meta["sections"]:  # in the order a build lays them out
        if name == "recall.filter":  # with recall.table and recall.data, which follow it
            if recall is None:  # a key came or went: the table's size and filter change
                mapping = _recall(offsets("recall"), section("recall.data"), swaps)
                sections.extend(compiled_build.hashed_sections("recall", mapping))
            else:
                sections.append((name, [section(name)]))
                sections.extend(_splice("recall", offsets("recall"), section("recall.data"), recall))
        elif name == "lessons.table":  # with lessons.data
            records = {n: after[1] for n, (_, after) in swaps.items()}
            sections.extend(_splice("lessons", offsets("lessons"), section("lessons.data"), records))
        elif name not in ("recall.table", "recall.data", "lessons.data"):
            sections.append((name, [section(name)]))
    return compiled_build.layout(sections, key, settings, meta["gram_lengths"], count)


def _splice(name: str, table: array.array, data: bytes, blobs: dict[int, bytes]) -> list[tuple[str, list[bytes]]]:
    """An array's table and data sections with the records numbered in `blobs` replaced."""
    parts: list[bytes] = []
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
        old, new = set(before[4].split()), set(after[4].split())
        out.append((n, old - new, new - old))
    return out


def _recall_buckets(table: array.array, data: bytes, swaps: dict) -> "dict[int, bytes] | None":
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
    return {number: marshal.dumps(found, compiled_build.MARSHAL_VERSION) for number, found in touched.items()}


def _recall(table: array.array, data: bytes, swaps: dict) -> dict:
    """The whole recall table (key -> lesson numbers) with the changed rows' postings moved."""
    mapping: dict[str, tuple[int, ...]] = {}
    for i in range(len(table) - 1):
        if table[i + 1] > table[i]:
            mapping.update(marshal.loads(data[table[i] : table[i + 1]]))
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
