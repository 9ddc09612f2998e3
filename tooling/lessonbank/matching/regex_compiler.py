"""Build-time half of `regex_engine`: parse a regex once into a mini-matcher program and its literals.

Runs in `bank index` (and in the hooks' slow fallback), so it may use `re`'s own parser.
"""

import re
from re import _constants as C  # type: ignore[attr-defined]
from re import _parser as P  # type: ignore[attr-defined]

from lessonbank.matching import regex_engine

_AT = {
    C.AT_BEGINNING_STRING: "A",
    C.AT_END_STRING: "Z",
    C.AT_BOUNDARY: "b",
    C.AT_NON_BOUNDARY: "B",
}
_REPEATS = (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT)
# Nodes that match exactly one character, so a repeat of one can run as a tight loop.
_ONE_CHARACTER = (regex_engine.ANY, regex_engine.ANYALL, regex_engine.NLIT, regex_engine.IN)
_CATEGORIES = {
    C.CATEGORY_DIGIT: "d",
    C.CATEGORY_NOT_DIGIT: "D",
    C.CATEGORY_SPACE: "s",
    C.CATEGORY_NOT_SPACE: "S",
    C.CATEGORY_WORD: "w",
    C.CATEGORY_NOT_WORD: "W",
}


class _Unsupported(Exception):
    pass


def compile_pattern(pattern: str) -> tuple[tuple | None, list[str]]:
    """(mini program or None, required literal runs) of a regex. Raises re.error when invalid."""
    re.compile(pattern)
    parsed = P.parse(pattern)
    runs: list[str] = []
    current: list[str] = []
    _required(parsed, runs, current)
    _flush(runs, current)
    try:
        program: tuple | None = _program(parsed)
    except (_Unsupported, RecursionError):
        program = None
    return program, runs


def _flush(runs: list[str], current: list[str]) -> None:
    if current == [BOUNDARY]:  # a boundary with no word character beside it says nothing
        current.clear()
    if current:
        runs.append("".join(current))
        current.clear()


_SPACE = [(C.IN, [(C.CATEGORY, C.CATEGORY_SPACE)])]
# Marks a `\\b` at the edge of a run whose edge character is a word character: there the subject
# holds a non-word character or its start/end (see compiled_read.bounded).
BOUNDARY = "\x01"


def _word(ch: str) -> bool:
    return ch.isascii() and (ch.isalnum() or ch == "_")


def bounded_runs(pattern: str) -> list[str]:
    """The required literal runs of a valid regex with its word boundaries marked: `\\bgo\\s+test`
    gives "\\x01go " and " test\\x01" (compiled_read.bounded holds them for "go test", not for
    "cargo test")."""
    runs: list[str] = []
    current: list[str] = []
    _required(P.parse(pattern), runs, current, True)
    _flush(runs, current)
    return runs


def alternatives(pattern: str) -> list[tuple[str, ...]]:
    """Required choices of a valid regex: for each alternation every match must pass through
    (`(?:cargo|swift)\\s+(?:bench|run)`), the longest literal run of each branch, when every
    branch has one of 2 characters or more; a match contains at least one of each tuple."""
    out: list[tuple[str, ...]] = []
    _choices(P.parse(pattern), out)
    return out


def _choices(sub, out: list[tuple[str, ...]]) -> None:
    for op, av in sub:
        if op is C.SUBPATTERN:
            _choices(av[-1], out)
        elif op in _REPEATS and av[0] >= 1:
            _choices(av[2], out)
        elif op is C.BRANCH:
            longest = []
            for branch in av[1]:
                runs: list[str] = []
                current: list[str] = []
                _required(branch, runs, current)
                _flush(runs, current)
                best = max(runs, key=len, default="")
                if len(best) < 2:
                    break
                longest.append(best)
            else:
                out.append(tuple(longest))


