"""The code groom checks lessons against: a snapshot of the repository, and fast questions about it.

A `Snapshot` is the committed tree as lessons name it: the tracked paths, their text on demand and
the paths changed since a commit. `RepoView` answers what the checks of a thousand lessons ask of
five thousand files (does this path exist, which paths match this glob, does this regex match any
file, does the repository use this tool), cached, with globs matched by the hooks' own matcher and
every file's text joined into one string so a regex is one C-speed scan guided by the literal it
cannot match without. Pure: it reads nothing itself; `plan` builds the snapshot from git HEAD.
It imports the standard-library packages only.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from lessonbank.matching import globs

# Evidence that a repository uses a tool: a file glob, optionally with a regex its text must match.
Evidence = tuple[str, str | None]


@dataclass
class Snapshot:
    """The repository as groom sees it: committed paths, their text on demand, history on demand."""

    tracked: Sequence[str]
    contents: Callable[[Sequence[str]], Mapping[str, str]]
    changed_since: Callable[[str], frozenset[str] | None] = lambda _commit: None
    head: str | None = None

    @classmethod
    def from_files(
        cls,
        files: Mapping[str, str],
        changed: Mapping[str, Iterable[str]] | None = None,
        head: str | None = None,
    ) -> Snapshot:
        """A snapshot over in-memory files; `changed` maps a commit to the paths changed since."""
        known = {k: frozenset(v) for k, v in (changed or {}).items()}
        return cls(
            tracked=sorted(files),
            contents=lambda paths: {p: files[p] for p in paths if p in files},
            changed_since=lambda commit: known.get(commit),
            head=head,
        )


@lru_cache(maxsize=4096)
def compile_pattern(pattern: str) -> re.Pattern[str]:
    """`pattern` compiled as verify checks read it (multiline), cached across lessons."""
    return re.compile(pattern, re.MULTILINE)


# ASCII folding that keeps every offset, plus the four non-ASCII letters re.IGNORECASE folds
# onto ASCII ones (İ ı ſ K), so a folded literal search never misses what the regex would match.
_LOWER = str.maketrans(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZ\u0130\u0131\u017f\u212a", "abcdefghijklmnopqrstuvwxyziisk"
)
_SEP = "\n\0\n"


class RepoView:
    """Cached questions about a snapshot: path existence, glob matches, regex hits in file text."""

    def __init__(self, snapshot: Snapshot, evidence: Mapping[str, Sequence[Evidence]]) -> None:
        self.snapshot = snapshot
        self.evidence = evidence
        self.paths = sorted(snapshot.tracked)
        self._path_set = set(self.paths)
        self._joined = "\n".join(self.paths)
        self._starts = list(itertools.accumulate((len(p) + 1 for p in self.paths[:-1]), initial=0))
        self._globs: dict[str, frozenset[str]] = {}
        self._uses: dict[str, bool] = {}
        self._corpus: _Corpus | None = None

    def is_file(self, path: str) -> bool:
        return path in self._path_set

    def exists(self, path: str) -> bool:
        path = path.strip().strip("/")
        if path.startswith("./"):
            path = path[2:]
        if path in self._path_set:
            return True
        i = bisect.bisect_left(self.paths, path + "/")
        return i < len(self.paths) and self.paths[i].startswith(path + "/")

    def _glob(self, glob: str, first_only: bool) -> frozenset[str]:
        """Paths matching `glob` with the hooks' semantics (matching.globs); a literal search finds candidates."""
        try:
            compiled = globs.compile_glob(glob)
        except globs.GlobError:  # too many brace alternatives: `bank check` names it
            return frozenset()
        name_only, alternatives = compiled
        keys = {max(globs.literals(tokens), key=len, default="") for tokens in alternatives}
        if "" in keys:
            candidates: Iterable[int] = range(len(self.paths))
        else:
            candidates = sorted({i for key in keys for i in self._lines_with(key)})
        found: set[str] = set()
        for i in candidates:
            path = self.paths[i]
            try:
                matched = globs.match(compiled, path)
            except globs.Exhausted:  # a glob too costly for this path counts as not matching it
                continue
            if matched:
                found.add(path)
                if first_only:
                    break
        return frozenset(found)

    def _lines_with(self, key: str) -> Iterator[int]:
        """Indexes of the paths containing `key`, found by C-speed search of all paths joined."""
        pos = self._joined.find(key)
        while pos >= 0:
            i = bisect.bisect_right(self._starts, pos) - 1
            yield i
            pos = self._joined.find(key, self._starts[i + 1] if i + 1 < len(self._starts) else len(self._joined))

    def matching(self, glob: str) -> frozenset[str]:
        if glob not in self._globs:
            self._globs[glob] = self._glob(glob, first_only=False)
        return self._globs[glob]

    def any_path(self, glob: str) -> bool:
        return bool(self._globs[glob] if glob in self._globs else self._glob(glob, first_only=True))

    def uses(self, tool: str) -> bool:
        if tool not in self._uses:
            found = False
            for glob, pattern in self.evidence.get(tool, ()):
                files = self.matching(glob)
                if files and (pattern is None or self.search(compile_pattern(pattern), None, files)):
                    found = True
                    break
            self._uses[tool] = found
        return self._uses[tool]

    def corpus(self) -> _Corpus:
        if self._corpus is None:
            self._corpus = _Corpus(self.snapshot.contents(self.paths))
        return self._corpus

    def search(
        self, rx: re.Pattern[str], globs: Sequence[str] | None, only: frozenset[str] | None = None
    ) -> bool:
        return self.find(rx, globs, only) is not None

    def find(
        self, rx: re.Pattern[str], globs: Sequence[str] | None, only: frozenset[str] | None = None
    ) -> str | None:
        """The first tracked file (by path) whose text `rx` matches, or None."""
        allowed: set[str] | None = None
        if globs:
            allowed = set()
            for glob in globs:
                allowed |= self.matching(glob)
        if only is not None:
            allowed = set(only) if allowed is None else allowed & only
        if allowed is not None and not allowed:
            return None
        return self.corpus().find(rx, allowed)


