"""The compiled index patched for one run of INDEX.md rows removed and rows put in its place.

A captured lesson, a deleted one, a changed priority or trigger: later rows' numbers, every rank
after the new rows, program numbers and recall postings shift; the new rows' entries are filed by
the file's `grams` section (how many triggers hold each gram), and the rows whose key could move
with those counts are filed again from their pieces: those filed under a gram that grew commoner,
and those holding one that grew rarer (which rows hold a gram is not in the file: every gram of a
trigger is inside one of its literals, so the rows with a literal containing it are filed again,
a few more than need be). The sections are laid out by `compiled_bytes.layout`, so the bytes are
those of a build from the new INDEX.md; a change it cannot make gives None.
"""

import array
import marshal
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Callable

from lessonbank.index import compiled_build, compiled_bytes
from lessonbank.index.compiled_patch import MOST_ROWS, CompiledFile, first_row
from lessonbank.index.compiled_pieces import (
    GRAMS,
    HEAD,
    KEYS,
    KIND,
    MARSHAL_VERSION,
    RECORD,
    TRIGGERS,
    rank_key,
)
from lessonbank.index.compiled_read import (
    E_BOUNDED,
    E_CHOICES,
    E_CONFIDENCE,
    E_LITERALS,
    E_NUMBER,
    E_PRIORITY,
    E_PROGRAM,
    E_RANK,
    E_SLUG,
)

# More rows than this filed again and the join from all pieces is used.
MOST_REFILED = 1000
# A larger file is not patched: a patch holds the old file and its groups and recall postings
# unmarshalled (a 14 MB file at 10,000 lessons: 44 MiB more than the streamed build's peak), and
# the streamed build keeps `bank index` of 50,000 lessons (47 MB) under 200 MiB.
MOST_BYTES = 24 << 20


def patch_rows(
    old_file: bytes, old_lines: "list[str]", new_lines: "list[str]", piece: "Callable[[str], tuple | None]",
    settings: dict, key: tuple,
) -> "list[bytes] | None":  # fmt: skip
    """The compiled file, as parts, for the INDEX.md of `new_lines`, patched from `old_file` (built
    from the INDEX.md of `old_lines` with these settings) when the two differ in one run of table
    rows (up to MOST_ROWS lines, removed and put in their place); `piece` gives a row line's
    `compiled_pieces.piece` (None when unknown). None when the change is not one it can make."""
    if len(old_file) > MOST_BYTES:
        return None
    start = _same_start(old_lines, new_lines)
    end = min(_same_start(old_lines[::-1], new_lines[::-1]), min(len(old_lines), len(new_lines)) - start)
    gone, added = old_lines[start : len(old_lines) - end], new_lines[start : len(new_lines) - end]
    if not (gone or added) or len(gone) + len(added) > MOST_ROWS:
        return None
    if not all(line.startswith("|") for line in gone + added):  # a patch is for rows only
        return None
    first = first_row(new_lines)
    if first is None or start < first:
        return None
    try:
        return _rows_patched(CompiledFile(old_file, settings), old_lines, first, start - first, gone, added, piece, key)
    except (ValueError, EOFError, TypeError, KeyError, IndexError):  # not the file it should be
        return None


def _same_start(a: "list[str]", b: "list[str]") -> int:
    """How many lines `a` and `b` share at the start (compared a slice at a time: a line at a time
    is a Python loop over 10,000 rows)."""
    same, most = 0, min(len(a), len(b))
    while same + 256 <= most and a[same : same + 256] == b[same : same + 256]:
        same += 256
    while same < most and a[same] == b[same]:
        same += 1
    return same


def _ranks_before(order: "list[tuple]", gone: "list[tuple]", new: "list[tuple]") -> "list[int] | None":
    """How many old rows rank before each of the `gone` and `new` rows' rank keys, from every old
    row's rank key `order` (sorted, so a key's place is its rank). None when that cannot be told
    (a gone row's key missing, or one key held twice: a build then ranks them by row number)."""
    out = []
    for n, k in enumerate(gone + new):
        i = bisect_left(order, k)
        if i < len(order) and order[i] == k:
            if (i + 1 < len(order) and order[i + 1] == k) or (n >= len(gone) and k not in gone):
                return None
        elif n < len(gone):
            return None
        out.append(i)
    return out

