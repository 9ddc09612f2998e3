"""A lesson: one markdown file with YAML frontmatter. Its field list, parsing, rendering, validation.

`KEY_ORDER` (with `TRIGGER_KEYS`) is the lesson's field list, written once. The dataclasses hold
those fields as attributes (`attribute(key)`; the four trigger lists sit flat): `LessonContent`,
what a lesson says, which capture's `Draft` extends too, and `Lesson`, which adds what the bank
keeps; `to_mapping` writes them in KEY_ORDER. Line-preserving edits live in `bank.frontmatter_edit`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date
from typing import Any

import yaml

from lessonbank.bank.fields import SOURCES, STATUSES, TYPES
from lessonbank.bank.names import parse_destination, windows_reserved
from lessonbank.errors import LessonFormatError
from lessonbank.matching import globs, regex_hazard


class _Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """YAML's safe loader (libyaml's C parser where present: about 10x faster on 1,000 lessons)
    that refuses what the tool could not edit back faithfully: a key given twice (the tool's line
    edits would change one copy while YAML reads the other) and a date that is no date."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[object, int] = {}
        for key_node, _ in node.value:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else id(key_node)
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"the key {key!r} is given twice (first on line {seen[key] + 2}): keep one",
                    key_node.start_mark,
                )
            seen[key] = key_node.start_mark.line
        return super().construct_mapping(node, deep=deep)

    def construct_yaml_timestamp(self, node: yaml.ScalarNode) -> object:
        try:
            return super().construct_yaml_timestamp(node)
        except ValueError as exc:
            raise yaml.constructor.ConstructorError(
                None, None, f"{node.value!r} is not a real date ({exc}): write it as YYYY-MM-DD", node.start_mark
            ) from None


_Loader.add_constructor("tag:yaml.org,2002:timestamp", _Loader.construct_yaml_timestamp)
_LOADER = _Loader

TOOLS = (
    "Bash", "Read", "Edit", "Write", "MultiEdit", "Glob", "Grep", "NotebookEdit",
    "WebFetch", "WebSearch", "Task",
)  # fmt: skip

# The lesson's fields, as frontmatter keys in the order the tool writes them; unknown keys a person
# added follow. `triggers` is a mapping of TRIGGER_KEYS; `guard`, `verified` and `verify` are written
# when set (`guard: true`: a person asks that a call it matches be held back until the agent has read it).
KEY_ORDER = (
    "id", "slug", "title", "type", "when", "do", "promote-to", "triggers", "guard", "tags",
    "seen", "sessions", "priority", "confidence", "source", "status",
    "created", "updated", "verified", "verify",
)  # fmt: skip
TRIGGER_KEYS = ("tools", "commands", "paths", "keywords")
_WRITTEN_WHEN_SET = ("guard", "verified", "verify")
VERIFY_KEYS = ("paths", "match", "absent", "glob", "defines", "command")

_NAME_RE = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}$")


@dataclass(kw_only=True)
class LessonContent:
    """What a lesson says, as whoever proposes it writes it; capture's `Draft` extends it too.

    A `Lesson` adds what the bank keeps (id, slug, seen, sessions, status, dates, verified). The
    priority and confidence are set on a lesson but optional on a draft, so each declares its own.
    """

    title: str
    when: str
    do: str
    promote_to: str
    type: str = "gotcha"
    tools: list[str] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    keywords: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    source: str = "typed"
    verify: dict[str, Any] = field(default_factory=dict)
    body: str = ""


@dataclass(kw_only=True)
class Lesson(LessonContent):
    """A lesson's fields. `extra` holds keys a person added that the tool does not know."""

    id: str
    slug: str
    seen: int = 1
    sessions: list[str] = field(default_factory=list)
    priority: int = 5
    confidence: float = 0.7
    status: str = "active"
    created: str = ""
    updated: str = ""
    verified: dict[str, Any] = field(default_factory=dict)
    guard: bool = False
    extra: dict[str, Any] = field(default_factory=dict)

    def summary(self) -> str:
        """The one-line form, used when the full lesson does not fit a budget."""
        return f"{self.title}: {self.do}" if len(self.do) <= 100 else self.title

    def full(self) -> str:
        """The lesson as handed to an agent: the situation and what to do."""
        return f"{self.title}. When {_lower_first(self.when)}: {self.do}"

    def to_mapping(self) -> dict[str, Any]:
        """The frontmatter mapping in the stable key order (KEY_ORDER), unknown keys last."""
        data: dict[str, Any] = {}
        for key in KEY_ORDER:
            if key == "triggers":
                data[key] = {name: list(getattr(self, name)) for name in TRIGGER_KEYS}
                continue
            value = getattr(self, attribute(key))
            if key in _WRITTEN_WHEN_SET and not value:
                continue
            data[key] = value.copy() if isinstance(value, (list, dict)) else value
        data.update(self.extra)
        return data


