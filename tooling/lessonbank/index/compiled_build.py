"""Build the compiled index the hooks read: the rows' pieces in, lookup tables and file bytes out.

Used by `bank index` (through index.compiled_update) and by the hooks when the compiled file is
missing or stale (`rebuild`), so both paths give the same answers. The format's constants live
with the reader (`compiled_read`), which the hooks load on every call; the rows' pieces come from
`compiled_pieces` (which loads `re`'s parser), so this module runs only when something must be
built; `compiled_bytes` lays the tables out as the file's bytes. `stream` gives the bytes of
`serialize_parts(assemble(...))` in bounded memory: what is big (lesson records, programs, the
waiting trigger entries, the groups and the recall buckets) goes to temporary files as it is made
(at 50,000 lessons the file is 70 MB), so what is held is the grams, the recall postings (as
arrays) and the offsets.

Tables:
- `lessons`: one record per INDEX.md row: (slug, priority, confidence, full text, summary, terms),
  the terms (stemmed words of title, when and do, sorted) for the layers' same-meaning check.
- `pre`: candidate key -> {second key: group number}, `groups`: group number -> trigger entries.
  The second key is the rarest literal of another required run of the entries ("" when they have
  none), so a call reads only the groups whose two keys it both holds. An entry is (lesson number, slug, priority,
  confidence, tools, kind, source, program number, literals, rank, bounded, choices) where kind is "c" (command
  regex), "p" (path glob) or "t" (a tool-only trigger); the program (from regex_compiler, or None for
  `re`; from globs) sits in `programs` and is read only for the few entries that get that far.
  `literals` are the folded literal runs every match must contain, so an entry whose literals are
  not all in the call is dropped without running anything, and so is one whose `bounded` literals
  (those with a word boundary at an edge, see compiled_read.bounded) are not, or that holds none
  of the branches of one of its `choices` (alternations every match passes through); `rank` orders lessons best first
  (priority, confidence, slug), so the hook stops once it has what it can hand over. A regex or
  glob that `regex_hazard` or `globs.hazard` flags gets no entry, so the hooks never run it
  (`bank check` names it). Its key is the rarest literal every match must contain (a "gram" of
  one of KEY_LENGTHS, case-folded), so a call only looks at the entries whose gram occurs in its
  command or path; entries without such a literal sit under ALWAYS_COMMAND / ALWAYS_PATH,
  tool-only ones under TOOL + name.
- `recall`: "k:<term>" (keywords and tag values) and "a:<term>" (all meaningful words of the
  title, when and do, plus those) -> lesson numbers, for prompt recall.
- `grams`: gram -> how many triggers hold it (their rarity), sorted; no hook reads it: it lets
  `compiled_rows` file an added row's entries without the other rows' pieces.
"""

import array
import marshal
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
    serialize,
)
from lessonbank.index.compiled_pieces import (
    MARSHAL_VERSION,
    pieces_of,
    rank_key,
    settings_and_problem,
    settings_from_toml,
)
from lessonbank.index.compiled_read import NAME, MemIndex, hashed, read_sources
from lessonbank.state import statedir


def from_texts(
    index_text: str | None, toml_text: str | None, compiled: "dict | None" = None, known: "Mapping | None" = None
) -> dict:
    """The tables for INDEX.md's and bank.toml's texts (IndexFormatError for a broken INDEX.md).

    `known` (an INDEX.md row line -> its `piece`, or the piece marshalled) holds rows worked out before: only the other
    lines are parsed and worked out, so `bank index` after a small change does little work.
    """
    return assemble(list(pieces_of(index_text, compiled, known)), settings_from_toml(toml_text))


def assemble(pieces: list, settings: dict) -> dict:
    """The lookup tables for rows' pieces, in INDEX.md order: numbers, ranks and keys depend on all
    rows. Lesson records and programs stay marshalled (`serialize` writes them as they are)."""
    records: list = []
    programs: list = []
    data = _gather(pieces, settings, records.append, programs.append)
    data["groups"] = list(data["groups"])
    data["recall"] = {k: tuple(v) for k, v in data["recall"].items()}
    data["lessons"], data["programs"] = records, programs
    return data