def _ranks_from_entries(groups: list, count: int, gone: "list[tuple]", new: "list[tuple]") -> "list[int] | None":
    """`_ranks_before` from the trigger entries alone (each holds its row's priority, confidence,
    slug and rank): for each key, the highest rank below it, the lowest above it and the ranks at
    it, in one pass and without a tuple made per entry."""
    keys = gone + new
    low, high = [-1] * len(keys), [count] * len(keys)
    equal: list[set[int]] = [set() for _ in keys]
    for group in groups:
        for e in group:
            for i, (priority, confidence, slug) in enumerate(keys):  # a key is (-priority, -confidence, slug)
                p, c = -e[E_PRIORITY], -e[E_CONFIDENCE]
                if p < priority or (p == priority and (c < confidence or (c == confidence and e[E_SLUG] < slug))):
                    if e[E_RANK] > low[i]:
                        low[i] = e[E_RANK]
                elif p == priority and c == confidence and e[E_SLUG] == slug:
                    equal[i].add(e[E_RANK])
                elif e[E_RANK] < high[i]:
                    high[i] = e[E_RANK]
    out = []
    for i, k in enumerate(keys):
        if equal[i]:
            if len(equal[i]) > 1 or (i >= len(gone) and k not in gone):
                return None  # the same rank key twice: a build ranks them by row number
            out.append(next(iter(equal[i])))
        elif i < len(gone) or high[i] != low[i] + 1:  # a row without triggers could sit between
            return None
        else:
            out.append(high[i])
    return out


def _line_rank_key(line: str) -> tuple:
    """`compiled_pieces.rank_key` of a table row, read from its first and last two cells (not parsed whole)."""
    slug = line[line.index("[") + 1 : line.index("](")]
    _, priority, confidence = line[:-1].rsplit("|", 2)
    return (-int(priority), -float(confidence), slug)


