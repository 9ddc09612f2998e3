"""Static check for command regexes that can backtrack for exponential time.

Runs in `bank check`, in every capture route and in `bank index` (never in a hook), so it may use
`re`'s own parser. `hazard(pattern)` names the first construct that makes a backtracking matcher
try exponentially many ways to split the same text, or "" when there is none:

- a backreference or a conditional group (`\\1`, `(?(1)a|b)`): the hooks' matcher has no such
  construct and `re` cannot be bounded;
- a repeated group (`+`, `*`, `{2,}`) whose body holds a repeat that can take over the text of a
  whole pass (`(a+)+`, `(.*,)*`), whose end can trade characters with the start of the next
  pass (`(\\w+\\s?)*`), or which holds two adjacent repeats of overlapping characters (`(x+x+y)+`);
- a repeated alternation whose branches can match the same text (`(a|a)*`, `(a|ab)+`).

The check is conservative: it reasons on sets of characters, so it may flag a pattern a person
can show to be unambiguous; such a pattern can always be rewritten without the nesting.
"""

from __future__ import annotations

import re
from re import _constants as C  # type: ignore[attr-defined]
from re import _parser as P  # type: ignore[attr-defined]

from lessonbank.matching import regex_spans
from lessonbank.matching.regex_spans import children

_REPEATS = (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT)
_ZERO_WIDTH = (C.AT, C.ASSERT, C.ASSERT_NOT)
_SINGLE = (C.LITERAL, C.NOT_LITERAL, C.ANY, C.IN)
# Characters the sets are compared on: ASCII, some non-ASCII letters, digits and spaces, and every
# character the pattern itself names (added per pattern).
_PROBES = "".join(map(chr, range(128))) + "\u00a0\u00e9\u00df\u0130\u017f\u212a\u0663\u2028\u3000\u4e00"
_EXPONENTIAL = "can take exponential time"


