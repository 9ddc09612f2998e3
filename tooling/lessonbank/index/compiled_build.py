"""Build the compiled index the hooks read: the rows' pieces in, lookup tables and file bytes out.

Used by `bank index` (through index.compiled_update) and by the hooks when the compiled file is
missing or stale (`rebuild`), so both paths give the same answers. The format's constants live
with the reader (`compiled_read`), which the hooks load on every call; the rows' pieces come from
`compiled_pieces` (which loads `re`'s parser), so this module runs only when something must be
built; `compiled_bytes` lays the tables out as the file's bytes. `stream` gives the bytes of
`serialize_parts(assemble(...))` in bounded memory: what is big (lesson records, the
waiting trigger entries (with their programs), the groups and the recall buckets) goes to temporary files as it is made
(at 50,000 lessons the file is 70 MB), so what is held is the grams, the recall postings (as
arrays) and the offsets.

Tables:
- `lessons`: one record per INDEX.md row: (slug, priority, confidence, full text, summary, terms),
  the terms (stemmed words of title, when and do, sorted) for the layers' same-meaning check, by
  lesson number. A lesson's number comes from its slug (`base_number`), not its row, so a row
  that comes or goes moves no other row's number; one taken already is probed past (the next
  free one, in row order), and `probed` lists those.
- `pre`: candidate key -> {second key: group number}, `groups`: group number -> trigger entries.
  The second key is the rarest literal of another required run of the entries ("" when they have
  none), so a call reads only the groups whose two keys it both holds. An entry is (lesson number, slug, priority,
  confidence, tools, kind, source, program, literals, bounded, choices) where kind is "c" (command
  regex), "p" (path glob) or "t" (a tool-only trigger); the program (from regex_compiler, or None for
  `re`; from globs) stays marshalled and is loaded only for the few entries that get that far; a
  group's entries are in (slug, lesson number) order, each row's in its triggers' order.
  `literals` are the folded literal runs every match must contain, so an entry whose literals are
  not all in the call is dropped without running anything, and so is one whose `bounded` literals
  (those with a word boundary at an edge, see compiled_read.bounded) are not, or that holds none
  of the branches of one of its `choices` (alternations every match passes through); the hook
  ranks lessons best first (priority, confidence, slug) and stops once it has what it can hand over. A regex or
  glob that `regex_hazard` or `globs.hazard` flags gets no entry, so the hooks never run it
  (`bank check` names it). Its key is the rarest literal every match must contain (a "gram" of
  one of KEY_LENGTHS, case-folded), so a call only looks at the entries whose gram occurs in its
  command or path; entries without such a literal sit under ALWAYS_COMMAND / ALWAYS_PATH,
  tool-only ones under TOOL + name.
- `recall`: "k:<term>" (keywords and tag values) and "a:<term>" (all meaningful words of the
  title, when and do, plus those) -> lesson numbers, for prompt recall.
- `grams`: gram -> how many triggers hold it (their rarity), sorted; no hook reads it: it lets
  `compiled_patch` file an added row's entries without the other rows' pieces.
"""

import array
import marshal
import zlib
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping

from lessonbank.index import compiled_read
from lessonbank.index.compiled_bytes import (
    Spool,
    filter_section,
    grams_section,
    hashed_buckets,
    hashed_sections,
    layout,
    lesson_buckets,
    serialize,
)
from lessonbank.index.compiled_pieces import (
    MARSHAL_VERSION,
    pieces_of,
    settings_and_problem,
    settings_from_toml,
)
from lessonbank.index.compiled_read import NAME, MemIndex, hashed, read_sources
from lessonbank.state import statedir

# Lesson numbers are 31 bits (marshal's small ints): a slug's CRC-32, its top bit dropped.
NUMBERS = 0x7FFFFFFF


def from_texts(
    index_text: str | None, toml_text: str | None, compiled: "dict | None" = None, known: "Mapping | None" = None
) -> dict:
    """The tables for INDEX.md's and bank.toml's texts (IndexFormatError for a broken INDEX.md).

    `known` (an INDEX.md row line -> its `piece`, or the piece marshalled) holds rows worked out before: only the other
    lines are parsed and worked out, so `bank index` after a small change does little work.
    """
    return assemble(list(pieces_of(index_text, compiled, known)), settings_from_toml(toml_text))


def assemble(pieces: list, settings: dict) -> dict:
    """The lookup tables for rows' pieces, in INDEX.md order (the order numbers are probed in).
    Lesson records stay marshalled (`serialize` writes them as they are)."""
    records: dict[int, bytes] = {}
    data = _gather(pieces, settings, records.__setitem__)
    data["groups"] = list(data["groups"])
    data["recall"] = {k: tuple(sorted(v)) for k, v in data["recall"].items()}
    data["lessons"] = records
    return data


def base_number(slug: str) -> int:
    """The lesson number a slug gets unless another row's took it first."""
    return zlib.crc32(slug.encode("utf-8")) & NUMBERS


