"""Where each repeat of a parsed regex sits in its source text, for messages that quote it.

`re`'s parser keeps no positions, but every repeat node comes from one quantifier (`*`, `+`, `?`,
`{m,n}`), and the nodes in post-order meet the quantifiers in source order. When the two counts
differ (the parser merged something, or verbose mode hides a quantifier in a comment) no span is
known and messages describe the construct in words.
"""

from __future__ import annotations

from re import _constants as C  # type: ignore[attr-defined]

_REPEATS = (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT)


def children(op, av) -> list:
    """The sub-sequences of a parsed node."""
    if op in _REPEATS:
        return [av[2]]
    if op is C.SUBPATTERN:
        return [av[-1]]
    if op is C.BRANCH:
        return list(av[1])
    if op in (C.ASSERT, C.ASSERT_NOT):
        return [av[1]]
    if op is C.GROUPREF_EXISTS:
        return [x for x in av[1:] if x is not None]
    return []


class Snippets:
    """The source text of repeat nodes, found by the order of their quantifiers in the pattern."""

    def __init__(self, pattern: str, parsed) -> None:
        self.pattern = pattern
        tokens = _quantifiers(pattern)
        nodes: list = []
        _post_order(list(parsed), nodes)
        same = len(tokens) == len(nodes)
        self.where = {id(n): t for n, t in zip(nodes, tokens, strict=True)} if same else {}

    def of(self, node) -> str:
        found = self.where.get(id(node))
        if found:
            start, _, end = found
            return f"`{self.pattern[start:end]}`"
        return "a repeat"

    def operand(self, node) -> str:
        found = self.where.get(id(node))
        if not found:
            return ""
        start, end, _ = found
        return self.pattern[start:end]


def _post_order(seq, out: list) -> None:
    for node in seq:
        op, av = node
        for child in children(op, av):
            _post_order(child, out)
        if op in _REPEATS:
            out.append(node)


def _quantifiers(pattern: str) -> list[tuple[int, int, int]]:
    """(operand start, quantifier start, quantifier end) of every quantifier, in source order."""
    found: list[tuple[int, int, int]] = []
    opens: list[int] = []
    last: int | None = None  # start of the latest complete operand
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            last, i = i, i + 2
        elif c == "[":
            j = i + 1
            if j < n and pattern[j] == "^":
                j += 1
            if j < n and pattern[j] == "]":
                j += 1
            while j < n and pattern[j] != "]":
                j += 2 if pattern[j] == "\\" else 1
            last, i = i, j + 1
        elif c == "(":
            opens.append(i)
            last, i = None, i + (2 if pattern.startswith("(?", i) else 1)
        elif c == ")":
            last, i = (opens.pop() if opens else None), i + 1
        elif c in "*+?" or (c == "{" and _brace_end(pattern, i)):
            end = _brace_end(pattern, i) if c == "{" else i + 1
            if end < n and pattern[end] in "?+":
                end += 1
            if last is not None:
                found.append((last, i, end))
            last, i = None, end
        elif c == "|":
            last, i = None, i + 1
        else:
            last, i = i, i + 1
    return found


def _brace_end(pattern: str, i: int) -> int:
    """The index after `{m,n}` starting at `i`, or 0 when it is not a quantifier."""
    j = pattern.find("}", i)
    if j < 0:
        return 0
    inner = pattern[i + 1 : j]
    lo, _, hi = inner.partition(",")
    if (lo.isdigit() or (lo == "" and "," in inner)) and (hi == "" or hi.isdigit()) and inner:
        return j + 1
    return 0
