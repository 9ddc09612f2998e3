"""Groom's judgement: which lessons graduate, which went stale, which need a person. Pure."""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from lessonbank.bank.lesson import Lesson, parse_destination
from lessonbank.kernel import globs

PROMOTE = "promote"
DELETE = "delete"
REVIEW = "needs-review"
WAIT = "wait"
SKIP = "skip"
OUTCOMES = (PROMOTE, DELETE, REVIEW, WAIT, SKIP)

# Evidence that a repository uses a tool: a file glob, optionally with a regex its text must match.
# A lesson about a tool with no evidence left is flagged: the repository may have moved on.
Evidence = tuple[str, str | None]
_PY: list[Evidence] = [("*.py", None), ("pyproject.toml", None), ("setup.py", None), ("setup.cfg", None)]
_JS: list[Evidence] = [("package.json", None)]
TOOL_EVIDENCE: dict[str, list[Evidence]] = {
    "pytest": [("test_*.py", None), ("*_test.py", None), ("conftest.py", None), ("pytest.ini", None),
               ("pyproject.toml", r"pytest"), ("setup.cfg", r"pytest"), ("tox.ini", r"pytest")],
    "python": _PY, "python3": _PY, "pip": _PY + [("requirements*.txt", None)],
    "mypy": _PY, "ruff": _PY, "black": _PY, "flake8": _PY, "pylint": _PY,
    "poetry": [("poetry.lock", None), ("pyproject.toml", r"tool\.poetry")],
    "uv": [("uv.lock", None), ("pyproject.toml", None)],
    "tox": [("tox.ini", None), ("pyproject.toml", r"tool\.tox")],
    "jest": [("jest.config.*", None), ("package.json", r'"jest"')],
    "vitest": [("vitest.config.*", None), ("package.json", r'"vitest"')],
    "mocha": [(".mocharc*", None), ("package.json", r'"mocha"')],
    "npm": _JS, "npx": _JS, "node": _JS + [("*.js", None), ("*.mjs", None), ("*.ts", None)],
    "yarn": [("yarn.lock", None), (".yarnrc*", None)],
    "pnpm": [("pnpm-lock.yaml", None), ("pnpm-workspace.yaml", None)],
    "bun": [("bun.lockb", None), ("bun.lock", None)],
    "tsc": [("tsconfig*.json", None)],
    "eslint": [(".eslintrc*", None), ("eslint.config.*", None), ("package.json", r"eslint")],
    "cargo": [("Cargo.toml", None)], "rustc": [("*.rs", None)],
    "go": [("go.mod", None), ("*.go", None)],
    "gradle": [("build.gradle*", None), ("gradlew", None), ("settings.gradle*", None)],
    "mvn": [("pom.xml", None)],
    "make": [("Makefile", None), ("makefile", None), ("GNUmakefile", None), ("*.mk", None)],
    "cmake": [("CMakeLists.txt", None)],
    "docker": [("Dockerfile*", None), ("*.dockerfile", None), ("docker-compose*.y*ml", None),
               ("compose*.y*ml", None)],
    "terraform": [("*.tf", None)], "helm": [("Chart.yaml", None)],
    "bundle": [("Gemfile", None)], "rspec": [("*_spec.rb", None), (".rspec", None)],
    "rake": [("Rakefile", None)], "mix": [("mix.exs", None)],
    "dotnet": [("*.csproj", None), ("*.fsproj", None), ("*.sln", None)],
    "swift": [("Package.swift", None), ("*.swift", None)],
    "flutter": [("pubspec.yaml", None)], "dart": [("pubspec.yaml", None)],
    "deno": [("deno.json", None), ("deno.jsonc", None)],
    "composer": [("composer.json", None)], "phpunit": [("phpunit.xml*", None)],
}  # fmt: skip


@dataclass(frozen=True)
class CommandResult:
    """The outcome of running a lesson's verify.command: pass, fail, timeout or error."""

    status: str
    detail: str = ""


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


@dataclass(frozen=True)
class Decision:
    """What groom does with one lesson, and why, in one line."""

    lesson_id: str
    slug: str
    outcome: str
    reason: str
    destination: str
    reasons: tuple[str, ...] = field(default=())


def decide(
    lessons: Sequence[Lesson],
    snapshot: Snapshot,
    min_seen: int = 2,
    run_command: Callable[[str], CommandResult] | None = None,
    tool_evidence: Mapping[str, Sequence[Evidence]] | None = None,
) -> list[Decision]:
    """One decision per lesson, sorted by slug: promote, delete, needs-review, wait or skip."""
    view = _RepoView(snapshot, TOOL_EVIDENCE if tool_evidence is None else tool_evidence)
    decisions = [_decide_one(lesson, view, min_seen, run_command) for lesson in lessons]
    return sorted(decisions, key=lambda d: (d.slug, d.lesson_id))


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _one_line(reasons: list[str]) -> str:
    first = " ".join(reasons[0].split())
    return first if len(reasons) == 1 else f"{first} (and {len(reasons) - 1} more)"