def _rows_patched(
    old: CompiledFile, old_lines: list[str], first: int, at: int, gone: list[str], added: list[str],
    piece: "Callable[[str], tuple | None]", key: tuple,
) -> "list[bytes] | None":  # fmt: skip
    """`patch_rows` once the run is found: rows `at` .. `at + len(gone)` of the old file are
    replaced by the pieces of the `added` lines."""
    count = old.meta["count"]
    removed, put = len(gone), len(added)
    if at + removed > count or (first + count < len(old_lines) and old_lines[first + count].startswith("|")):
        return None
    found = [piece(line.strip()) for line in gone + added]
    pieces = [p for p in found if p is not None]
    if len(pieces) != len(found):
        return None
    gone_pieces, new_pieces = pieces[:removed], pieces[removed:]
    shift = put - removed  # what a later row's number moves by

    pre = {}
    for bucket_ in old.records("pre"):
        pre.update(bucket_)
    groups = old.records("groups")

    # Ranks: a row left as it was moves down by the added rows before it, up by the removed ones.
    gone_keys = [rank_key(p[HEAD]) for p in gone_pieces]
    new_keys = [rank_key(p[HEAD]) for p in new_pieces]
    ranked = _ranks_from_entries(groups, count, gone_keys, new_keys)
    if ranked is None:  # beside a row without triggers: every row's rank key, from its line
        order = sorted(_line_rank_key(line) for line in old_lines[first : first + count])
        ranked = _ranks_before(order, gone_keys, new_keys)
        if ranked is None:
            return None
    gone_ranks = sorted(ranked[: len(gone_keys)])
    before = ranked[len(gone_keys) :]  # old rows ranked before each new row
    new_ranks = [b - bisect_left(gone_ranks, b) + sum(other < k for other in new_keys) for k, b in zip(new_keys, before, strict=True)]
    below = sorted(before)

    def rank_of(rank: int) -> int:
        return rank - bisect_left(gone_ranks, rank) + bisect_right(below, rank)

    # Gram counts: a gram a removed trigger held that a row left as it was also holds could now
    # key that row; one that grew commoner could stop keying the rows filed under it.
    counts: dict[str, int] = marshal.loads(old.section("grams"))
    delta: Counter[str] = Counter()
    held: Counter[str] = Counter()  # by the new rows' triggers
    for sign, side in ((-1, gone_pieces), (1, new_pieces)):
        for p in side:
            for trigger in p[TRIGGERS]:
                if trigger[GRAMS]:
                    grams = {g for run in trigger[GRAMS] for g in run}
                    delta.update(dict.fromkeys(grams, sign))
                    if sign > 0:
                        held.update(grams)
    grew, shrank, fresh = set(), set(), False
    for gram, change in delta.items():
        total = counts.get(gram, 0) + change
        if change < 0 and total > held[gram]:  # rows left as they were hold it
            shrank.add(gram)
        if change > 0:
            grew.add(gram)
        if total:
            fresh = fresh or gram not in counts
            counts[gram] = total
        elif gram in counts:
            del counts[gram]
    if fresh:  # a build writes them sorted
        counts = dict(sorted(counts.items()))

    def rarity(gram: str) -> tuple:  # as a build ranks grams (compiled_build.assemble)
        return (counts[gram], -len(gram), gram)

    refile: set[int] = set()  # old numbers of the rows filed again
    for gram_key, seconds in pre.items():
        for second, gid in seconds.items():
            if gram_key in grew or second in grew:
                refile.update(e[E_NUMBER] for e in groups[gid] if not at <= e[E_NUMBER] < at + removed)
    by_rarity = sorted(shrank, key=rarity)
    rarities = [rarity(gram) for gram in by_rarity]
    for gram_key, seconds in pre.items() if shrank else ():
        if gram_key not in counts:  # always-checked and tool-only entries (no gram), or a key
            continue  # only the removed rows held
        for second, gid in seconds.items():
            if second and second not in counts:  # held by the removed rows alone, as are its entries
                continue
            # A gram that grew rarer moves an entry only if it is now rarer than its key or second
            # key; which rows hold a gram is not in the file, but a holder's literals contain it.
            bar = max(rarity(gram_key), rarity(second)) if second else rarity(gram_key)
            rarer = by_rarity[: bisect_left(rarities, bar)]
            if rarer:  # the group's literals at once first: most hold none of those grams
                held_here = "\x00".join(lit for e in groups[gid] for lit in e[E_LITERALS])
                rarer = [gram for gram in rarer if gram in held_here]
            for e in groups[gid] if rarer else ():
                if not at <= e[E_NUMBER] < at + removed and e[E_NUMBER] not in refile:
                    literals = "\x00".join(e[E_LITERALS])
                    if any(gram in literals for gram in rarer):
                        refile.add(e[E_NUMBER])
    if len(refile) > MOST_REFILED:
        return None

    # Every entry: renumbered, re-ranked, its program renumbered; the removed and re-filed rows' left out.
    programs_before = 0  # programs of the rows before `at`
    programs_gone = 0
    programs_put = sum(1 for p in new_pieces for t in p[TRIGGERS] if t[KIND] != "t")
    for p in gone_pieces:
        programs_gone += sum(1 for t in p[TRIGGERS] if t[KIND] != "t")
    moved = programs_put - programs_gone
    refiled: dict[int, tuple[int, int]] = {}  # old number -> (old rank, lowest old program)
    table: dict[str, dict[str, list[tuple]]] = {}
    ranks: dict[int, int] = {}
    seen_gone = 0
    for gram_key, seconds in pre.items():
        for second, gid in seconds.items():
            out = []
            for e in groups[gid]:
                number, program = e[E_NUMBER], e[E_PROGRAM]
                if number < at and program >= 0:
                    programs_before += 1
                if at <= number < at + removed:
                    seen_gone += program >= 0
                    continue
                if number in refile:  # its lowest program (-1 for a tool-only row: all its entries)
                    refiled[number] = (e[E_RANK], min(program, refiled.get(number, (0, program))[1]))
                    continue
                rank = ranks.get(e[E_RANK])
                if rank is None:
                    rank = ranks[e[E_RANK]] = rank_of(e[E_RANK])
                if number >= at:
                    e = (number + shift, *e[E_SLUG:E_PROGRAM], program + moved if program >= 0 else program, e[E_LITERALS], rank, e[E_BOUNDED], e[E_CHOICES])
                elif rank != e[E_RANK]:
                    e = (*e[:E_RANK], rank, *e[E_RANK + 1 :])
                out.append(e)
            if out:
                table.setdefault(gram_key, {})[second] = out
    if seen_gone != programs_gone:
        return None
    touched: set[tuple[str, str]] = set()

    def file(items: list[tuple]) -> None:
        for entry, by_run, fallback, _ in items:
            place = compiled_build.file_under(by_run, fallback, rarity)
            table.setdefault(place[0], {}).setdefault(place[1], []).append(entry)
            touched.add(place)

    for number, (rank, program) in refiled.items():
        row = piece(old_lines[first + number].strip())
        if row is None:
            return None
        new_number = number + shift if number >= at else number
        file(compiled_build.row_entries(new_number, row, rank_of(rank), program + moved if number >= at and program >= 0 else program))
    codes: list[bytes] = []
    for i, p in enumerate(new_pieces):
        items = compiled_build.row_entries(at + i, p, new_ranks[i], programs_before + len(codes))
        codes.extend(item[3] for item in items if item[3] is not None)
        file(items)
    for gram_key, second in touched:  # in a build's order: by row, then trigger
        table[gram_key][second].sort(key=lambda e: (e[E_NUMBER], e[E_PROGRAM]))
    group_list, pre_table = compiled_build.number_groups(table)

    recall = _recall_rows(old, at, removed, new_pieces)
    sections: list[tuple[str, list]] = [*compiled_bytes.hashed_sections("pre", pre_table)]  # parts: bytes or views
    sections += compiled_bytes.hashed_sections("recall", recall)
    for name, start, blobs in (("lessons", at, [p[RECORD] for p in new_pieces]), ("programs", programs_before, codes)):
        stop = start + (removed if name == "lessons" else programs_gone)
        sections += _splice_range(name, old.offsets(name), old.section(name + ".data"), start, stop, blobs)
    table_bytes, payload = compiled_bytes.array_parts([marshal.dumps(g, MARSHAL_VERSION) for g in group_list])
    sections += [("groups.table", [table_bytes]), ("groups.data", payload)]
    sections.append(compiled_bytes.grams_section(counts))
    return compiled_bytes.layout(sections, key, old.meta["settings"], compiled_build.gram_lengths(table), count + shift)