def _required(sub, runs: list[str], current: list[str], marks: bool = False) -> None:
    """Collect literal runs that every match must contain (zero-width items do not break a run).

    A whitespace class (`\\s`, or `\\s+`) stands in a run as " ": the candidate keys fold every
    whitespace character to a space (compiled_read.FOLD), so `\\bgo\\s+test` requires "go " and
    " test", which "cargo tree" does not contain. With `marks`, word boundaries are kept as BOUNDARY.
    """
    for op, av in sub:
        if op is C.LITERAL and av < 128:
            if current == [BOUNDARY] and not _word(chr(av)):
                current.clear()
            current.append(chr(av))
        elif op is C.IN and [(op, av)] == _SPACE:
            if current == [BOUNDARY]:
                current.clear()
            current.append(" ")
        elif op is C.SUBPATTERN:
            _required(av[-1], runs, current, marks)
        elif op in _REPEATS and av[0] >= 1 and list(av[2]) == _SPACE:
            if current == [BOUNDARY]:
                current.clear()
            current.append(" ")
            _flush(runs, current)
            current.append(" ")
        elif op in _REPEATS and av[0] >= 1:
            _flush(runs, current)
            _required(av[2], runs, current, marks)
            _flush(runs, current)
        elif op is C.ASSERT:  # a lookaround's own required literals are required too, apart
            inner: list[str] = []
            _required(av[1], runs, inner, marks)
            _flush(runs, inner)
        elif marks and op is C.AT and av is C.AT_BOUNDARY:
            if current and current[-1] != BOUNDARY and _word(current[-1]):
                current.append(BOUNDARY)
                _flush(runs, current)
            elif current:
                _flush(runs, current)
            current.append(BOUNDARY)
        elif op in (C.AT, C.ASSERT_NOT):
            continue
        else:
            _flush(runs, current)


def _program(parsed) -> tuple:
    flags = parsed.state.flags
    if flags & (C.SRE_FLAG_LOCALE | getattr(C, "SRE_FLAG_TEMPLATE", 0)):
        raise _Unsupported("flags")
    opts = {
        "icase": bool(flags & C.SRE_FLAG_IGNORECASE),
        "multiline": bool(flags & C.SRE_FLAG_MULTILINE),
        "dotall": bool(flags & C.SRE_FLAG_DOTALL),
        "ascii": bool(flags & C.SRE_FLAG_ASCII),
    }
    seq = _seq(parsed, opts)
    anchored = bool(seq) and seq[0][0] == regex_engine.AT and seq[0][1] == "A"
    prefix = seq[0][1] if seq and seq[0][0] == regex_engine.LIT else ""
    return (opts["icase"], opts["multiline"], opts["ascii"], anchored, prefix, seq)


def _char(code: int, opts: dict) -> str:
    c = chr(code)
    if opts["icase"]:
        if code >= 128:
            raise _Unsupported("non-ASCII literal under IGNORECASE")
        return c.lower()
    return c


def _seq(sub, opts: dict) -> tuple:
    nodes: list[tuple] = []
    for op, av in sub:
        if op is C.LITERAL:
            c = _char(av, opts)
            if nodes and nodes[-1][0] == regex_engine.LIT:
                nodes[-1] = (regex_engine.LIT, nodes[-1][1] + c)
            else:
                nodes.append((regex_engine.LIT, c))
        elif op is C.SUBPATTERN:
            if av[1] or av[2]:
                raise _Unsupported("scoped flags")
            for node in _seq(av[3], opts):
                if node[0] == regex_engine.LIT and nodes and nodes[-1][0] == regex_engine.LIT:
                    nodes[-1] = (regex_engine.LIT, nodes[-1][1] + node[1])
                else:
                    nodes.append(node)
        else:
            nodes.append(_node(op, av, opts))
    return tuple(nodes)