def _decision(lesson: Lesson, outcome: str, reasons: list[str]) -> Decision:
    return Decision(lesson.id, lesson.slug, outcome, _one_line(reasons), lesson.promote_to, tuple(reasons))


def _decide_one(
    lesson: Lesson,
    view: _RepoView,
    min_seen: int,
    run_command: Callable[[str], CommandResult] | None,
) -> Decision:
    if lesson.status == "disabled":
        return _decision(lesson, SKIP, ["status is disabled: left alone"])
    if lesson.seen < min_seen:
        seen = _plural(lesson.seen, "session")
        return _decision(lesson, WAIT, [f"seen in {seen}; groom waits for {min_seen}"])
    stale: list[str] = []
    unsure: list[str] = []
    passed: list[str] = []
    try:
        parse_destination(lesson.promote_to)
    except ValueError as exc:
        unsure.append(str(exc))
    _check_verify(lesson, view, stale, unsure, passed)
    command = lesson.verify.get("command")
    if command and run_command is None:
        passed.append("verify.command not run (pass --run-commands)")
    elif command and run_command is not None:
        result = run_command(str(command))
        detail = f": {result.detail}" if result.detail else ""
        {"pass": passed, "fail": stale}.get(result.status, unsure).append(
            "verify.command passes" if result.status == "pass"
            else f"verify.command {'failed' if result.status == 'fail' else result.status}{detail}"
        )  # fmt: skip
    _check_triggers(lesson, view, unsure)
    _check_anchors(lesson, view, unsure)
    if stale:
        return _decision(lesson, DELETE, stale + unsure)
    if unsure:
        return _decision(lesson, REVIEW, unsure)
    seen = f"seen in {_plural(lesson.seen, 'session')}"
    checked = [p for p in passed if not p.startswith("verify.command not run")]
    if checked:
        return _decision(lesson, PROMOTE, [f"{seen}; re-verified: {', '.join(passed)}"])
    note = "; verify.command not run" if passed else ""
    return _decision(lesson, PROMOTE, [f"{seen}; nothing in the code contradicts it (no verify checks){note}"])


def _str_list(value: object) -> list[str]:
    if value is None or value == "":
        return []
    if isinstance(value, (list, tuple)):
        return [str(v) for v in value]
    return [str(value)]


def _check_verify(
    lesson: Lesson, view: _RepoView, stale: list[str], unsure: list[str], passed: list[str]
) -> None:
    verify = lesson.verify
    paths = _str_list(verify.get("paths"))
    missing = [p for p in paths if not view.exists(p)]
    for path in missing:
        stale.append(f"verify path {path} no longer exists")
    if paths and not missing:
        passed.append("1 path exists" if len(paths) == 1 else f"{len(paths)} paths exist")
    globs = _str_list(verify.get("glob"))
    where = f" under {', '.join(globs)}" if globs else ""
    match = _str_list(verify.get("match"))
    absent = _str_list(verify.get("absent"))
    found_match = 0
    for pattern in match:
        hit = _search(view, pattern, globs, unsure, "match")
        if hit is False:
            stale.append(f"verify.match `{pattern}` no longer matches any tracked file{where}")
        elif hit:
            found_match += 1
    if found_match:
        passed.append(_plural(found_match, "pattern") + " still found")
    if absent:
        hits = [_search(view, pattern, globs, unsure, "absent") for pattern in absent]
        if all(h is False for h in hits):
            shown = ", ".join(f"`{p}`" for p in absent)
            stale.append(f"the pitfall is gone: verify.absent {shown} matches no tracked file{where}")
        elif any(hits):
            passed.append("the pitfall is still present")


def _search(view: _RepoView, pattern: str, globs: list[str], unsure: list[str], key: str) -> bool | None:
    """True/False when the pattern does/does not match; None (with a reason) when it cannot run."""
    try:
        compiled = _compile(pattern)
    except re.error as exc:
        unsure.append(f"verify.{key} `{pattern}` does not compile: {exc}")
        return None
    return view.search(compiled, globs)


@lru_cache(maxsize=4096)
def _compile(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.MULTILINE)


def _check_triggers(lesson: Lesson, view: _RepoView, unsure: list[str]) -> None:
    for glob in lesson.paths:
        if not view.any_path(glob):
            unsure.append(f"trigger path `{glob}` matches no tracked file")
    tools = sorted(lesson_tools(lesson, view.evidence))
    # Alternatives such as (npm|yarn) are common: flag only when none of the tools is in use.
    if tools and not any(view.uses(tool) for tool in tools):
        names = ", ".join(tools)
        unsure.append(f"the lesson is about {names}; no tracked file shows this repository uses it")