def attribute(key: str) -> str:
    """The Lesson (and Draft) attribute that holds a frontmatter key: `promote-to` -> `promote_to`."""
    return key.replace("-", "_")


def _lower_first(text: str) -> str:
    text = text.strip().rstrip(".")
    if text[:1].isupper() and not text[1:2].isupper():
        return text[:1].lower() + text[1:]
    return text


def split_frontmatter(text: str) -> tuple[str, str, int]:
    """Split a lesson file into (frontmatter YAML, body, line number where the body starts)."""
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].rstrip("\r\n") != "---":
        raise LessonFormatError("no frontmatter: the file must start with a '---' line", 1)
    for i in range(1, len(lines)):
        if lines[i].rstrip("\r\n") in ("---", "..."):
            return "".join(lines[1:i]), "".join(lines[i + 1 :]), i + 2
    raise LessonFormatError("frontmatter is not closed: add a '---' line after it", len(lines))


def _str_list(value: Any, key: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if not isinstance(value, list) or not all(isinstance(v, (str, int, float)) for v in value):
        raise LessonFormatError(f"{key} must be a list of strings")
    return [str(v) for v in value]


def parse(text: str) -> Lesson:
    """Parse a lesson file's text. Raises LessonFormatError with a line number."""
    front, body, _ = split_frontmatter(text)
    try:
        data = yaml.load(front, Loader=_LOADER)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = (mark.line + 2) if mark is not None else 1
        raise LessonFormatError(f"frontmatter is not valid YAML: {_yaml_problem(exc)}", line) from None
    if not isinstance(data, dict):
        raise LessonFormatError("frontmatter must be a mapping of keys to values", 2)
    return from_mapping(data, body)


def _yaml_problem(exc: yaml.YAMLError) -> str:
    problem = getattr(exc, "problem", None)
    return str(problem) if problem else str(exc).splitlines()[0]


def from_mapping(data: dict[str, Any], body: str = "") -> Lesson:
    """Build a Lesson from a frontmatter mapping, checking types (not values)."""
    missing = [k for k in ("id", "slug", "when", "do") if not data.get(k)]
    if missing:
        raise LessonFormatError(f"missing required field(s): {', '.join(missing)}")
    triggers = data.get("triggers") or {}
    if not isinstance(triggers, dict):
        raise LessonFormatError("triggers must be a mapping (tools, commands, paths, keywords)")
    for key in ("verified", "verify"):
        if data.get(key) is not None and not isinstance(data.get(key), dict):
            raise LessonFormatError(f"{key} must be a mapping")
    if data.get("guard") is not None and not isinstance(data.get("guard"), bool):
        raise LessonFormatError("guard must be true or false")
    try:
        seen = int(data.get("seen", 1) or 0)
        priority = int(data.get("priority", 5))
        confidence = float(data.get("confidence", 0.7))
    except (TypeError, ValueError):
        raise LessonFormatError("seen and priority must be whole numbers, confidence a number") from None
    known = set(KEY_ORDER)
    lesson = Lesson(
        id=str(data["id"]),
        slug=str(data["slug"]),
        title=str(data.get("title") or data["slug"]),
        when=str(data["when"]).strip(),
        do=str(data["do"]).strip(),
        promote_to=str(data.get("promote-to") or ""),
        type=str(data.get("type") or "gotcha"),
        tools=_str_list(triggers.get("tools"), "triggers.tools"),
        commands=_str_list(triggers.get("commands"), "triggers.commands"),
        paths=_str_list(triggers.get("paths"), "triggers.paths"),
        keywords=_str_list(triggers.get("keywords"), "triggers.keywords"),
        tags=_str_list(data.get("tags"), "tags"),
        seen=seen,
        sessions=_str_list(data.get("sessions"), "sessions"),
        priority=priority,
        confidence=confidence,
        source=str(data.get("source") or "typed"),
        status=str(data.get("status") or "active"),
        created=_date_str(data.get("created")),
        updated=_date_str(data.get("updated")),
        verified=dict(data.get("verified") or {}),
        verify=dict(data.get("verify") or {}),
        guard=data.get("guard") is True,
        body=body,
        extra={k: v for k, v in data.items() if k not in known},
    )
    return lesson


def _date_str(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, date):
        return value.isoformat()
    return str(value)


class _Dumper(yaml.SafeDumper):
    """Flow style for short scalar lists, block style for mappings; never sorts keys."""


def _repr_list(dumper: yaml.SafeDumper, data: list[Any]) -> yaml.Node:
    flow = all(not isinstance(v, (dict, list)) for v in data)
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=flow)


def _repr_str(dumper: yaml.SafeDumper, data: str) -> yaml.Node:
    return dumper.represent_scalar("tag:yaml.org,2002:str", data)


_Dumper.add_representer(list, _repr_list)
_Dumper.add_representer(str, _repr_str)


