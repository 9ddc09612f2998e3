"""Build the compiled index the hooks read: INDEX.md rows in, lookup tables and file bytes out.

Used by `bank index` (through lessonbank.bank.render) and by the hooks when the compiled file is
missing or stale (`rebuild`), so both paths give the same answers. The format's constants live
with the reader (`compiled_read`), which the hooks load on every call; this module loads `re`'s
parser (through regex_compiler) and so runs only when something must be built.

Tables:
- `lessons`: one record per INDEX.md row: (slug, priority, confidence, full text, summary, terms),
  the terms (stemmed words of title, when and do, sorted) for the layers' same-meaning check.
- `pre`: candidate key -> {second key: group number}, `groups`: group number -> trigger entries.
  The second key is the rarest literal of another required run of the entries ("" when they have
  none), so a call reads only the groups whose two keys it both holds. An entry is (lesson number, slug, priority,
  confidence, tools, kind, source, program number, literals, rank, bounded, choices) where kind is "c" (command
  regex), "p" (path glob) or "t" (a tool-only trigger); the program (from rxbuild, or None for
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

# Longer than 400 lines: it is the one writer of the compiled format (pieces, the gather that
# numbers, ranks and files entries, the sections' bytes) and the rules compiled_rows and
# compiled_stream reuse to give the same bytes; split, a rule of the format would sit in two places.

import array
import marshal
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping

from lessonbank.index import compiled_read
from lessonbank.index.compiled_read import (
    ALWAYS_COMMAND,
    ALWAYS_PATH,
    BOUND,
    FILTER_BITS,
    FORMAT,
    KEY_LENGTHS,
    MAGIC,
    NAME,
    TOOL,
    MemIndex,
    bucket,
    filter_bits,
    fold,
    read_sources,
)
from lessonbank.index.index_md import IndexRow
from lessonbank.matching import globs, regex_hazard, words
from lessonbank.matching import regex_compiler as rxbuild
from lessonbank.state import statedir as state

# marshal from version 3 on marks strings interned and objects shared by their refcount, which
# depends on what else the process holds: the same tables could give different bytes, and
# `bank index` would rewrite an unchanged file. Version 2 writes values only.
MARSHAL_VERSION = 2


def settings_from_toml(text: str | None) -> dict:
    """The [recall] settings from bank.toml's text, through the one config parser (defaults if broken)."""
    return _settings_and_problem(text)[0]


def _settings_and_problem(text: str | None) -> "tuple[dict, str | None]":
    from lessonbank.config import DEFAULTS, lenient

    # A broken bank.toml must not switch the hooks off: `rebuild` logs it, `bank check` reports it.
    config, problem = lenient(text)
    return {key: config.get("recall." + key) for key in DEFAULTS["recall"]}, problem


def from_texts(
    index_text: str | None, toml_text: str | None, compiled: "dict | None" = None, known: "Mapping | None" = None
) -> dict:
    """The tables for INDEX.md's and bank.toml's texts (IndexFormatError for a broken INDEX.md).

    `known` (an INDEX.md row line -> its `piece`, or the piece marshalled) holds rows worked out before: only the other
    lines are parsed and worked out, so `bank index` after a small change does little work.
    """
    return assemble(list(pieces_of(index_text, compiled, known)), settings_from_toml(toml_text))


def pieces_of(index_text: "str | Iterable[str] | None", compiled: "dict | None" = None, known: "Mapping | None" = None) -> Iterator[tuple]:
    """The piece of each row of INDEX.md (given as its text in one string, or as its lines as
    str.splitlines gives them), one at a time; `compiled` and `known` as for `from_texts`."""
    from lessonbank.index import index_md

    if index_text is None:
        return
    cache = {} if compiled is None else compiled
    for number, line in index_md.table_lines(index_text):
        found = known.get(line) if known is not None else None
        if type(found) is bytes:
            found = marshal.loads(found)
        yield found if found is not None else piece(index_md.parse_row(line, number), cache)


