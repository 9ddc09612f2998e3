"""A small backtracking matcher for the common subset of regexes, so most hook calls never import `re`.

`bank index` parses each command regex once (see `rxbuild`) into a program of plain tuples that
this module runs; a pattern outside the subset (backreferences, lookbehind, possessive or atomic
groups, scoped flags, non-ASCII case folding) has no program and goes to `re`, which is then
imported on demand. Only ASCII subjects run here; anything else also goes to `re`. The tests
check this matcher against `re` on tables of patterns and subjects.

Backtracking can take exponential time, so a search counts its steps against `budget` (its own
step budget and the hook call's, which `globs` shares) and raises `budget.Exhausted` past it (the
hook then counts the trigger as not matching and logs it); `re`, for what this matcher cannot run,
is stopped by the call's clock. `bank index` leaves out the patterns `regex_hazard` flags, so
neither this matcher nor `re` ever runs one; the budget is for whatever the static check lets
through.

A program is `(icase, multiline, ascii, anchored, prefix, seq)`; `seq` is a tuple of nodes:
  (LIT, text) (ANY,) (ANYALL,) (NLIT, char) (IN, negate, chars, ranges, categories)
  (AT, kind) (REP, min, max or -1, seq, single node or None) (BRANCH, seqs) (LOOK, positive, seq)
"""

from lessonbank.matching import budget
from lessonbank.matching.budget import Exhausted

LIT, ANY, ANYALL, NLIT, IN, AT, REP, BRANCH, LOOK = range(9)
_ASCII_SPACE = " \t\n\r\f\v"
# The ASCII characters `\s`, `\d` and `\w` match in either mode (str.isspace adds \x1c-\x1f).
_CATEGORY_CHARS = {
    "s": _ASCII_SPACE + "\x1c\x1d\x1e\x1f",
    "d": "0123456789",
    "w": "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_",
}


class Unsupported(Exception):
    """The mini matcher cannot decide; use `re`."""


def search(program: tuple, pattern: str, subject: str) -> bool:
    """Does `pattern` match anywhere in `subject` (`re.search` semantics)? Raises Exhausted."""
    if program is not None and subject.isascii():
        try:
            return budget.run(_search, len(subject), program, subject)
        except (Unsupported, RecursionError):
            pass
    return _timed_re(pattern, subject)


class _Late(Exception):
    pass


def _timed_re(pattern: str, subject: str) -> bool:
    """`re.search` stopped when this call's budget.RE_SECONDS are spent (main thread only:
    elsewhere no signal can reach it, and it runs unbounded as before)."""
    import re  # only now: a program-less pattern, a non-ASCII subject or a too-deep match

    seconds = budget.clock()
    if seconds is None:
        return re.search(pattern, subject) is not None
    if seconds <= 0:
        raise Exhausted("skipped: this call's matching time is spent")
    import signal
    import time

    def late(signum: int, frame: object) -> None:
        raise _Late

    try:
        old = signal.signal(signal.SIGALRM, late)
    except ValueError:  # not the main thread
        return re.search(pattern, subject) is not None
    start = time.perf_counter()
    try:
        signal.setitimer(signal.ITIMER_REAL, seconds)
        try:
            return re.search(pattern, subject) is not None
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    except _Late:
        raise Exhausted(f"gave up after {budget.RE_SECONDS * 1000:g} ms of `re` in this call") from None
    finally:
        signal.signal(signal.SIGALRM, old)
        budget.spend(time.perf_counter() - start)


def measure(program: tuple, subject: str, steps: int) -> tuple[bool | None, int]:
    """(does it match, or None when it gave up; steps used) of the mini matcher alone, for tests."""
    left = [steps]
    try:
        found: bool | None = _search(program, subject, left)
    except (Exhausted, Unsupported, RecursionError):
        found = None
    return found, steps - left[0]


def _search(program: tuple, s: str, left: list[int]) -> bool:
    icase, multiline, ascii_, anchored, prefix, seq = program
    if icase:
        s = s.lower()
    ctx = (s, icase, multiline, ascii_, left)
    if anchored:
        return _m(seq, 0, 0, ctx, _done)
    start, n = 0, len(s)
    # Without a literal prefix, a match can still only start at one of the characters its first
    # consumed node allows (`\b(?:cargo|uv)\s` at a 'c' or a 'u'): the other positions are skipped
    # instead of each costing a few steps.
    firsts = None if prefix else _firsts(seq)
    while start <= n:
        if prefix:
            start = s.find(prefix, start)
            if start < 0:
                return False
        elif firsts is not None:
            while start < n and s[start] not in firsts:
                start += 1
            if start == n:
                return False
        if _m(seq, 0, start, ctx, _done):
            return True
        start += 1
    return False