def _node(op, av, opts: dict) -> tuple:
    if op is C.NOT_LITERAL:
        return (regex_engine.NLIT, _char(av, opts))
    if op is C.ANY:
        return (regex_engine.ANYALL,) if opts["dotall"] else (regex_engine.ANY,)
    if op is C.IN:
        return _charset(av, opts)
    if op is C.AT:
        if av is C.AT_BEGINNING:
            return (regex_engine.AT, "^m" if opts["multiline"] else "A")
        if av is C.AT_END:
            return (regex_engine.AT, "$m" if opts["multiline"] else "$")
        if av in _AT:
            return (regex_engine.AT, _AT[av])
        raise _Unsupported(str(av))
    if op in (C.MAX_REPEAT, C.MIN_REPEAT):
        lo, hi, body = av
        seq = _seq(body, opts)
        single = seq[0] if len(seq) == 1 and seq[0][0] in _ONE_CHARACTER else None
        if len(seq) == 1 and seq[0][0] == regex_engine.LIT and len(seq[0][1]) == 1:
            single = seq[0]
        return (regex_engine.REP, lo, -1 if hi is C.MAXREPEAT else hi, seq, single)
    if op is C.BRANCH:
        return (regex_engine.BRANCH, tuple(_seq(alt, opts) for alt in av[1]))
    if op in (C.ASSERT, C.ASSERT_NOT):
        direction, body = av
        if direction != 1:
            raise _Unsupported("lookbehind")
        return (regex_engine.LOOK, op is C.ASSERT, _seq(body, opts))
    raise _Unsupported(str(op))


def _charset(items, opts: dict) -> tuple:
    negate = False
    chars: list[str] = []
    ranges: list[tuple[int, int]] = []
    cats: list[str] = []
    for op, av in items:
        if op is C.NEGATE:
            negate = True
        elif op is C.LITERAL:
            if opts["icase"] and av >= 128:
                raise _Unsupported("non-ASCII class under IGNORECASE")
            chars.append(chr(av))
        elif op is C.RANGE:
            if opts["icase"] and av[1] >= 128:
                raise _Unsupported("non-ASCII range under IGNORECASE")
            ranges.append((av[0], av[1]))
        elif op is C.CATEGORY and av in _CATEGORIES:
            cats.append(_CATEGORIES[av])
        else:
            raise _Unsupported(str(op))
    return (regex_engine.IN, negate, "".join(chars), tuple(ranges), tuple(cats))


# A run shorter than this filters too little to be worth a search of its own.
SHORTEST_RUN = 16


def required_run(pattern: str, flags: int = 0) -> tuple[str, int]:
    """(class, n): a run of n characters of the class (the text between a class's brackets) that
    every match of `pattern` holds, the longest found, n >= SHORTEST_RUN; ("", 0) when none is
    known. Only what every path through the pattern takes is read (no branch, no optional part, no
    group with flags of its own), so a text without such a run cannot match."""
    try:
        found = _runs(P.parse(pattern, flags))
    except Exception:  # a construct the parser does not read: no run known
        return "", 0
    best = max(found, key=lambda run: run[1], default=("", 0))
    return best if best[1] >= SHORTEST_RUN else ("", 0)


def _runs(sub) -> list[tuple[str, int]]:
    """(class, least count) of each repeated character class a match of `sub` must take."""
    out: list[tuple[str, int]] = []
    for op, av in sub:
        if op in _REPEATS and av[0] >= 1:
            body = list(av[2])
            cls = _class_source(body[0][1]) if len(body) == 1 and body[0][0] is C.IN else None
            out += [(cls, av[0])] if cls else _runs(av[2])
        elif op is C.SUBPATTERN and not (av[1] or av[2]):  # (group, flags added, flags taken away, body)
            out += _runs(av[3])
        elif op is C.ATOMIC_GROUP:
            out += _runs(av)
    return out


def _class_source(items) -> str | None:
    """A character class's items as the text between its brackets; None for one it cannot write."""
    parts: list[str] = []
    for op, av in items:
        if op is C.NEGATE and not parts:
            parts.append("^")
        elif op is C.LITERAL:
            parts.append(re.escape(chr(av)))
        elif op is C.RANGE:
            parts.append(f"{re.escape(chr(av[0]))}-{re.escape(chr(av[1]))}")
        elif op is C.CATEGORY and av in _CATEGORIES:
            parts.append("\\" + _CATEGORIES[av])
        else:
            return None
    return "".join(parts) if parts and parts != ["^"] else None
