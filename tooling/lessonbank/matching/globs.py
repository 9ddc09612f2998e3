"""Path globs for lesson triggers, matched without `fnmatch` (which imports `re`).

Paths are relative to the bank root with `/` separators; matching is case-sensitive.
- `*` any run of characters except `/`; `?` one such character; `[abc]`, `[a-z]`, `[!x]` (or `[^x]`)
- `**` as a whole segment: `**/` any number of folders (also none), a trailing `/**` everything
  below; elsewhere `**` is `*`
- `{a,b}` alternatives; `\\x` a literal x
- a glob without `/` matches the file name at any depth (`*.lock`); a trailing `/` means
  everything below that folder (`migrations/`).

`compile_glob` turns a glob into alternatives of tokens (plain tuples, stored in the compiled
index); `match` runs them. `hazard` names a glob too costly to run (`bank check` and capture refuse
it, `bank index` leaves it out); `match` remembers the (wildcard, position) pairs that failed, so
no choice is tried twice, and gives up past its step budget all the same (`budget`: its own and
the hook call's, which `regex_engine` shares).
"""

from lessonbank.matching import budget
from lessonbank.matching.budget import Exhausted

LIT, ONE, STAR, DSTAR, DIRS, CLS = range(6)
# A token is a plain tuple (the compiled index marshals them), its kind first: (LIT, text),
# (CLS, negate, chars, ranges), the others (kind,). T_KIND is every token's kind, T_TEXT a LIT's text.
T_KIND, T_TEXT = 0, 1
MAX_ALTERNATIVES = 64  # brace alternatives of one glob: `{a,b}` ten times over would be 1024
MAX_WILDCARDS = 6  # `*` and `**` of one alternative


class GlobError(ValueError):
    """A glob with too many brace alternatives to expand."""


def hazard(glob: str) -> str:
    """Why the glob is too costly to match, or "" when it is fine."""
    try:
        alternatives = _expand(glob.strip(), [MAX_ALTERNATIVES])
    except GlobError as exc:
        return str(exc)
    for alt in alternatives:
        if "**/**" in alt:
            return "`**/**` repeats `**`, which already spans any number of folders; write `**` once"
        wildcards = sum(t[T_KIND] in (STAR, DIRS, DSTAR) for t in _tokens(alt))
        if wildcards > MAX_WILDCARDS:
            return (
                f"{wildcards} wildcards (`*`, `**`) in `{alt}` make matching slow; "
                f"use at most {MAX_WILDCARDS}"
            )
    return ""


def compile_glob(glob: str) -> tuple[bool, tuple[tuple, ...]]:
    """(matches the file name only, alternatives of token tuples)."""
    glob = glob.strip()
    while glob.startswith("./"):
        glob = glob[2:]
    if glob.endswith("/"):
        glob += "**"
    name_only = "/" not in glob
    return name_only, tuple(_tokens(alt) for alt in _expand(glob, [MAX_ALTERNATIVES]))


def unclosed_class(glob: str) -> bool:
    """Does the glob open a `[` class that never closes (the matcher then reads a literal '[')?"""
    i, n = 0, len(glob)
    while i < n:
        if glob[i] == "\\":
            i += 2
        elif glob[i] == "[":
            cls, j = _class(glob, i + 1)
            if cls is None:
                return True
            i = j
        else:
            i += 1
    return False


def literals(tokens: tuple) -> list[str]:
    """The literal runs every path matching these tokens contains."""
    return [t[T_TEXT] for t in tokens if t[T_KIND] == LIT]


def match(compiled: tuple[bool, tuple[tuple, ...]], path: str) -> bool:
    """Does the relative `path` match the compiled glob? Raises Exhausted past the step budget."""
    return budget.run(_search, len(path), compiled, path)


def measure(compiled: tuple[bool, tuple[tuple, ...]], path: str, steps: int) -> tuple[bool | None, int]:
    """(does it match, or None when it gave up; steps used) with a budget of `steps`, for tests."""
    left = [steps]
    try:
        found: bool | None = _search(compiled, path, left)
    except Exhausted:
        found = None
    return found, steps - left[0]


def _search(compiled: tuple[bool, tuple[tuple, ...]], path: str, left: list[int]) -> bool:
    name_only, alternatives = compiled
    subject = path.rpartition("/")[2] if name_only else path
    return any(_match(tokens, 0, subject, 0, left, set()) for tokens in alternatives)