class _Corpus:
    """Every text file joined into one string, so a search is a C-speed scan, not 5,000 calls."""

    def __init__(self, files: Mapping[str, str]) -> None:
        self.names = sorted(files)
        self.index = {name: i for i, name in enumerate(self.names)}
        parts: list[str] = []
        self.starts: list[int] = []
        self.ends: list[int] = []
        pos = 0
        for name in self.names:
            text = files[name].replace("\0", " ")
            self.starts.append(pos)
            self.ends.append(pos + len(text))
            parts.append(text)
            pos += len(text) + len(_SEP)
        self.text = _SEP.join(parts)
        self._lower: str | None = None

    def lower(self) -> str:
        if self._lower is None:
            self._lower = self.text.translate(_LOWER)
        return self._lower

    def find(self, rx: re.Pattern[str], allowed: set[str] | None) -> str | None:
        """The first file, in path order, whose text `rx` matches (a match never spans two files)."""
        literal, fold = required_literal(rx.pattern)
        if literal:
            return self._find_literal(rx, allowed, literal, fold)
        if allowed is None:
            indexes: Iterable[int] = range(len(self.names))
        else:
            indexes = (self.index[name] for name in sorted(allowed) if name in self.index)
        return next((self.names[i] for i in indexes if rx.search(self.text, self.starts[i], self.ends[i])), None)

    def _find_literal(self, rx: re.Pattern[str], allowed: set[str] | None, literal: str, fold: bool) -> str | None:
        # Find the literal the regex cannot match without, then run the regex in that file only.
        haystack = self.lower() if fold else self.text
        needle = literal.translate(_LOWER) if fold else literal
        pos = 0
        while True:
            pos = haystack.find(needle, pos)
            if pos < 0:
                return None
            i = bisect.bisect_right(self.starts, pos) - 1
            if (allowed is None or self.names[i] in allowed) and rx.search(
                self.text, self.starts[i], self.ends[i]
            ):
                return self.names[i]
            pos = self.ends[i] + 1


@lru_cache(maxsize=4096)
def required_literal(pattern: str) -> tuple[str, bool]:
    """The longest run of plain characters every match of `pattern` contains, and whether case folds.

    Returns ('', False) when there is none worth searching for (under 3 characters).
    """
    try:
        from re import _parser  # type: ignore[attr-defined]

        parsed = _parser.parse(pattern, re.MULTILINE)
    except Exception:  # noqa: BLE001 - a private module: without it, no shortcut, same answer
        return "", False
    fold = bool(parsed.state.flags & re.IGNORECASE)
    best = _best_run(list(parsed), _parser)
    if len(best) < 3 or (fold and not best.isascii()):
        return "", False
    return best, fold


def _best_run(items: list[tuple[Any, Any]], parser: Any) -> str:
    literal_op = parser.LITERAL
    subpattern_op = parser.SUBPATTERN
    best = ""
    run: list[str] = []
    for op, arg in items:
        if op is literal_op:
            run.append(chr(arg))
            continue
        if len("".join(run)) > len(best):
            best = "".join(run)
        run = []
        if op is subpattern_op:
            _group, add_flags, del_flags, sub = arg
            if not (add_flags | del_flags) & re.IGNORECASE:
                inner = _best_run(list(sub), parser)
                if len(inner) > len(best):
                    best = inner
    if len("".join(run)) > len(best):
        best = "".join(run)
    return best