def command_trigger(pattern: str) -> "tuple | None":
    """(program, runs, bounded literals, choices) of a command regex, or None for one that never
    fires (invalid, or hazardous). The slow part of a build: `bank index` keeps the answers."""
    try:
        program, runs = rxbuild.compile_pattern(pattern)
    except Exception:  # an invalid regex never fires; `bank check` names it
        return None
    if regex_hazard.hazard(pattern):  # nor does one that can backtrack for ever
        return None
    marked = tuple(sorted({run.translate(BOUND) for run in rxbuild.bounded_runs(pattern) if "\x01" in run}))
    choices = tuple(tuple(sorted({fold(x) for x in group})) for group in rxbuild.alternatives(pattern))
    return program, tuple(runs), marked, choices


def rank_key(head: tuple) -> tuple:
    """How rows are ranked, from a piece's head (slug, priority, confidence): priority, then
    confidence (both highest first), then slug."""
    return (-head[1], -head[2], head[0])


def piece(r: IndexRow, compiled: dict) -> tuple:
    """What one row contributes, whatever the other rows are: ((slug, priority, confidence), the
    marshalled lesson record, tools, triggers, recall keys), the keys space-separated;
    a trigger is (kind, source, marshalled program or None, literals, grams by run, fallback key,
    bounded literals, choices). `bank index` keeps these by row line: records and programs stay
    marshalled and terms joined because that is what reads back fastest."""
    tools = tuple(r.tools)
    triggers: list[tuple] = []
    for pattern in r.commands:
        if pattern not in compiled:
            compiled[pattern] = command_trigger(pattern)
        trigger = compiled[pattern]
        if trigger is None:
            continue
        program, runs, marked, choices = trigger
        code = marshal.dumps(program, MARSHAL_VERSION)
        triggers.append(("c", pattern, code, _literals(runs), _grams(runs), ALWAYS_COMMAND, marked, choices))
    for glob in r.paths:
        if globs.hazard(glob):
            continue
        name_only, alternatives = globs.compile_glob(glob)
        for tokens in alternatives:
            runs = globs.literals(tokens)
            code = marshal.dumps((name_only, (tokens,)), MARSHAL_VERSION)
            triggers.append(("p", glob, code, _literals(runs), _grams(runs), ALWAYS_PATH, (), ()))
    if tools and not (r.commands or r.paths or r.keywords):
        for tool in tools:
            triggers.append(("t", tool, None, (), None, TOOL + tool, (), ()))
    key_terms = words.terms(" ".join(r.keywords)) | words.terms(" ".join(tag.partition(":")[2] or tag for tag in r.tags))
    all_terms = key_terms | words.terms(f"{r.title} {r.when} {r.do}")
    head = (r.slug, int(r.priority), float(r.confidence))
    # The terms go in the record so the hooks weigh two layers' lessons without stemming them.
    record = marshal.dumps(head + (r.full, r.summary, tuple(sorted(all_terms))), MARSHAL_VERSION)
    # The terms come as the recall table's keys ("k:" / "a:" and the term): `assemble` runs one
    # statement per posting, a quarter million at 10,000 lessons.
    keys = " ".join(["k:" + t for t in sorted(key_terms)] + ["a:" + t for t in sorted(all_terms)])
    return head, record, tools, tuple(triggers), keys


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
    compiled_stream), their grams shared (at 50,000 lessons, 70,000 entries as tuples would be
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


def _grams(runs: list[str]) -> list[list[str]] | None:
    """Candidate keys of a trigger, by literal run: of each folded run of 2 characters or more,
    its substrings of the longest of KEY_LENGTHS it reaches; None when it has no such run (the
    trigger is then checked on every call)."""
    out = []
    for run in runs:
        folded = fold(run)
        size = next((n for n in KEY_LENGTHS if len(folded) >= n), 0)
        if size:
            out.append(sorted({folded[i : i + size] for i in range(len(folded) - size + 1)}))
    return out or None


def _literals(runs: list[str]) -> tuple[str, ...]:
    """The folded runs of 2 characters or more a call must all contain, none inside another."""
    folded = sorted({fold(run) for run in runs if len(run) >= 2}, key=lambda r: (-len(r), r))
    kept: list[str] = []
    for run in folded:
        if not any(run in longer for longer in kept):
            kept.append(run)
    return tuple(kept)


def serialize(data: dict, key: tuple) -> bytes:
    """The compiled file: header, meta, then hashed buckets of marshalled dicts and a lesson array."""
    return b"".join(serialize_parts(data, key))


def serialize_parts(data: dict, key: tuple) -> list[bytes]:
    """`serialize`'s bytes as a list of parts, never joined (a 50,000-lesson file is 47 MB)."""
    sections: list[tuple[str, list[bytes]]] = []
    for name in ("pre", "recall"):
        sections.extend(hashed_sections(name, data[name]))
    for name in ("lessons", "programs", "groups"):
        records = data[name]
        table, payload = array_parts([r if type(r) is bytes else marshal.dumps(r, MARSHAL_VERSION) for r in records])
        sections += [(name + ".table", [table]), (name + ".data", payload)]
    sections.append(grams_section(data["grams"]))
    return layout(sections, key, data["settings"], data["gram_lengths"], len(data["lessons"]))


def grams_section(grams: dict) -> "tuple[str, list[bytes]]":
    """The last section: gram -> how many triggers hold it, read only by `compiled_rows`."""
    return ("grams", [marshal.dumps(grams, MARSHAL_VERSION)])


def hashed_sections(name: str, mapping: dict) -> list[tuple[str, list[bytes]]]:
    """The filter, table and data sections of a hashed table (`pre` or `recall`)."""
    table, payload = _hashed(mapping)
    return [(name + ".filter", [filter_section(mapping)]), (name + ".table", [table]), (name + ".data", payload)]


def layout(sections: list[tuple[str, list[bytes]]], key: tuple, settings: dict, gram_lengths: tuple, count: int) -> list[bytes]:
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
    }
    return [serialize_meta(meta), *blobs]