def _gather(pieces: Iterable[tuple], settings: dict, add_record: Callable[[int, bytes], None],
            pending: "list | None" = None) -> dict:  # fmt: skip
    """The tables but for the lesson records, which are handed to `add_record` with their numbers
    as the pieces come; `groups` is an iterator of groups, `recall` holds arrays (unsorted). The
    trigger entries wait marshalled in `pending` (a list, or one kept in a file by `stream`),
    their grams shared (at 50,000 lessons, 70,000 entries as tuples would be 50 MB; they name
    fewer than 3,000 grams)."""
    heads: dict[int, tuple] = {}  # lesson number -> (slug, priority, confidence)
    probed: list[tuple[int, int]] = []
    entries: list = [] if pending is None else pending  # (number, tools, kind, source, program, literals, marked, choices)
    by_runs: list[tuple | None] = []  # each pending entry's grams by run
    fallbacks: list[str] = []  # and its key when it has no gram
    recall: dict[str, array.array] = {}
    shared: dict = {}  # one object per gram and per tuple of them
    for head, record, tools, triggers, keys in pieces:
        slug, _, _ = head
        number = base = base_number(slug)
        while number in heads:
            number = (number + 1) & NUMBERS
        if number != base:
            probed.append((base, number))
        heads[number] = head
        add_record(number, record)
        for kind, source, program, literals, by_run, fallback, marked, choices in triggers:
            entries.append(marshal.dumps((number, tools, kind, source, program, literals, marked, choices)))
            if kind == "t":
                by_runs.append(None)
            else:
                runs = tuple(tuple(shared.setdefault(g, g) for g in run) for run in by_run) if by_run else None
                by_runs.append(shared.setdefault(runs, runs) if runs else None)
            fallbacks.append(shared.setdefault(fallback, fallback))
        for term in keys.split():
            found = recall.get(term)
            if found is None:
                found = recall[term] = array.array("I")
            found.append(number)
    del shared
    frequency: Counter[str] = Counter()
    for by_run in by_runs:
        if by_run:
            frequency.update({g for run in by_run for g in run})
    # A gram's rarity: fewer triggers first, then longer, then by text (a dict, so `min` runs no
    # Python function per gram: this loop is most of `bank index` after a small change).
    rarity = {gram: (count, -len(gram), gram) for gram, count in frequency.items()}.__getitem__

    pre: dict[str, dict[str, array.array]] = {}  # key -> second key -> pending entries, by number
    for at, (by_run, fallback) in enumerate(zip(by_runs, fallbacks, strict=True)):
        key, second = file_under(by_run, fallback, rarity)
        seconds = pre.get(key)
        if seconds is None:
            seconds = pre[key] = {}
        found = seconds.get(second)
        if found is None:
            found = seconds[second] = array.array("I")
        found.append(at)
    del by_runs, fallbacks
    table = group_table(pre)
    lengths = gram_lengths(pre)
    return {
        "settings": dict(settings),
        "pre": table,
        "groups": _groups(pre, entries, heads),
        "recall": {k: recall[k] for k in sorted(recall)},
        "gram_lengths": lengths,
        "count": len(heads),
        "grams": dict(sorted(frequency.items())),
        "probed": tuple(sorted(probed)),
    }


def row_entries(number: int, piece: tuple) -> "list[tuple]":
    """The trigger entries of lesson `number` (its row's `piece`): (entry, grams by run, fallback
    key) each, in its triggers' order (`compiled_patch` files a new or moved row's entries with these)."""
    head, _, tools, triggers, _ = piece
    base = (number, *head, tools)
    out = []
    for kind, source, code, literals, by_run, fallback, marked, choices in triggers:
        out.append((base + (kind, source, code, literals, marked, choices), None if kind == "t" else by_run, fallback))
    return out


def group_order(entry: tuple) -> tuple:
    """Where an entry sits in its group: by slug, then lesson number (a stable sort keeps a row's
    entries in its triggers' order)."""
    return entry[compiled_read.E_SLUG], entry[compiled_read.E_NUMBER]


def file_under(by_run: "Iterable[Iterable[str]] | None", fallback: str, rarity: "Callable[[str], tuple]") -> "tuple[str, str]":
    """(key, second key) an entry is filed under: its rarest gram, and the rarest of the runs that
    do not hold that one ("" when none); the fallback key and "" for an entry without grams."""
    if not by_run:
        return fallback, ""
    key = min((g for run in by_run for g in run), key=rarity)
    others = [g for run in by_run if key not in run for g in run]
    return key, (min(others, key=rarity) if others else "")


def group_table(pre: dict) -> "dict[str, dict[str, int]]":
    """The key table: key -> second key -> group number, groups numbered in sorted key order."""
    table: dict[str, dict[str, int]] = {}
    count = 0
    for key in sorted(pre):
        table[key] = {}
        for second in sorted(pre[key]):
            table[key][second] = count
            count += 1
    return table