def _recall_rows(old: CompiledFile, at: int, removed: int, new_pieces: list) -> dict:
    """The recall table with rows `at` .. `at + removed` taken out, later ones renumbered, and the
    new rows' postings put in."""
    shift = len(new_pieces) - removed
    mapping: dict[str, tuple[int, ...]] = {}
    for bucket_ in old.records("recall"):
        mapping.update(bucket_)
    empty = []
    move = shift.__add__
    for term, postings in mapping.items():
        i = bisect_left(postings, at)
        if i == len(postings):
            continue
        j = bisect_left(postings, at + removed, i)
        tail = postings[j:]
        kept = postings[:i] + (tuple(map(move, tail)) if shift else tail)
        if not kept:
            empty.append(term)
        elif i != j or shift:
            mapping[term] = kept
    for term in empty:
        del mapping[term]
    for i, p in enumerate(new_pieces):
        number = at + i
        for term in p[KEYS].split():
            postings = mapping.get(term, ())
            j = bisect_left(postings, number)
            mapping[term] = postings[:j] + (number,) + postings[j:]
    return mapping


def _splice_range(
    name: str, table: array.array, data: "bytes | memoryview", start: int, stop: int, blobs: list[bytes]
) -> list[tuple[str, list]]:
    """An array's table and data sections with records `start` .. `stop` replaced by `blobs`."""
    new = array.array("I", table[: start + 1])
    position = table[start]
    for blob in blobs:
        position += len(blob)
        new.append(position)
    delta = position - table[stop]
    tail = table[stop + 1 :]
    new.extend(array.array("I", [x + delta for x in tail]) if delta else tail)
    return [(name + ".table", [new.tobytes()]), (name + ".data", [data[: table[start]], *blobs, data[table[stop] :]])]