class _Found(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def hazard(pattern: str) -> str:
    """Why `pattern` can make a backtracking matcher take exponential time, or "" (also when invalid)."""
    try:
        parsed = P.parse(pattern)
    except (re.error, RecursionError, OverflowError):
        return ""
    checker = _Checker(pattern, parsed)
    try:
        checker.walk(list(parsed))
    except _Found as found:
        return found.reason
    except RecursionError:
        return "the pattern nests too deeply to be checked; simplify it"
    return ""


class _Checker:
    def __init__(self, pattern: str, parsed) -> None:
        flags = parsed.state.flags
        self.icase = bool(flags & C.SRE_FLAG_IGNORECASE)
        self.dotall = bool(flags & C.SRE_FLAG_DOTALL)
        self.ascii = bool(flags & C.SRE_FLAG_ASCII)
        self.probes = _PROBES + "".join({c for c in pattern if ord(c) >= 128})
        self.all = frozenset(self.probes)
        self.spans = regex_spans.Snippets(pattern, parsed)

    # -- the walk ---------------------------------------------------------------------------
    def walk(self, seq) -> None:
        for node in seq:
            op, av = node
            if op is C.GROUPREF:
                raise _Found(
                    f"backreference `\\{av}` needs backtracking that cannot be bounded; "
                    "match the text itself instead"
                )
            if op is C.GROUPREF_EXISTS:
                raise _Found(
                    f"conditional group `(?({av[0]})…)` needs backtracking that cannot be bounded; "
                    "use an alternation instead"
                )
            for child in children(op, av):
                self.walk(child)
            if op in _REPEATS:
                self.repeat(node)

    def repeat(self, node) -> None:
        _, hi, body = node[1]
        if hi is not C.MAXREPEAT and hi < 2:
            return
        body = list(body)
        for inner in _repeats_in(body):
            if self._absorbs(inner, body):
                raise _Found(
                    f"nested quantifier {self.spans.of(node)} {_EXPONENTIAL}: its inner "
                    f"{self.spans.of(inner)} can match the text of a whole pass; "
                    f"{_rewrite(self.spans, node, inner)}"
                )
        for trail in _edge(body, reverse=True):
            for lead in _edge(body, reverse=False):
                if self.chars([trail]) & self.chars([lead]):
                    raise _Found(
                        f"nested quantifier {self.spans.of(node)} {_EXPONENTIAL}: one pass can end "
                        f"with {self.spans.of(trail)} and the next begin with {self.spans.of(lead)} "
                        "on the same characters; rewrite it so each character is matched one way"
                    )
        pair = self._adjacent_overlap(body)
        if pair:
            raise _Found(
                f"nested quantifier {self.spans.of(node)} {_EXPONENTIAL}: {self.spans.of(pair[0])} and "
                f"{self.spans.of(pair[1])} can split the same text in many ways; merge them into one"
            )
        for branch in _branches_in(body):
            alternatives = branch[1][1]
            for i, first in enumerate(alternatives):
                for second in alternatives[i + 1 :]:
                    if self._overlap(first, second):
                        raise _Found(
                            f"alternation under {self.spans.of(node)} {_EXPONENTIAL}: its branches "
                            "can match the same text; make the branches distinct (or merge them)"
                        )

    # -- sets of characters -----------------------------------------------------------------
    def single(self, op, av) -> frozenset:
        if op is C.ANY:
            return self.all if self.dotall else self.all - {"\n"}
        if op is C.LITERAL:
            return frozenset(c for c in self.probes if self._same(c, chr(av)))
        if op is C.NOT_LITERAL:
            return frozenset(c for c in self.probes if not self._same(c, chr(av)))
        return frozenset(c for c in self.probes if self._in(av, c))

    def _same(self, c: str, literal: str) -> bool:
        return c == literal or (self.icase and c.lower() == literal.lower())

    def _in(self, items, c: str) -> bool:
        negate = False
        hit = False
        forms = {c, c.lower(), c.upper()} if self.icase else {c}
        for op, av in items:
            if op is C.NEGATE:
                negate = True
            elif op is C.LITERAL:
                hit = hit or chr(av) in forms
            elif op is C.RANGE:
                hit = hit or any(av[0] <= ord(f) <= av[1] for f in forms)
            elif op is C.CATEGORY:
                hit = hit or _category(av, c, self.ascii)
            else:
                hit = True  # unknown: assume it overlaps
        return hit != negate

    def chars(self, seq) -> frozenset:
        """Every character some item of `seq` can match."""
        out: set[str] = set()
        for op, av in seq:
            if op in _SINGLE:
                out |= self.single(op, av)
            elif op in _ZERO_WIDTH:
                continue
            elif op in _REPEATS or op is C.SUBPATTERN or op is C.BRANCH:
                for child in children(op, av):
                    out |= self.chars(child)
            else:
                return self.all
        return frozenset(out)

    def first(self, seq) -> frozenset:
        """The characters a match of `seq` can begin with."""
        out: set[str] = set()
        for op, av in seq:
            if op in _SINGLE:
                return frozenset(out | self.single(op, av))
            if op in _ZERO_WIDTH:
                continue
            if op in _REPEATS or op is C.SUBPATTERN or op is C.BRANCH:
                for child in children(op, av):
                    out |= self.first(child)
                if not _nullable([(op, av)]):
                    return frozenset(out)
            else:
                return self.all
        return frozenset(out)

    # -- the three tests --------------------------------------------------------------------
    def _absorbs(self, inner, body) -> bool:
        """Can `inner` (a loop) read everything the rest of `body` must read?"""
        if not _loop(inner):
            return False
        return not self._blocks(body, inner, self.chars([inner]))

    def _blocks(self, seq, inner, allowed: frozenset) -> bool:
        """Does `seq` (without `inner`) have to match a character outside `allowed`?"""
        for node in seq:
            op, av = node
            if node is inner:
                continue
            if op in _SINGLE:
                if not self.single(op, av) & allowed:
                    return True
            elif op is C.SUBPATTERN:
                if self._blocks(av[-1], inner, allowed):
                    return True
            elif op in _REPEATS:
                if av[0] >= 1 and self._blocks(av[2], inner, allowed):
                    return True
            elif op is C.BRANCH and all(self._blocks(alt, inner, allowed) for alt in av[1]):
                return True
        return False

    def _adjacent_overlap(self, body) -> tuple | None:
        items = [n for n in _flat(body) if n[0] not in _ZERO_WIDTH]
        for i, node in enumerate(items):
            if not _variable(node):
                continue
            mine = self.chars([node])
            for other in items[i + 1 :]:
                if _variable(other) and (_loop(node) or _loop(other)) and mine & self.first([other]):
                    return node, other
                if not _nullable([other]):
                    break
        return None

    def _overlap(self, a, b) -> bool:
        sa, sb = self._prefix(list(a)), self._prefix(list(b))
        return all(x & y for x, y in zip(sa, sb, strict=False))  # compared as far as both go

    def _prefix(self, seq) -> list[frozenset]:
        """The character sets of the fixed start of an alternative, then the set that may follow."""
        out: list[frozenset] = []
        for i, (op, av) in enumerate(seq):
            if op in _SINGLE:
                out.append(self.single(op, av))
            elif op in _ZERO_WIDTH:
                continue
            elif op is C.SUBPATTERN and not _nullable(av[-1]) and not list(_repeats_in(av[-1])):
                out.extend(self._prefix(list(av[-1])))
            else:
                rest = seq[i:]
                if not _nullable(rest):
                    out.append(self.first(rest))
                break
        return out


def _category(cat, c: str, ascii_: bool) -> bool:
    if ascii_ and not c.isascii():
        return cat in (C.CATEGORY_NOT_DIGIT, C.CATEGORY_NOT_SPACE, C.CATEGORY_NOT_WORD)
    table = {
        C.CATEGORY_DIGIT: c.isdecimal(),
        C.CATEGORY_SPACE: c.isspace(),
        C.CATEGORY_WORD: c.isalnum() or c == "_",
    }
    opposite = {
        C.CATEGORY_NOT_DIGIT: C.CATEGORY_DIGIT,
        C.CATEGORY_NOT_SPACE: C.CATEGORY_SPACE,
        C.CATEGORY_NOT_WORD: C.CATEGORY_WORD,
    }
    if cat in table:
        return table[cat]
    if cat in opposite:
        return not table[opposite[cat]]
    return True


def _nullable(seq) -> bool:
    for op, av in seq:
        if op in _ZERO_WIDTH or op in (C.GROUPREF, C.GROUPREF_EXISTS):
            continue
        if op in _REPEATS:
            if av[0] >= 1 and not _nullable(av[2]):
                return False
        elif op is C.SUBPATTERN:
            if not _nullable(av[-1]):
                return False
        elif op is C.BRANCH:
            if not any(_nullable(alt) for alt in av[1]):
                return False
        else:
            return False
    return True


def _variable(node) -> bool:
    op, av = node
    return op in _REPEATS and av[0] != av[1]


def _loop(node) -> bool:
    return node[0] in _REPEATS and (node[1][1] is C.MAXREPEAT or node[1][1] >= 2)


def _flat(seq) -> list:
    """`seq` with its groups opened, so that neighbours across group edges are next to each other."""
    out = []
    for node in seq:
        if node[0] is C.SUBPATTERN:
            out.extend(_flat(node[1][-1]))
        else:
            out.append(node)
    return out


def _repeats_in(seq):
    for node in seq:
        op, av = node
        if op in _REPEATS:
            yield node
        for child in children(op, av):
            yield from _repeats_in(child)


def _branches_in(seq):
    for node in seq:
        op, av = node
        if op is C.BRANCH:
            yield node
        if op not in _REPEATS:  # a nested repeat checks its own branches
            for child in children(op, av):
                yield from _branches_in(child)


def _edge(seq, reverse: bool) -> list:
    """The variable repeats a match of `seq` can begin (or end, with `reverse`) with."""
    found = []
    for node in reversed(_flat(seq)) if reverse else _flat(seq):
        op, av = node
        if op in _ZERO_WIDTH:
            continue
        if _variable(node):
            found.append(node)
        elif op is C.BRANCH:
            for alt in av[1]:
                found.extend(_edge(alt, reverse))
        elif op in _REPEATS:  # a fixed count: look inside
            found.extend(_edge(av[2], reverse))
        if not _nullable([node]):
            break
    return found


def _rewrite(spans: regex_spans.Snippets, outer, inner) -> str:
    body = list(outer[1][2])
    flat = _flat(body)
    if len(flat) == 1 and flat[0] is inner and inner[1][1] is C.MAXREPEAT and outer[1][1] is C.MAXREPEAT:
        operand = spans.operand(inner)
        if operand:
            suffix = "*" if min(outer[1][0], inner[1][0]) == 0 else "+"
            return f"rewrite as `{operand}{suffix}`"
    return "rewrite it so each character can be matched one way only"