def _gather(pieces: Iterable[tuple], settings: dict, add_record: Callable[[bytes], None],
            add_program: Callable[[bytes], None], pending: "list | None" = None) -> dict:  # fmt: skip
    """The tables but for the lesson records and programs, which are handed to `add_record` and
    `add_program` in order as the pieces come; `groups` is an iterator of groups, `recall` holds
    arrays. The trigger entries wait marshalled in `pending` (a list, or one kept in a file by
    `stream`), their grams shared (at 50,000 lessons, 70,000 entries as tuples would be
    50 MB; they name fewer than 3,000 grams)."""
    slugs: list[str] = []
    priorities = array.array("q")
    confidences = array.array("d")
    programs = 0
    entries: list = [] if pending is None else pending  # (number, tools, kind, source, program number, literals, marked, choices)
    by_runs: list[tuple | None] = []  # each pending entry's grams by run
    fallbacks: list[str] = []  # and its key when it has no gram
    recall: dict[str, array.array] = {}
    shared: dict = {}  # one object per gram and per tuple of them
    for number, ((slug, priority, confidence), record, tools, triggers, keys) in enumerate(pieces):
        slugs.append(slug)
        priorities.append(priority)
        confidences.append(confidence)
        add_record(record)
        for kind, source, program, literals, by_run, fallback, marked, choices in triggers:
            if kind == "t":
                entries.append(marshal.dumps((number, tools, kind, source, -1, (), (), ())))
                by_runs.append(None)
            else:
                entries.append(marshal.dumps((number, tools, kind, source, programs, literals, marked, choices)))
                runs = tuple(tuple(shared.setdefault(g, g) for g in run) for run in by_run) if by_run else None
                by_runs.append(shared.setdefault(runs, runs) if runs else None)
                add_program(program)
                programs += 1
            fallbacks.append(shared.setdefault(fallback, fallback))
        for term in keys.split():
            found = recall.get(term)
            if found is None:
                found = recall[term] = array.array("I")
            found.append(number)
    del shared
    order = sorted(range(len(slugs)), key=lambda n: rank_key((slugs[n], priorities[n], confidences[n])))
    rank = array.array("I", bytes(4 * len(slugs)))
    for position, number in enumerate(order):
        rank[number] = position
    del order
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
    heads = (slugs, priorities, confidences)
    return {
        "settings": dict(settings),
        "pre": table,
        "groups": _groups(pre, entries, heads, rank),
        "recall": {k: recall[k] for k in sorted(recall)},
        "gram_lengths": lengths,
        "count": len(slugs),
        "grams": dict(sorted(frequency.items())),
    }


def row_entries(number: int, piece: tuple, rank: int, program: int) -> "list[tuple]":
    """The trigger entries of row `number` (its `piece`, its `rank`, its first program's number):
    (entry, grams by run, fallback key, marshalled program or None) each, in the order a build
    files them (`compiled_rows` files a new or moved row's entries with these)."""
    head, _, tools, triggers, _ = piece
    base = (number, *head, tools)
    out = []
    for kind, source, code, literals, by_run, fallback, marked, choices in triggers:
        if kind == "t":
            out.append((base + (kind, source, -1, (), rank, (), ()), None, fallback, None))
        else:
            out.append((base + (kind, source, program, literals, rank, marked, choices), by_run, fallback, code))
            program += 1
    return out


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


def _groups(pre: dict[str, dict[str, array.array]], pending: list, heads: tuple, rank: array.array) -> Iterator[tuple]:
    """The groups in number order, their entries made as each group's turn comes:
    (lesson number, slug, priority, confidence, tools, kind, source, program number, literals,
    rank, bounded literals, choices)."""
    slugs, priorities, confidences = heads
    for key in sorted(pre):
        seconds = pre.pop(key)
        for second in sorted(seconds):
            group = []
            for at in seconds.pop(second):
                number, tools, kind, source, program, literals, marked, choices = marshal.loads(pending[at])
                head = (slugs[number], priorities[number], confidences[number])
                group.append((number, *head, tools, kind, source, program, literals, rank[number], marked, choices))
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
        records, programs, pending = spool(), spool(), spool()
        data = _gather(pieces, settings, records.append, programs.append, pending)  # type: ignore[arg-type]
        sections: list[tuple[str, list]] = list(hashed_sections("pre", data["pre"]))
        recall = spool()
        keys = hashed(list(data["recall"]))
        for blob in hashed_buckets(data["recall"], keys):
            recall.append(blob)
        sections += [("recall.filter", [filter_section(data["recall"], keys)]), ("recall.table", [recall.table()]),
                     ("recall.data", recall.chunks())]  # fmt: skip
        del data["recall"]
        groups = spool()
        for group in data.pop("groups"):
            groups.append(marshal.dumps(group, MARSHAL_VERSION))
        for name, spooled in (("lessons", records), ("programs", programs), ("groups", groups)):
            sections += [(name + ".table", [spooled.table()]), (name + ".data", spooled.chunks())]
        sections.append(grams_section(data["grams"]))
        parts = layout(sections, key(), data["settings"], data["gram_lengths"], data["count"])
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
