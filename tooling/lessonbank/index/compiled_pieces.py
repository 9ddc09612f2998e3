"""What one INDEX.md row gives the compiled index, whatever the other rows are: its piece.

A piece is ((slug, priority, confidence), the marshalled lesson record, tools, triggers, recall
keys): each command regex compiled (through regex_compiler, which loads `re`'s parser: this module
runs only when something must be built) with the literals every match must contain and its
candidate keys (grams), each glob compiled likewise, the row's recall terms. `bank index` keeps
the pieces (index.derived) and the compiled regexes (`Packed`, in triggers.cache), so a build
works out only the new rows; compiled_build joins pieces into the tables, the patches
(compiled_patch) files a few rows' pieces into a file on disk.
"""

import marshal
from collections.abc import Iterable, Iterator, Mapping

from lessonbank.index.compiled_read import ALWAYS_COMMAND, ALWAYS_PATH, BOUND, KEY_LENGTHS, TOOL, fold
from lessonbank.index.index_md import IndexRow
from lessonbank.matching import globs, regex_compiler, regex_hazard, words

# marshal from version 3 on marks strings interned and objects shared by their refcount, which
# depends on what else the process holds: the same tables could give different bytes, and
# `bank index` would rewrite an unchanged file. Version 2 writes values only.
MARSHAL_VERSION = 2
# A piece's fields (see `piece`), and a trigger's; named constants, as the records of a build of
# 50,000 rows are tuples from marshal (index.derived says what NamedTuples would cost).
HEAD, RECORD, TOOLS, TRIGGERS, KEYS = range(5)
KIND, SOURCE, PROGRAM, LITERALS, GRAMS, FALLBACK, BOUNDED, CHOICES = range(8)



def settings_from_toml(text: str | None) -> dict:
    """The [recall] settings from bank.toml's text, through the one config parser (defaults if broken)."""
    return settings_and_problem(text)[0]


def settings_and_problem(text: str | None) -> "tuple[dict, str | None]":
    from lessonbank.config import DEFAULTS, lenient

    # A broken bank.toml must not switch the hooks off: `rebuild` logs it, `bank check` reports it.
    config, problem = lenient(text)
    return {key: config.get("recall." + key) for key in DEFAULTS["recall"]}, problem


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
        program, runs = regex_compiler.compile_pattern(pattern)
    except Exception:  # an invalid regex never fires; `bank check` names it
        return None
    if regex_hazard.hazard(pattern):  # nor does one that can backtrack for ever
        return None
    marked = tuple(sorted({run.translate(BOUND) for run in regex_compiler.bounded_runs(pattern) if "\x01" in run}))
    choices = tuple(tuple(sorted({fold(x) for x in group})) for group in regex_compiler.alternatives(pattern))
    return program, tuple(runs), marked, choices


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


class Packed(dict):
    """pattern -> `command_trigger`'s answer, each held marshalled (23,000 patterns' programs are
    57 MB as objects, 9 MB so): what `bank index` keeps in triggers.cache, as it is there."""

    def __getitem__(self, pattern: str) -> tuple | None:
        blob = dict.__getitem__(self, pattern)
        return None if blob is None else marshal.loads(blob)

    def __setitem__(self, pattern: str, trigger: tuple | None) -> None:
        dict.__setitem__(self, pattern, None if trigger is None else marshal.dumps(trigger))