def _expand(glob: str, room: list[int]) -> list[str]:
    """Brace alternatives, innermost first: a{b,c}d -> abd, acd (nesting allowed); at most room[0]."""
    depth = 0
    start = -1
    for i, c in enumerate(glob):
        if c == "\\":
            continue
        if c == "{" and (i == 0 or glob[i - 1] != "\\"):
            if depth == 0:
                start = i
            depth += 1
        elif c == "}" and depth and glob[i - 1] != "\\":
            depth -= 1
            if depth == 0:
                inner = glob[start + 1 : i]
                parts = _split_top(inner)
                if len(parts) < 2:
                    continue
                out: list[str] = []
                for part in parts:
                    out.extend(_expand(glob[:start] + part + glob[i + 1 :], room))
                return out
    room[0] -= 1
    if room[0] < 0:
        raise GlobError(f"more than {MAX_ALTERNATIVES} brace alternatives; list fewer")
    return [glob]


def _split_top(text: str) -> list[str]:
    parts, depth, cur = [], 0, []
    i = 0
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text):
            cur.append(text[i : i + 2])
            i += 2
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        if c == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(c)
        i += 1
    parts.append("".join(cur))
    return parts


def _tokens(glob: str) -> tuple:
    tokens: list[tuple] = []
    lit: list[str] = []

    def flush() -> None:
        if lit:
            tokens.append((LIT, "".join(lit)))
            lit.clear()

    i, n = 0, len(glob)
    while i < n:
        c = glob[i]
        if c == "\\" and i + 1 < n:
            lit.append(glob[i + 1])
            i += 2
        elif c == "*":
            j = i
            while j < n and glob[j] == "*":
                j += 1
            segment_start = i == 0 or glob[i - 1] == "/"
            segment_end = j == n or glob[j] == "/"
            if j - i >= 2 and segment_start and segment_end:
                flush()
                if j < n:
                    tokens.append((DIRS,))
                    j += 1  # the '/' belongs to DIRS
                else:
                    tokens.append((DSTAR,))
            else:
                flush()
                if not tokens or tokens[-1] != (STAR,):
                    tokens.append((STAR,))
            i = j
        elif c == "?":
            flush()
            tokens.append((ONE,))
            i += 1
        elif c == "[":
            cls, j = _class(glob, i + 1)
            if cls is None:
                lit.append(c)
                i += 1
            else:
                flush()
                tokens.append(cls)
                i = j
        else:
            lit.append(c)
            i += 1
    flush()
    return tuple(tokens)


def _class(glob: str, i: int) -> tuple[tuple | None, int]:
    n = len(glob)
    negate = i < n and glob[i] in "!^"
    if negate:
        i += 1
    chars: list[str] = []
    ranges: list[tuple[str, str]] = []
    first = True
    while i < n:
        c = glob[i]
        if c == "]" and not first:
            return (CLS, negate, "".join(chars), tuple(ranges)), i + 1
        if c == "\\" and i + 1 < n:
            c = glob[i + 1]
            i += 1
        if i + 2 < n and glob[i + 1] == "-" and glob[i + 2] != "]":
            ranges.append((c, glob[i + 2]))
            i += 3
        else:
            chars.append(c)
            i += 1
        first = False
    return None, i


def _match(tokens: tuple, k: int, s: str, i: int, left: list[int], failed: set) -> bool:
    n = len(s)
    while k < len(tokens):
        t = tokens[k]
        op = t[T_KIND]
        if op == LIT:
            _, text = t
            if not s.startswith(text, i):
                return False
            i += len(text)
        elif op == ONE:
            if i >= n or s[i] == "/":
                return False
            i += 1
        elif op == CLS:
            if i >= n or s[i] == "/":
                return False
            c = s[i]
            _, negate, chars, ranges = t
            hit = c in chars or any(lo <= c <= hi for lo, hi in ranges)
            if hit == negate:
                return False
            i += 1
        elif op == DSTAR:
            return True
        else:  # STAR or DIRS: where the rest could start is a choice; a failed one is remembered
            if failed and (k, i) in failed:
                return False
            if op == STAR:
                slash = s.find("/", i)
                end = n if slash < 0 else slash
                if k + 1 == len(tokens):
                    return end == n
                left[0] -= end - i + 1
                if left[0] < 0:
                    raise Exhausted
                found = any(_match(tokens, k + 1, s, j, left, failed) for j in range(i, end + 1))
            else:  # DIRS: nothing, or whole folders ending in '/'
                left[0] -= n - i + 1
                if left[0] < 0:
                    raise Exhausted
                found = _match(tokens, k + 1, s, i, left, failed) or any(
                    _match(tokens, k + 1, s, j + 1, left, failed) for j in range(i, n) if s[j] == "/"
                )
            if found:
                return True
            failed.add((k, i))
            return False
        k += 1
    return i == n
