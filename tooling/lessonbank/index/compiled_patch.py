"""The compiled index patched for one run of INDEX.md rows removed and rows put in their place.

A captured lesson, a deleted one, a reworded one, a changed priority or trigger: as a lesson's
number comes from its slug (compiled_build.base_number), no other row's number moves, so only
the buckets and groups the changed rows are in are worked out again; every other one is copied
as it is. The new rows' entries are filed by the file's `grams` section (how many triggers hold
each gram), and the rows whose key could move with those counts are filed again from their
pieces: those filed under a gram that grew commoner, and those holding one that grew rarer
(which rows hold a gram is not in the file: every gram of a trigger is inside one of its
literals, so the rows with a literal containing it are filed again, a few more than need be).
The sections are laid out by `compiled_bytes.layout`, so the bytes are those of a build from
the new INDEX.md; a change it cannot make (a number a build would give otherwise: one probed
past a taken one) gives None, and the caller builds.
"""

import array
import marshal
from bisect import bisect_left
from collections import Counter
from collections.abc import Callable

from lessonbank.index import compiled_build, compiled_bytes, index_md
from lessonbank.index.compiled_pieces import GRAMS, HEAD, KEYS, MARSHAL_VERSION, RECORD, TRIGGERS
from lessonbank.index.compiled_read import (
    E_LITERALS,
    E_NUMBER,
    E_SLUG,
    L_SLUG,
    bucket,
    hashed,
)

# More changed rows than this and a build is used (a patch is for small edits).
MOST_ROWS = 50
# More rows than this filed again and a build is used.
MOST_REFILED = 1000
# A larger file is not patched: a patch holds the old file whole (14 MB at 10,000 lessons), and
# the streamed build keeps `bank index` of 50,000 lessons (47 MB) under 200 MiB.
MOST_BYTES = 24 << 20
Place = tuple  # (key, second key) an entry is filed under


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


