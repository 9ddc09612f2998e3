"""Build the compiled index the hooks read: INDEX.md rows in, lookup tables and file bytes out.

Used by `bank index` (through lessonbank.bank.render) and by the hooks when the compiled file is
missing or stale (`rebuild`), so both paths give the same answers. The format's constants live
with the reader (`compiled_read`), which the hooks load on every call; this module loads `re`'s
parser (through regex_compiler) and so runs only when something must be built.

Tables:
- `lessons`: one record per INDEX.md row: (slug, priority, confidence, full text, summary).
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
"""

import array
import marshal
import sys

from lessonbank.kernel import compiled_read, globs, regex_hazard, words
from lessonbank.kernel import regex_compiler as rxbuild
from lessonbank.kernel import statedir as state
from lessonbank.kernel.compiled_read import (
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

# marshal from version 3 on marks strings interned and objects shared by their refcount, which
# depends on what else the process holds: the same tables could give different bytes, and
# `bank index` would rewrite an unchanged file. Version 2 writes values only.
MARSHAL_VERSION = 2


def settings_from_toml(text: str | None) -> dict:
    """The [recall] settings from bank.toml's text, through the one config parser (defaults if broken)."""
    from lessonbank import config as config_mod

    # A broken bank.toml must not switch the hooks off: `rebuild` logs it, `bank check` reports it.
    config, _ = config_mod.lenient(text)
    return {key: config.get("recall." + key) for key in config_mod.DEFAULTS["recall"]}


def from_texts(index_text: str | None, toml_text: str | None, compiled: "dict | None" = None) -> dict:
    """The tables for INDEX.md's and bank.toml's texts (IndexFormatError for a broken INDEX.md)."""
    from lessonbank.kernel import index_md as index_mod

    rows = index_mod.parse(index_text) if index_text is not None else []
    return tables(rows, settings_from_toml(toml_text), compiled)


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


def tables(rows: list, settings: dict, compiled: "dict | None" = None) -> dict:
    """The lookup tables for INDEX.md rows (objects with IndexRow's attributes).

    `compiled` (pattern -> `command_trigger`'s answer) holds regexes compiled before: those are
    not compiled again, and the new ones are added to it (a cache kept by `bank index`).
    """
    known = {} if compiled is None else compiled
    lessons = []
    programs: list = []
    pending: list[tuple[tuple, list[list[str]] | None, str]] = []  # (entry, grams by run, fallback key)
    recall: dict[str, list[int]] = {}
    order = sorted(range(len(rows)), key=lambda n: (-int(rows[n].priority), -float(rows[n].confidence), rows[n].slug))
    rank = [0] * len(rows)
    for position, number in enumerate(order):
        rank[number] = position
    for number, row in enumerate(rows):
        lessons.append((row.slug, int(row.priority), float(row.confidence), row.full, row.summary))
        tools = tuple(row.tools)
        base = (number, row.slug, int(row.priority), float(row.confidence), tools)
        for pattern in row.commands:
            if pattern not in known:
                known[pattern] = command_trigger(pattern)
            trigger = known[pattern]
            if trigger is None:
                continue
            program, runs, marked, choices = trigger
            entry = base + ("c", pattern, len(programs), _literals(runs), rank[number], marked, choices)
            programs.append(program)
            pending.append((entry, _grams(runs), ALWAYS_COMMAND))
        for glob in row.paths:
            if globs.hazard(glob):
                continue
            name_only, alternatives = globs.compile_glob(glob)
            for tokens in alternatives:
                runs = globs.literals(tokens)
                entry = base + ("p", glob, len(programs), _literals(runs), rank[number], (), ())
                programs.append((name_only, (tokens,)))
                pending.append((entry, _grams(runs), ALWAYS_PATH))
        if tools and not (row.commands or row.paths or row.keywords):
            for tool in tools:
                pending.append((base + ("t", tool, -1, (), rank[number], (), ()), None, TOOL + tool))
        key_terms = words.terms(" ".join(row.keywords)) | words.terms(
            " ".join(tag.partition(":")[2] or tag for tag in row.tags)
        )
        all_terms = key_terms | words.terms(f"{row.title} {row.when} {row.do}")
        for term in key_terms:
            recall.setdefault("k:" + term, []).append(number)
        for term in all_terms:
            recall.setdefault("a:" + term, []).append(number)
    frequency: dict[str, int] = {}
    for _, by_run, _ in pending:
        for gram in {g for run in by_run or () for g in run}:
            frequency[gram] = frequency.get(gram, 0) + 1

    def rarity(gram: str) -> tuple:
        return (frequency[gram], -len(gram), gram)

    pre: dict[str, dict[str, list[tuple]]] = {}
    for entry, by_run, fallback in pending:
        key, second = fallback, ""
        if by_run:
            key = min((g for run in by_run for g in run), key=rarity)
            others = [g for run in by_run if key not in run for g in run]
            second = min(others, key=rarity) if others else ""
        pre.setdefault(key, {}).setdefault(second, []).append(entry)
    groups: list[tuple] = []
    table: dict[str, dict[str, int]] = {}
    for key in sorted(pre):
        table[key] = {}
        for second in sorted(pre[key]):
            table[key][second] = len(groups)
            groups.append(tuple(pre[key][second]))
    lengths = {len(k) for k in pre if not k.startswith("\x00")} | {len(g) for k in pre for g in pre[k] if g}
    return {
        "settings": dict(settings),
        "lessons": lessons,
        "programs": programs,
        "pre": table,
        "groups": groups,
        "recall": {k: tuple(recall[k]) for k in sorted(recall)},
        "gram_lengths": tuple(sorted(lengths, reverse=True)),
    }


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
    sections: dict[str, tuple[int, int]] = {}
    blobs: list[bytes] = []
    offset = 0

    def add(name: str, blob: bytes) -> None:
        nonlocal offset
        sections[name] = (offset, len(blob))
        blobs.append(blob)
        offset += len(blob)

    for name in ("pre", "recall"):
        table, payload = _hashed(data[name])
        add(name + ".filter", _filter(data[name]))
        add(name + ".table", table)
        add(name + ".data", payload)
    for name in ("lessons", "programs", "groups"):
        table, payload = _array([marshal.dumps(record, MARSHAL_VERSION) for record in data[name]])
        add(name + ".table", table)
        add(name + ".data", payload)
    meta = marshal.dumps(
        {
            "key": key,
            "byteorder": sys.byteorder,
            "settings": data["settings"],
            "gram_lengths": data["gram_lengths"],
            "sections": sections,
            "count": len(data["lessons"]),
        },
        MARSHAL_VERSION,
    )
    head = MAGIC + FORMAT.to_bytes(4, "little") + len(meta).to_bytes(4, "little")
    body = b"".join(blobs)
    return head + meta + body


def _hashed(mapping: dict) -> tuple[bytes, bytes]:
    size = _prime_at_least(max(7, len(mapping)))
    buckets: list[dict] = [{} for _ in range(size)]
    for key in sorted(mapping):
        buckets[bucket(key, size)][key] = mapping[key]
    return _array([marshal.dumps(b, MARSHAL_VERSION) if b else b"" for b in buckets])


def _filter(mapping: dict) -> bytes:
    """A bit filter of the keys: three bits each, FILTER_BITS bits per key (a lookup of a key
    not in it reads no bucket, but for about one in a hundred)."""
    bits = bytearray(max(64, len(mapping) * FILTER_BITS // 8))
    size = len(bits) * 8
    for key in mapping:
        for bit in filter_bits(key, size):
            bits[bit >> 3] |= 1 << (bit & 7)
    return bytes(bits)


def _array(blobs: list[bytes]) -> tuple[bytes, bytes]:
    offsets = array.array("I", [0])
    for blob in blobs:
        offsets.append(offsets[-1] + len(blob))
    return offsets.tobytes(), b"".join(blobs)


def _prime_at_least(n: int) -> int:
    def prime(k: int) -> bool:
        return k > 1 and all(k % d for d in range(2, int(k**0.5) + 1))

    while not prime(n):
        n += 1
    return n


def rebuild(root: str, state_dir: str, write: bool = True) -> MemIndex:
    """Build the tables from INDEX.md (and bank.toml) and, when asked, rewrite the compiled file."""
    index_text, toml_text, key = read_sources(root)
    data = from_texts(index_text, toml_text)
    from lessonbank import config as config_mod

    problem = config_mod.lenient(toml_text)[1]
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