def lesson_tools(lesson: Lesson, known: Iterable[str] = TOOL_EVIDENCE) -> set[str]:
    """Known tools a lesson is about: its `tool:` tags and the words of its command triggers."""
    names = set(known)
    found = {tag.partition(":")[2].lower() for tag in lesson.tags if tag.lower().startswith("tool:")}
    for pattern in lesson.commands:
        # Drop escapes such as \b, \s so `\bpytest\b` reads as the word pytest.
        words = re.split(r"[^A-Za-z0-9_-]+", re.sub(r"\\[A-Za-z]", " ", pattern))
        found.update(w.lower() for w in words if w)
    return found & names


def anchors(lesson: Lesson) -> list[str]:
    """Files the lesson names outright: verify paths and trigger paths without wildcards."""
    named = _str_list(lesson.verify.get("paths")) + [p for p in lesson.paths if not _has_magic(p)]
    return sorted({p.strip("/") for p in named if p.strip("/")})


def _check_anchors(lesson: Lesson, view: _RepoView, unsure: list[str]) -> None:
    commit = str((lesson.verified or {}).get("commit") or "").strip()
    if not commit:
        return
    named = anchors(lesson)
    if not named:
        return
    changed = view.snapshot.changed_since(commit)
    short = commit[:7]
    if changed is None:
        unsure.append(f"verified.commit {short} is not in this repository; check the lesson again")
        return
    # A named folder is touched when any file under it changed; files are a set lookup.
    touched = [
        a for a in named
        if a in changed or (not view.is_file(a) and any(c.startswith(a + "/") for c in changed))
    ]  # fmt: skip
    if touched:
        files = ", ".join(touched)
        unsure.append(f"{files} changed since the lesson was verified at {short}; check it still holds")


# --- The repository view: glob matching and content search, cached for a thousand lessons. ---


def _has_magic(glob: str) -> bool:
    return any(ch in glob for ch in "*?[")


# ASCII folding that keeps every offset, plus the four non-ASCII letters re.IGNORECASE folds
# onto ASCII ones (İ ı ſ K), so a folded literal search never misses what the regex would match.
_LOWER = str.maketrans(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZ\u0130\u0131\u017f\u212a", "abcdefghijklmnopqrstuvwxyziisk"
)
_SEP = "\n\0\n"


class _RepoView:
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
        """Paths matching `glob` with the hooks' semantics (hot.globs); a literal search finds candidates."""
        compiled = globs.compile_glob(glob)
        name_only, alternatives = compiled
        keys = {max(globs.literals(tokens), key=len, default="") for tokens in alternatives}
        if "" in keys:
            candidates: Iterable[int] = range(len(self.paths))
        else:
            candidates = sorted({i for key in keys for i in self._lines_with(key)})
        found: set[str] = set()
        for i in candidates:
            path = self.paths[i]
            if globs.match(compiled, path):
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
                if files and (pattern is None or self.search(_compile(pattern), None, files)):
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
        allowed: set[str] | None = None
        if globs:
            allowed = set()
            for glob in globs:
                allowed |= self.matching(glob)
        if only is not None:
            allowed = set(only) if allowed is None else allowed & only
        if allowed is not None and not allowed:
            return False
        return self.corpus().search(rx, allowed)


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

    def search(self, rx: re.Pattern[str], allowed: set[str] | None) -> bool:
        literal, fold = required_literal(rx.pattern)
        if literal:
            return self._search_literal(rx, allowed, literal, fold)
        if allowed is None:
            indexes: Iterable[int] = range(len(self.names))
        else:
            indexes = (self.index[name] for name in sorted(allowed) if name in self.index)
        return any(rx.search(self.text, self.starts[i], self.ends[i]) for i in indexes)

    def _search_literal(self, rx: re.Pattern[str], allowed: set[str] | None, literal: str, fold: bool) -> bool:
        # Find the literal the regex cannot match without, then run the regex in that file only.
        haystack = self.lower() if fold else self.text
        needle = literal.translate(_LOWER) if fold else literal
        pos = 0
        while True:
            pos = haystack.find(needle, pos)
            if pos < 0:
                return False
            i = bisect.bisect_right(self.starts, pos) - 1
            if (allowed is None or self.names[i] in allowed) and rx.search(
                self.text, self.starts[i], self.ends[i]
            ):
                return True
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


_TOOL_NAME_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")


def tool_skill_offers(lessons: Sequence[Lesson], threshold: int = 5) -> list[tuple[str, list[str]]]:
    """Tools whose `tool:` tag is on at least `threshold` lessons not yet bound for that tool's skill."""
    groups: dict[str, set[str]] = {}
    for lesson in lessons:
        if lesson.status == "disabled":
            continue
        for tag in lesson.tags:
            category, _, tool = tag.partition(":")
            tool = tool.strip().lower()
            if category.strip().lower() != "tool" or len(tool) > 64 or not _TOOL_NAME_RE.match(tool):
                continue
            if lesson.promote_to.strip() != f"skill:{tool}":
                groups.setdefault(tool, set()).add(lesson.slug)
    return [(tool, sorted(slugs)) for tool, slugs in sorted(groups.items()) if len(slugs) >= threshold]
