"""Groom's judgement: which lessons graduate, which went stale, which need a person.

One `Decision` per lesson (promote, delete, needs-review, wait or skip) with its reasons in words a
person can check, each naming the check it ran and what it found (`verify.match `x` found in a.py`,
`verify.paths 2 of 2 tracked`): seen often enough, verify paths and patterns still found (or the pitfall gone),
trigger globs and tools still in use, named files untouched since the lesson was verified, and
verify.command when the caller passes a runner. Pure: the code it checks against comes in as a
`snapshot.Snapshot` and is questioned through its `RepoView`. It also names the tools with enough
lessons to offer a skill of their own. It imports `bank.lesson` and `groom.snapshot`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from lessonbank.bank.anchors import defined, mentions
from lessonbank.bank.lesson import Lesson
from lessonbank.bank.names import parse_destination
from lessonbank.groom.snapshot import Evidence, RepoView, Snapshot, compile_pattern

PROMOTE = "promote"
DELETE = "delete"
REVIEW = "needs-review"
WAIT = "wait"
SKIP = "skip"
OUTCOMES = (PROMOTE, DELETE, REVIEW, WAIT, SKIP)

# Evidence that a repository uses each tool (see snapshot.Evidence). A lesson about a tool with
# no evidence left is flagged: the repository may have moved on.
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
    view = RepoView(snapshot, TOOL_EVIDENCE if tool_evidence is None else tool_evidence)
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
    view: RepoView,
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
    if not any(lesson.verify.get(k) for k in ("paths", "match", "absent", "defines")):
        _check_mentions(lesson, view, unsure, passed)  # no anchor stored: what its words name, read now
    command = lesson.verify.get("command")
    not_run = ""
    if command and run_command is None:
        not_run = "verify.command not run (pass --run-commands)"
    elif command and run_command is not None:
        result = run_command(str(command))
        detail = f" ({result.detail})" if result.detail else ""
        {"pass": passed, "fail": stale}.get(result.status, unsure).append(
            f"verify.command `{command}` passes{detail}" if result.status == "pass"
            else f"verify.command `{command}` {'failed' if result.status == 'fail' else result.status}{detail}"
        )  # fmt: skip
    _check_triggers(lesson, view, unsure)
    _check_anchors(lesson, view, unsure)
    if stale:
        return _decision(lesson, DELETE, stale + unsure)
    if unsure:
        return _decision(lesson, REVIEW, unsure)
    seen = f"seen in {_plural(lesson.seen, 'session')}"
    if passed:
        return _decision(lesson, PROMOTE, [f"{seen}; re-verified: {'; '.join(passed + ([not_run] if not_run else []))}"])
    # No check ran. Promoting a lesson because nothing contradicts it is how unmergeable rules were
    # made, whoever wrote it: it waits until it names something to check, or a person vouches for it.
    why = f"no check ran: {not_run}" if not_run else "nothing to check"
    by = str((lesson.verified or {}).get("by") or "").strip()
    if by:
        return _decision(lesson, PROMOTE, [f"{seen}; {why}; vouched for by {by}"])
    return _decision(lesson, WAIT, [
        f"{why}: it names no file, script, key or code the repository holds; it waits for a verify check "
        "or a person's `verified: {by: <name>}`"
    ])  # fmt: skip


def _str_list(value: object) -> list[str]:
    if value is None or value == "":
        return []
    if isinstance(value, (list, tuple)):
        return [str(v) for v in value]
    return [str(value)]


def _check_verify(
    lesson: Lesson, view: RepoView, stale: list[str], unsure: list[str], passed: list[str]
) -> None:
    """Each check appends one clause naming itself and its result: found where, or gone."""
    verify = lesson.verify
    paths = _str_list(verify.get("paths"))
    missing = [p for p in paths if not view.exists(p)]
    for path in missing:
        stale.append(f"verify.paths {path} is no longer tracked")
    if paths and not missing:
        passed.append(f"verify.paths {len(paths)} of {len(paths)} tracked")
    globs = _str_list(verify.get("glob"))
    where = f" under {', '.join(globs)}" if globs else ""
    for pattern in _str_list(verify.get("match")):
        hit = _find(view, pattern, globs, unsure, "match")
        if hit == "":
            stale.append(f"verify.match `{pattern}` no longer matches any tracked file{where}")
        elif hit:
            passed.append(f"verify.match `{pattern}` found in {hit}")
    for item in _str_list(verify.get("defines")):
        file, _, name = item.partition(":")
        text = view.snapshot.contents([file]).get(file) if view.is_file(file) else None
        if text is None:
            stale.append(f"verify.defines {file} is no longer tracked (it defined `{name}`)")
        elif defined(file, text, name):
            passed.append(f"verify.defines `{name}` still defined in {file}")
        else:
            stale.append(f"verify.defines `{name}` is no longer defined in {file}")
    absent = _str_list(verify.get("absent"))
    if absent:
        hits = [(pattern, _find(view, pattern, globs, unsure, "absent")) for pattern in absent]
        if all(h == "" for _, h in hits):
            shown = ", ".join(f"`{p}`" for p in absent)
            stale.append(f"the pitfall is gone: verify.absent {shown} matches no tracked file{where}")
        else:
            passed += [f"verify.absent `{p}` still found in {h} (the pitfall remains)" for p, h in hits if h]


def _find(view: RepoView, pattern: str, globs: list[str], unsure: list[str], key: str) -> str | None:
    """The first file the pattern matches, '' when none does, None (with a reason) when it cannot run."""
    try:
        compiled = compile_pattern(pattern)
    except re.error as exc:
        unsure.append(f"verify.{key} `{pattern}` does not compile: {exc}")
        return None
    return view.find(compiled, globs) or ""


_NEGATED = re.compile(r"(?i)\b(?:no|not|don'?t|never|instead of|rather than|missing)\b[^.;\n]{0,30}$")


def _check_mentions(lesson: Lesson, view: RepoView, unsure: list[str], passed: list[str]) -> None:
    """For a lesson with no verify anchor: the scripts it tells to run and the paths it names, as they are now."""
    text = "\n".join((lesson.title, lesson.when, lesson.do))
    for mention in mentions(text):
        at = text.find(mention.name)
        if at >= 0 and _NEGATED.search(text[max(0, at - 40) : at]):
            continue  # "there is no `lint` script": naming what is absent is the lesson
        if mention.kind == "path" and "/" in mention.name:
            name = mention.name.removeprefix("./")
            (passed if view.exists(name) else unsure).append(
                f"names {name}, {'tracked' if view.exists(name) else 'which is not tracked (gone, or never there)'}")
        elif mention.kind == "script":
            files = [p for p in view.paths if p.rsplit("/", 1)[-1] == ("Makefile" if mention.runner == "make" else "package.json")]
            texts = view.snapshot.contents(files[:20]) if files else {}
            where = next((f for f, t in sorted(texts.items()) if defined(f, t, mention.name)), "")
            if where:
                passed.append(f"`{mention.name}` still defined in {where}")
            elif files:
                unsure.append(f"names `{mention.runner} {mention.name}`, but no {files[0].rsplit('/', 1)[-1]} defines `{mention.name}` now")


def _check_triggers(lesson: Lesson, view: RepoView, unsure: list[str]) -> None:
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


def _check_anchors(lesson: Lesson, view: RepoView, unsure: list[str]) -> None:
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


def _has_magic(glob: str) -> bool:
    return any(ch in glob for ch in "*?[")


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