def number_groups(pre: "dict[str, dict[str, list[tuple]]]") -> "tuple[list[tuple], dict[str, dict[str, int]]]":
    """The groups of entries in `pre` (key -> second key -> entries), in number order, and the key table."""
    table = group_table(pre)
    return [tuple(pre[key][second]) for key in table for second in table[key]], table


def gram_lengths(pre: dict) -> "tuple[int, ...]":
    """The lengths of the keys and second keys in use, longest first (what a call looks up)."""
    lengths = {len(k) for k in pre if not k.startswith("\x00")} | {len(g) for k in pre for g in pre[k] if g}
    return tuple(sorted(lengths, reverse=True))


def _groups(pre: dict[str, dict[str, array.array]], pending: list, heads: dict[int, tuple]) -> Iterator[tuple]:
    """The groups in number order, their entries made as each group's turn comes:
    (lesson number, slug, priority, confidence, tools, kind, source, program, literals, bounded
    literals, choices)."""
    for key in sorted(pre):
        seconds = pre.pop(key)
        for second in sorted(seconds):
            group = []
            for at in seconds.pop(second):
                number, tools, kind, source, program, literals, marked, choices = marshal.loads(pending[at])
                group.append((number, *heads[number], tools, kind, source, program, literals, marked, choices))
            group.sort(key=group_order)
            yield tuple(group)


def stream(pieces: Iterable[tuple], settings: dict, key: Callable[[], tuple]) -> Iterator[bytes]:
    """`serialize_parts(assemble(pieces, settings), key())`'s bytes, in parts, with the pieces
    taken one at a time; `key` is asked once every piece was taken (the sources' key after
    reading them). The temporary files go when the parts are done."""
    spools: list[Spool] = []

    def spool() -> Spool:
        spools.append(Spool())
        return spools[-1]

    try:
        records, pending = spool(), spool()
        numbers = array.array("I")  # each record's lesson number, in the records' order

        def add_record(number: int, record: bytes) -> None:
            numbers.append(number)
            records.append(record)

        data = _gather(pieces, settings, add_record, pending)  # type: ignore[arg-type]
        sections: list[tuple[str, list]] = list(hashed_sections("pre", data["pre"]))
        recall = spool()
        keys = hashed(list(data["recall"]))
        postings = data["recall"]
        for term in postings:  # by number, kept as arrays (hashed_buckets makes each a tuple in its turn)
            postings[term] = array.array("I", sorted(postings[term]))
        for blob in hashed_buckets(postings, keys):
            recall.append(blob)
        sections += [("recall.filter", [filter_section(data["recall"], keys)]), ("recall.table", [recall.table()]),
                     ("recall.data", recall.chunks())]  # fmt: skip
        del data["recall"]
        groups = spool()
        for group in data.pop("groups"):
            groups.append(marshal.dumps(group, MARSHAL_VERSION))
        buckets = spool()
        for blob in lesson_buckets(_Spooled(records, numbers)):
            buckets.append(blob)
        for name, spooled in (("lessons", buckets), ("groups", groups)):
            sections += [(name + ".table", [spooled.table()]), (name + ".data", spooled.chunks())]
        sections.append(grams_section(data["grams"]))
        parts = layout(sections, key(), data["settings"], data["gram_lengths"], data["count"], data["probed"], len(keys))
    except BaseException:
        for each in spools:
            each.close()
        raise
    return _read_out(parts, spools)


class _Spooled(Mapping[int, bytes]):
    """Lesson number -> record, the records read back from the spool they were kept in (for
    compiled_bytes.lesson_buckets, which reads each once)."""

    def __init__(self, records: Spool, numbers: array.array) -> None:
        self.places = {n: at for at, n in enumerate(numbers)}
        self.records = records

    def __getitem__(self, number: int) -> bytes:
        return self.records[self.places[number]]

    def __iter__(self) -> Iterator[int]:
        return iter(self.places)

    def __len__(self) -> int:
        return len(self.places)


def _read_out(parts: list, spools: list[Spool]) -> Iterator[bytes]:
    try:
        for part in parts:
            yield part if type(part) is bytes else part.bytes()
    finally:
        for each in spools:
            each.close()


def rebuild(root: str, state_dir: str, write: bool = True) -> MemIndex:
    """Build the tables from INDEX.md (and bank.toml) and, when asked, rewrite the compiled file."""
    index_text, toml_text, key = read_sources(root)
    settings, problem = settings_and_problem(toml_text)
    data = assemble(list(pieces_of(index_text)), settings)
    if problem:  # once per change of bank.toml: the rebuilt file is current until the next one
        statedir.log_line(state_dir, "config", problem)
    if write and key is not None:
        try:
            statedir.write_atomic(state_dir + "/" + NAME, serialize(data, key))
        except OSError:
            return MemIndex(data)  # a read-only state folder only costs speed
    return MemIndex(data)


def load(root: str, state_dir: str) -> "compiled_read.DiskIndex | MemIndex":
    """The bank's index: the compiled file when it is current, else rebuilt from INDEX.md."""
    return compiled_read.current(root, state_dir) or rebuild(root, state_dir)