def dump_frontmatter(data: dict[str, Any]) -> str:
    """YAML for a frontmatter mapping: stable order as given, unicode kept, no line folding."""
    out = yaml.dump(
        data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=10_000, default_flow_style=False
    )
    return str(out)


def render(lesson: Lesson) -> str:
    """The whole file text of a lesson: frontmatter, body, one final newline."""
    body = lesson.body.strip("\n")
    text = "---\n" + dump_frontmatter(lesson.to_mapping()) + "---\n"
    if body:
        text += "\n" + body + "\n"
    return text


def validate(lesson: Lesson) -> list[tuple[str, str]]:
    """Every problem with a parsed lesson's values, as (field, message) pairs."""
    problems: list[tuple[str, str]] = []
    if not _NAME_RE.match(lesson.slug):
        problems.append(("slug", f"slug {lesson.slug!r} must be a-z, 0-9 and '-' (1-64 chars)"))
    elif windows_reserved(lesson.slug):
        problems.append(("slug", f"slug {lesson.slug!r} is a name Windows reserves for a device: rename it"))
    if lesson.type not in TYPES:
        problems.append(("type", f"type {lesson.type!r} must be one of {', '.join(TYPES)}"))
    try:
        parse_destination(lesson.promote_to)
    except ValueError as exc:
        problems.append(("promote-to", str(exc)))
    for i, pattern in enumerate(lesson.commands):
        message = _regex_problem(pattern)
        if message:
            problems.append(("commands", f"triggers.commands[{i}] {pattern!r}{message}"))
    for i, glob in enumerate(lesson.paths):
        message = glob_problem(glob)
        if message:
            problems.append(("paths", f"triggers.paths[{i}] {glob!r}: {message}"))
    for tool in lesson.tools:
        if tool not in TOOLS and not tool.startswith("mcp__"):
            problems.append(("tools", f"triggers.tools: unknown tool {tool!r} ({', '.join(TOOLS)})"))
    for tag in lesson.tags:
        cat, sep, val = tag.partition(":")
        if not sep or not cat or not val:
            problems.append(("tags", f"tag {tag!r} must be category:value, e.g. tool:pytest"))
    if lesson.seen < 0:
        problems.append(("seen", "seen must be 0 or more"))
    if not 1 <= lesson.priority <= 10:
        problems.append(("priority", f"priority {lesson.priority} must be 1-10"))
    if not 0.0 <= lesson.confidence <= 1.0:
        problems.append(("confidence", f"confidence {lesson.confidence} must be between 0 and 1"))
    if lesson.source not in SOURCES:
        problems.append(("source", f"source {lesson.source!r} must be one of {', '.join(SOURCES)}"))
    if lesson.status not in STATUSES:
        problems.append(("status", f"status {lesson.status!r} must be one of {', '.join(STATUSES)}"))
    for key in lesson.verify:
        if key not in VERIFY_KEYS:
            problems.append(("verify", f"verify.{key} is unknown ({', '.join(VERIFY_KEYS)})"))
    for item in _str_list(lesson.verify.get("defines"), "verify.defines"):
        if not re.fullmatch(r"[^:\s]+:[^:\s]+", item):
            problems.append(("verify", f"verify.defines {item!r} must be FILE:NAME, e.g. package.json:lint"))
    for key in ("match", "absent"):
        for pattern in _str_list(lesson.verify.get(key), f"verify.{key}"):
            message = _regex_problem(pattern)
            if message:
                problems.append(("verify", f"verify.{key} {pattern!r}{message}"))
    return problems


def _regex_problem(pattern: str) -> str:
    """What is wrong with a lesson's regex, as the end of a message ('' when it is fine):
    it does not compile, or it could backtrack for exponential time."""
    try:
        re.compile(pattern)
    except re.error as exc:
        return f" does not compile: {exc}"
    reason = regex_hazard.hazard(pattern)
    return f": {reason}" if reason else ""


def glob_problem(glob: str) -> str:
    """Why a path glob is invalid, or '' when it is fine."""
    if not glob:
        return "empty glob"
    if globs.unclosed_class(glob):  # the hooks' own parser decides, so the two never disagree
        return "unclosed '[' in glob (write \\[ for a literal '[')"
    if glob.startswith("/") or ".." in glob.split("/"):
        return "globs are relative to the repository (no leading '/', no '..')"
    return globs.hazard(glob)


def key_lines(text: str) -> dict[str, int]:
    """Line numbers (1-based, in the file) of each top-level frontmatter key, for messages."""
    lines: dict[str, int] = {}
    parent = ""
    for n, line in enumerate(text.splitlines()[1:], start=2):
        if line.rstrip() in ("---", "..."):
            break
        m = re.match(r"^(\s*)([A-Za-z0-9_-]+)\s*:", line)
        if not m:
            continue
        key = m.group(2) if not m.group(1) else f"{parent}.{m.group(2)}"
        if not m.group(1):
            parent = m.group(2)
        lines.setdefault(key, n)
    return lines