def serialize_meta(meta: dict) -> bytes:
    """The file's head: MAGIC, the format, the meta's size, the meta (`bank index` rewrites only
    this when nothing but the staleness key changes)."""
    blob = marshal.dumps(meta, MARSHAL_VERSION)
    return MAGIC + FORMAT.to_bytes(4, "little") + len(blob).to_bytes(4, "little") + blob


def _hashed(mapping: dict) -> tuple[bytes, list[bytes]]:
    return array_parts(list(hashed_buckets(mapping)))


def hashed_buckets(mapping: dict) -> Iterator[bytes]:
    """A hashed table's buckets in order, each marshalled as soon as it is filled (an array value
    as the tuple it stands for), so no second copy of the mapping is made."""
    size = _prime_at_least(max(7, len(mapping)))
    placed = sorted((bucket(key, size), key) for key in mapping)
    start = 0
    for number in range(size):
        found = {}
        while start < len(placed) and placed[start][0] == number:
            key = placed[start][1]
            value = mapping[key]
            found[key] = tuple(value) if type(value) is array.array else value
            start += 1
        yield marshal.dumps(found, MARSHAL_VERSION) if found else b""


def filter_section(mapping: dict) -> bytes:
    """A bit filter of the keys: three bits each, FILTER_BITS bits per key (a lookup of a key
    not in it reads no bucket, but for about one in a hundred)."""
    bits = bytearray(max(64, len(mapping) * FILTER_BITS // 8))
    size = len(bits) * 8
    for key in mapping:
        for bit in filter_bits(key, size):
            bits[bit >> 3] |= 1 << (bit & 7)
    return bytes(bits)


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


def rebuild(root: str, state_dir: str, write: bool = True) -> MemIndex:
    """Build the tables from INDEX.md (and bank.toml) and, when asked, rewrite the compiled file."""
    index_text, toml_text, key = read_sources(root)
    settings, problem = _settings_and_problem(toml_text)
    data = assemble(list(pieces_of(index_text)), settings)
    if problem:  # once per change of bank.toml: the rebuilt file is current until the next one
        state.log_line(state_dir, "config", problem)
    if write and key is not None:
        try:
            state.write_atomic(state_dir + "/" + NAME, serialize(data, key))
        except OSError:
            return MemIndex(data)  # a read-only state folder only costs speed
    return MemIndex(data)


def load(root: str, state_dir: str) -> "compiled_read.DiskIndex | MemIndex":
    """The bank's index: the compiled file when it is current, else rebuilt from INDEX.md."""
    return compiled_read.current(root, state_dir) or rebuild(root, state_dir)