def _firsts(seq: tuple) -> "frozenset[str] | None":
    """The characters a match of `seq` can start with, or None when that is not known (the
    first consumed node is a class or any character, or the sequence may match empty)."""
    for node in seq:
        op = node[0]
        if op == LIT:
            return frozenset((node[1][0],))
        if op in (AT, LOOK):
            continue  # zero-width: the first character comes from what follows
        if op == IN:  # a set: its characters (subjects here are ASCII), lower-cased too for IGNORECASE
            if node[1]:
                return None
            chars = set(node[2])
            for lo, hi in node[3]:
                chars.update(map(chr, range(lo, min(hi, 127) + 1)))
            for cat in node[4]:
                if cat not in _CATEGORY_CHARS:
                    return None
                chars.update(_CATEGORY_CHARS[cat])
            return frozenset(chars | {c.lower() for c in chars})
        if op == BRANCH:
            out: set[str] = set()
            for alt in node[1]:
                first = _firsts(alt)
                if first is None:
                    return None
                out |= first
            return frozenset(out)
        if op == REP and node[1] >= 1:
            return _firsts((node[4],)) if node[4] is not None else _firsts(node[3])
        return None
    return None


def _done(pos: int) -> bool:
    return True


def _word(c: str) -> bool:
    return c.isalnum() or c == "_"


def _cat(cat: str, c: str, ascii_: bool) -> bool:
    if cat == "d":
        return c.isdecimal()
    if cat == "D":
        return not c.isdecimal()
    if cat == "s":
        return c in _ASCII_SPACE if ascii_ else c.isspace()
    if cat == "S":
        return not (c in _ASCII_SPACE if ascii_ else c.isspace())
    if cat == "w":
        return _word(c)
    if cat == "W":
        return not _word(c)
    raise Unsupported(cat)


def _in_set(node: tuple, c: str, ascii_: bool) -> bool:
    if c in node[2]:
        return True
    o = ord(c)
    for lo, hi in node[3]:
        if lo <= o <= hi:
            return True
    return any(_cat(cat, c, ascii_) for cat in node[4])


def _one(node: tuple, c: str, icase: bool, ascii_: bool) -> bool:
    op = node[0]
    if op == LIT:
        return c == node[1]
    if op == ANY:
        return c != "\n"
    if op == ANYALL:
        return True
    if op == NLIT:
        return c != node[1]
    if op == IN:
        hit = _in_set(node, c, ascii_) or (icase and _in_set(node, c.upper(), ascii_))
        return hit != node[1]
    raise Unsupported(op)


def _at(kind: str, s: str, pos: int) -> bool:
    n = len(s)
    if kind == "A":  # \A, and ^ without MULTILINE
        return pos == 0
    if kind == "^m":
        return pos == 0 or s[pos - 1] == "\n"
    if kind == "$":
        return pos == n or (pos == n - 1 and s[pos] == "\n")
    if kind == "$m":
        return pos == n or s[pos] == "\n"
    if kind == "Z":
        return pos == n
    if kind == "b" or kind == "B":
        before = pos > 0 and _word(s[pos - 1])
        after = pos < n and _word(s[pos])
        if kind == "b":
            return before != after
        return n > 0 and before == after
    raise Unsupported(kind)


def _m(seq: tuple, i: int, pos: int, ctx: tuple, k) -> bool:
    s, icase, _multiline, ascii_, left = ctx
    left[0] -= 1
    if left[0] < 0:
        raise Exhausted
    n = len(seq)
    while i < n:
        node = seq[i]
        op = node[0]
        if op == LIT:
            text = node[1]
            if not s.startswith(text, pos):
                return False
            pos += len(text)
        elif op == AT:
            if not _at(node[1], s, pos):
                return False
        elif op == REP:
            return _rep(node, seq, i + 1, pos, ctx, k)
        elif op == BRANCH:
            return any(_m(alt, 0, pos, ctx, lambda p, i=i: _m(seq, i + 1, p, ctx, k)) for alt in node[1])
        elif op == LOOK:
            if _m(node[2], 0, pos, ctx, _done) != node[1]:
                return False
        else:
            if pos >= len(s) or not _one(node, s[pos], icase, ascii_):
                return False
            pos += 1
        i += 1
    return k(pos)


def _rep(node: tuple, seq: tuple, nxt: int, pos: int, ctx: tuple, k) -> bool:
    _, lo, hi, body, single = node
    s, icase, _multiline, ascii_, left = ctx
    if single is not None:
        limit = len(s) if hi < 0 else min(len(s), pos + hi)
        if single[0] == ANY:  # `.`: up to the next newline, found at C speed
            newline = s.find("\n", pos, limit)
            end = limit if newline < 0 else newline
        elif single[0] == ANYALL:
            end = limit
        else:
            end = pos
            while end < limit and _one(single, s[end], icase, ascii_):
                end += 1
        left[0] -= end - pos
        if end - pos < lo:
            return False
        stops = range(end, pos + lo - 1, -1)
        # Give back only to where what follows can start (`.*\bRUST_BACKTRACE=` tries the R's).
        firsts = _firsts(seq[nxt:]) if nxt < len(seq) else None
        if firsts is not None:
            n = len(s)
            return any(_m(seq, nxt, stop, ctx, k) for stop in stops if stop < n and s[stop] in firsts)
        return any(_m(seq, nxt, stop, ctx, k) for stop in stops)

    def more(count: int, at: int) -> bool:
        if hi < 0 or count < hi:

            def after(p: int) -> bool:
                if p == at and count >= lo:
                    return False  # an empty pass cannot make progress
                return more(count + 1, p)

            if _m(body, 0, at, ctx, after):
                return True
        return count >= lo and _m(seq, nxt, at, ctx, k)

    return more(0, pos)