def patch(
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
        old = compiled_bytes.CompiledFile(old_file, settings)
        count = old.meta["count"]
        if first + count > len(old_lines) or (first + count < len(old_lines) and old_lines[first + count].startswith("|")):
            return None  # not the rows it was built from
        return _patched(old, gone, added, piece, key, new_lines[first:])
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


def _patched(
    old: compiled_bytes.CompiledFile, gone: list[str], added: list[str], piece: "Callable[[str], tuple | None]", key: tuple,
    rows: list[str],
) -> "list[bytes] | None":  # fmt: skip
    """`patch` once the run is found: the `gone` rows' lessons taken out, the `added` ones put in."""
    found = [piece(line.strip()) for line in gone + added]
    pieces = [p for p in found if p is not None]
    if len(pieces) != len(found):
        return None
    gone_pieces, new_pieces = pieces[: len(gone)], pieces[len(gone) :]
    lessons = compiled_bytes.Buckets(old, "lessons")
    numbers = _numbers(lessons, old.meta["probed"], gone_pieces, new_pieces)
    if numbers is None:
        return None
    gone_numbers, new_numbers = numbers
    count = old.meta["count"] - len(gone_pieces) + len(new_pieces)

    # Lesson records: the changed rows' buckets (all of them when the table changes size).
    if compiled_bytes.table_size(count) != lessons.size:
        records = lessons.every()
        for n in gone_numbers:
            del records[n]
        records.update(zip(new_numbers, (p[RECORD] for p in new_pieces), strict=True))
        table, payload = compiled_bytes.array_parts(list(compiled_bytes.lesson_buckets(records)))
        lesson_sections = [("lessons.table", [table]), ("lessons.data", payload)]
    else:
        for n in gone_numbers:
            del lessons[n % lessons.size][n]
            lessons.changed.add(n % lessons.size)
        for n, p in zip(new_numbers, new_pieces, strict=True):
            lessons[n % lessons.size][n] = p[RECORD]
            lessons.changed.add(n % lessons.size)
        lesson_sections = lessons.sections()

    groups = _regroup(old, gone_pieces, gone_numbers, new_pieces, new_numbers, piece, rows)
    if groups is None:
        return None
    pre_table, group_sections, counts, lengths = groups
    sections: list[tuple[str, list]] = [*compiled_bytes.hashed_sections("pre", pre_table)]  # parts: bytes or views
    recall_sections, recall_keys = _recall(old, gone_pieces, gone_numbers, new_pieces, new_numbers)
    sections += recall_sections
    sections += lesson_sections
    sections += group_sections
    sections.append(compiled_bytes.grams_section(counts))
    return compiled_bytes.layout(sections, key, old.meta["settings"], lengths, count, old.meta["probed"], recall_keys)


def _numbers(lessons: compiled_bytes.Buckets, probed: tuple, gone: list, new: list) -> "tuple[list[int], list[int]] | None":
    """The lesson numbers of the gone rows (as the file has them) and of the new ones (as a build
    gives them); None when a build would number any row otherwise: a new row's number taken by
    a row that stays, or a gone row's number one a probed lesson went past."""
    gone_numbers: list[int] = []
    for p in gone:
        slug, _, _ = p[HEAD]
        n = compiled_build.base_number(slug)
        while True:  # past the lessons probed past: the one of this slug (and not taken out already)
            record = lessons[n % lessons.size].get(n)
            if record is None:
                return None
            if n not in gone_numbers and marshal.loads(record)[L_SLUG] == slug:
                break
            n = (n + 1) & compiled_build.NUMBERS
        gone_numbers.append(n)
    for base, number in probed:
        if any((base <= n <= number) if base <= number else (n >= base or n <= number) for n in gone_numbers):
            return None
    new_numbers: list[int] = []
    for p in new:
        slug, _, _ = p[HEAD]
        n = compiled_build.base_number(slug)
        if n in new_numbers or (n not in gone_numbers and n in lessons[n % lessons.size]):
            return None
        new_numbers.append(n)
    return gone_numbers, new_numbers


def _recall(
    old: compiled_bytes.CompiledFile, gone: list, gone_numbers: list[int], new: list, new_numbers: list[int]
) -> tuple[list[tuple[str, list]], int]:
    """The recall table's sections with the gone rows' postings taken out and the new rows' put
    in, and its count of keys: only their buckets are written again (and the filter's bits of a
    new key set), unless a key went (the filter is worked out again) or the table changes size."""
    recall = compiled_bytes.Buckets(old, "recall")
    count = old.meta["recall_keys"]
    touched: dict[str, int] = {}  # term -> its bucket
    fresh: list[str] = []  # terms no row held before
    for number, p in zip(gone_numbers, gone, strict=True):
        for term in p[KEYS].split():
            at = touched[term] = bucket(term, recall.size)
            found = recall[at]
            found[term] = tuple(x for x in found[term] if x != number)
    for number, p in zip(new_numbers, new, strict=True):
        for term in p[KEYS].split():
            at = touched[term] = bucket(term, recall.size)
            found = recall[at]
            postings = found.get(term)
            if postings is None:
                fresh.append(term)
                postings = ()
            j = bisect_left(postings, number)
            found[term] = postings[:j] + (number,) + postings[j:]
    went = False
    for term, at in touched.items():
        recall.changed.add(at)
        if not recall[at][term]:  # no row holds it now
            del recall[at][term]
            went = True
    count += len(fresh) - sum(1 for term, at in touched.items() if term not in recall[at])
    if went or compiled_bytes.table_size(count) != recall.size:
        return compiled_bytes.hashed_sections("recall", recall.every()), count
    bits = bytearray(old.section("recall.filter"))
    size = len(bits) * 8
    for _, _, x in hashed(fresh):  # a key more sets its bits (compiled_bytes.filter_section)
        for bit in (x % size, (x >> 21) % size, (x >> 42) % size):
            bits[bit >> 3] |= 1 << (bit & 7)
    return [("recall.filter", [bytes(bits)]), *recall.sections()], count


def _regroup(
    old: compiled_bytes.CompiledFile, gone: list, gone_numbers: list[int], new: list, new_numbers: list[int],
    piece: "Callable[[str], tuple | None]", rows: list[str],
) -> "tuple[dict, list, dict, tuple] | None":  # fmt: skip
    """(key table, the groups' sections, gram counts, gram lengths) with the gone rows' entries
    taken out and the new rows' filed, and the rows whose key may move with the new counts filed
    again; the groups no entry came to or left are copied as they are. None when a row's entries
    are not where a build files them (not the file it should be) or too many rows move."""
    pre: dict[str, dict[str, int]] = {}
    for found in old.records("pre"):
        pre.update(found)
    table, data = old.offsets("groups"), old.section("groups.data")
    loaded: dict[int, list] = {}

    def group(gid: int) -> list:
        if gid not in loaded:
            loaded[gid] = list(marshal.loads(data[table[gid] : table[gid + 1]]))
        return loaded[gid]

    # Gram counts: a gram a removed trigger held that a row left as it was also holds could now
    # key that row; one that grew commoner could stop keying the rows filed under it.
    before: dict[str, int] = marshal.loads(old.section("grams"))
    counts = dict(before)
    delta: Counter[str] = Counter()
    held: Counter[str] = Counter()  # by the new rows' triggers
    for sign, side in ((-1, gone), (1, new)):
        for p in side:
            for trigger in p[TRIGGERS]:
                if trigger[GRAMS]:
                    grams = {g for run in trigger[GRAMS] for g in run}
                    delta.update(dict.fromkeys(grams, sign))
                    if sign > 0:
                        held.update(grams)
    grew, shrank = set(), set()
    for gram, change in delta.items():
        total = counts.get(gram, 0) + change
        if change < 0 and total > held[gram]:  # rows left as they were hold it
            shrank.add(gram)
        if change > 0:
            grew.add(gram)
        if total:
            counts[gram] = total
        elif gram in counts:
            del counts[gram]
    counts = dict(sorted(counts.items()))  # as a build writes them

    def rarity(gram: str) -> tuple:  # as a build ranks grams (compiled_build._gather)
        return (counts[gram], -len(gram), gram)

    def rarity_before(gram: str) -> tuple:
        return (before[gram], -len(gram), gram)

    leaving = set(gone_numbers)
    refile: dict[int, str] = {}  # lesson number -> slug, of the rows left as they were that are filed again
    for gram_key, seconds in pre.items():
        for second, gid in seconds.items():
            if gram_key in grew or second in grew:
                refile.update((e[E_NUMBER], e[E_SLUG]) for e in group(gid) if e[E_NUMBER] not in leaving)
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
                held_here = "\x00".join(lit for e in group(gid) for lit in e[E_LITERALS])
                rarer = [gram for gram in rarer if gram in held_here]
            for e in group(gid) if rarer else ():
                if e[E_NUMBER] not in leaving and e[E_NUMBER] not in refile:
                    literals = "\x00".join(e[E_LITERALS])
                    if any(gram in literals for gram in rarer):
                        refile[e[E_NUMBER]] = e[E_SLUG]
    if len(refile) > MOST_REFILED:
        return None
    moved = _pieces_of(refile, piece, rows)
    if moved is None:
        return None

    # Out: every entry of the gone and moved rows, from where the old counts filed it.
    touched: set[int] = set()
    for number, p in [*zip(gone_numbers, gone, strict=True), *moved]:
        for _, by_run, fallback in compiled_build.row_entries(number, p):
            gram_key, second = compiled_build.file_under(by_run, fallback, rarity_before)
            gid = pre[gram_key][second]
            entries = group(gid)
            kept = [e for e in entries if e[E_NUMBER] != number]
            if len(kept) == len(entries) and gid not in touched:
                return None
            loaded[gid] = kept
            touched.add(gid)
    # In: the moved and new rows' entries, where the new counts file them.
    added: dict[Place, list[tuple]] = {}
    for number, p in [*moved, *zip(new_numbers, new, strict=True)]:
        for entry, by_run, fallback in compiled_build.row_entries(number, p):
            added.setdefault(compiled_build.file_under(by_run, fallback, rarity), []).append(entry)
    places = {(k, s): gid for k, seconds in pre.items() for s, gid in seconds.items()}
    offsets = array.array("I", [0])
    parts: list = []
    view_end = -1  # the end, in the old data, of the last part when it is a view (a run of groups as they were)
    key_table: dict[str, dict[str, int]] = {}
    for place in sorted(places.keys() | added.keys()):
        at = places.get(place)
        if at is not None and at not in touched and place not in added:  # nothing came or went: as it was
            if view_end == table[at]:
                parts[-1] = data[table[at] - len(parts[-1]) : table[at + 1]]
            else:
                parts.append(data[table[at] : table[at + 1]])
            view_end = table[at + 1]
            size = table[at + 1] - table[at]
        else:
            entries = (group(at) if at is not None else []) + added.get(place, [])
            if not entries:
                continue
            entries.sort(key=compiled_build.group_order)
            parts.append(marshal.dumps(tuple(entries), MARSHAL_VERSION))
            view_end, size = -1, len(parts[-1])
        gram_key, second = place
        key_table.setdefault(gram_key, {})[second] = len(offsets) - 1
        offsets.append(offsets[-1] + size)
    sections = [("groups.table", [offsets.tobytes()]), ("groups.data", parts)]
    return key_table, sections, counts, compiled_build.gram_lengths(key_table)


def _pieces_of(rows_wanted: dict[int, str], piece: "Callable[[str], tuple | None]", rows: list[str]) -> "list[tuple[int, tuple]] | None":
    """(lesson number, piece) of the rows of these numbers (and slugs), from their lines among
    `rows`; None when one is missing or its slug is on two rows (which is which is the build's to say)."""
    if not rows_wanted:
        return []
    wanted = set(rows_wanted.values())
    lines: dict[str, str] = {}
    for line in rows:
        if not line.startswith("|"):
            break
        slug = line[line.index("[") + 1 : line.index("](")]
        if slug in wanted:
            if slug in lines:
                return None
            lines[slug] = line
    out = []
    for number, slug in sorted(rows_wanted.items()):
        p = piece(lines[slug].strip()) if slug in lines else None
        if p is None:
            return None
        out.append((number, p))
    return out
