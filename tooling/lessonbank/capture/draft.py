"""The one draft type: a lesson as it is proposed, before the gates, and the one way it becomes a lesson.

Whoever proposes a lesson hands over a `Draft`: a person (`bank add`, `bank capture` flags or
`--json`), an agent's `#lesson` block, and the scan, whose `Candidate` extends the draft with its
evidence and score. Its fields are the lesson's own, under the same names (`bank.lesson` holds the
one field list), less what the bank assigns (id, slug, seen, status, dates), plus the session it
was learned in; `to_lesson` is the one converter into a `Lesson`. Reading drafts from blocks and
JSON, and deriving a missing title, keywords or tags from a draft's words, live here too.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, fields
from typing import Any

from lessonbank.bank import names
from lessonbank.bank.lesson import SOURCES, TRIGGER_KEYS, TYPES, Lesson, LessonContent, attribute
from lessonbank.capture import blocks
from lessonbank.errors import BankError
from lessonbank.matching import words

# Words that name a tool (-> tool:<word> tag and a command trigger) or a language (-> lang:<word>).
KNOWN_TOOLS = (
    "pytest", "tox", "nox", "pip", "uv", "poetry", "ruff", "mypy", "jest", "vitest", "npm", "pnpm",
    "yarn", "bun", "node", "tsc", "eslint", "cargo", "go", "make", "cmake", "git", "docker",
    "gradle", "mvn", "pre-commit", "alembic", "django", "terraform", "kubectl",
)  # fmt: skip
KNOWN_LANGS = ("python", "typescript", "javascript", "rust", "golang", "java", "ruby", "bash", "sql")
SEVERITY_WORDS = {
    "hang": "hang",
    "hangs": "hang",
    "hung": "hang",
    "timeout": "hang",
    "data-loss": "data-loss",
}
# A new lesson's confidence when the draft names none, by where it came from.
DEFAULT_CONFIDENCE = {"typed": 0.8, "learned": 0.7, "scanned": 0.6}
_PATH_TOOLS = {"Read", "Edit", "Write", "MultiEdit", "NotebookEdit", "Glob"}


@dataclass(kw_only=True)
class Draft(LessonContent):
    """A lesson as a person, an agent or the scan offered it, before the gates.

    It has the lesson's content fields (`bank.lesson.LessonContent`), any of which may be empty,
    and the session it was learned in; `priority` and `confidence` are left to the bank's defaults
    when None, and an empty title or keywords list is derived.
    """

    title: str = ""
    when: str = ""
    do: str = ""
    promote_to: str = ""
    session: str | None = None  # becomes the lesson's first `sessions` entry
    priority: int | None = None
    confidence: float | None = None


def to_lesson(draft: Draft, taken: set[str], today: str, default_priority: int) -> Lesson:
    """The new lesson a draft becomes: the one converter.

    The content fields are copied (when and do whitespace-folded), the bank assigns the rest (id, a
    slug not in `taken`, seen 1, sessions, dates), and a missing title, keywords, priority or
    confidence is derived or defaulted.
    """
    values = {f.name: getattr(draft, f.name) for f in fields(LessonContent)}
    values = {k: v.copy() if isinstance(v, (list, dict)) else v for k, v in values.items()}
    title = draft.title.strip() or derive_title(draft.when, draft.do)
    values.update(
        id=names.new_id(),
        slug=unique_slug(names.slugify(title), taken),
        title=title,
        when=" ".join(draft.when.split()),
        do=" ".join(draft.do.split()),
        promote_to=draft.promote_to.strip(),
        seen=1,
        sessions=[draft.session] if draft.session else [],
        priority=draft.priority if draft.priority is not None else default_priority,
        confidence=draft.confidence
        if draft.confidence is not None
        else DEFAULT_CONFIDENCE.get(draft.source, 0.7),
        status="active",
        created=today,
        updated=today,
    )
    lesson = Lesson(**values)
    if not lesson.keywords:
        lesson.keywords = derive_keywords(lesson.title, lesson.when, lesson.tags)
    return lesson


def unique_slug(base: str, taken: set[str]) -> str:
    """`base`, or `base-2`, `base-3`, … when a lesson already has it."""
    slug, n = base, 2
    while slug in taken:
        slug = f"{base[:60]}-{n}"
        n += 1
    return slug


# ---- the words a draft's missing fields are derived from ------------------------------------


def split_list(value: str) -> list[str]:
    """'a, b c' -> ['a', 'b', 'c'] for tags and keywords given on one line."""
    return [v for v in re.split(r"[,\s]+", value.strip()) if v]


def derive_title(when: str, do: str, limit: int = 80) -> str:
    """A one-line title from the situation (what bit us): its first clause when long, cut at 80 characters."""
    text = " ".join((when or do).split()).rstrip(".")
    text = text[:1].upper() + text[1:]
    if len(text) > limit:  # "…, pytest fails with X while loading conftest.py": the part before "while"
        text = re.split(r"[;:]\s+|\s+(?:while|because|since|so that|which)\s+", text, maxsplit=1)[0]
    return names.cut_words(text, limit)


def derive_keywords(title: str, when: str, tags: list[str], limit: int = 6) -> list[str]:
    """Keywords for prompt recall: tag values first, then the situation's longer words."""
    out: list[str] = []
    for tag in tags:
        value = tag.partition(":")[2].lower()
        if value and value not in out:
            out.append(value)
    for token in words.tokens(f"{title} {when}"):
        if len(token) >= 4 and token not in words.STOP_WORDS and not token.isdigit() and token not in out:
            out.append(token)
    return out[:limit]


def derive_tags(text: str) -> list[str]:
    """Tags read off a lesson's words: tools, languages and hangs."""
    seen = words.tokens(text.replace("pre-commit", "precommit"))
    tags = []
    for word in seen:
        name = "pre-commit" if word == "precommit" else word
        if name in KNOWN_TOOLS and f"tool:{name}" not in tags:
            tags.append(f"tool:{name}")
        elif word in KNOWN_LANGS and f"lang:{word}" not in tags:
            tags.append(f"lang:{word}")
        elif word in SEVERITY_WORDS and f"severity:{SEVERITY_WORDS[word]}" not in tags:
            tags.append(f"severity:{SEVERITY_WORDS[word]}")
    return tags


# ---- drafts from `#lesson` blocks ------------------------------------------------------------


def parse_lesson_blocks(text: str) -> list[Draft]:
    """Every `#lesson … #/lesson` block in `text`, as drafts (fields tool, trigger, mistake, fix, …)."""
    return [draft_from_block(fields) for _, fields in blocks.lesson_blocks(text)]


def draft_from_block(fields: dict[str, str]) -> Draft:
    """Map a block's fields onto a draft: mistake is the situation, fix is what to do."""
    tool = fields.get("tool", "").strip()
    trigger = fields.get("trigger", "").strip()
    draft = Draft(
        when=fields.get("when") or fields.get("mistake", ""),
        do=fields.get("do") or fields.get("fix", ""),
        promote_to=fields.get("promote-to", ""),
        title=fields.get("title", ""),
        tools=[tool] if tool else [],
        tags=split_list(fields.get("tags", "")),
        keywords=split_list(fields.get("keywords", "")),
        source="learned",
    )
    if fields.get("path"):
        draft.paths.append(fields["path"])
    if trigger:
        if tool in _PATH_TOOLS or ("/" in trigger and " " not in trigger) or trigger.startswith("*"):
            draft.paths.append(trigger)
        else:
            draft.commands.append(trigger_regex(trigger))
    if fields.get("priority", "").isdigit():
        draft.priority = int(fields["priority"])
    return draft


def trigger_regex(trigger: str) -> str:
    """A block's trigger as a command regex: kept when it compiles, else matched literally."""
    try:
        re.compile(trigger)
    except re.error:
        return re.escape(trigger)
    if re.fullmatch(r"[\w.-]+", trigger):
        return rf"\b{re.escape(trigger)}\b"
    return trigger


# ---- a draft from `bank capture --json` ------------------------------------------------------

# How --json reads each Draft field (named there as in the frontmatter: promote-to).
_JSON_TEXT = ("when", "do", "promote-to", "title", "type", "session", "source", "body")
_JSON_LISTS = (*TRIGGER_KEYS, "tags")
_JSON_NUMBERS = (("priority", int, 1, 10), ("confidence", float, 0, 1))
JSON_FIELDS = (*_JSON_TEXT, *_JSON_LISTS, *(n[0] for n in _JSON_NUMBERS), "verify")


def draft_from_json(text: str, session: str | None) -> Draft:
    """One JSON lesson object, checked field by field so a wrong type gets a one-line error."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BankError(f"stdin is not JSON: {exc.msg} at line {exc.lineno}") from None
    if not isinstance(data, dict):
        raise BankError("stdin must hold one JSON object")
    if "promote_to" in data:
        if "promote-to" in data:
            raise BankError("JSON lesson: give promote-to once (not also promote_to)")
        data["promote-to"] = data.pop("promote_to")
    triggers = data.pop("triggers", {})
    if not isinstance(triggers, dict):
        raise BankError("JSON lesson: triggers must be an object of tools, commands, paths, keywords")
    for key, value in triggers.items():
        if key not in TRIGGER_KEYS:
            raise BankError(f"JSON lesson: unknown trigger {key!r}; known: tools, commands, paths, keywords")
        data[key] = value
    unknown = sorted(set(data) - set(JSON_FIELDS))
    if unknown:
        raise BankError(f"JSON lesson: unknown field {unknown[0]!r}; known: {', '.join(JSON_FIELDS)}")
    args: dict[str, Any] = {}
    for key in _JSON_TEXT:
        if key in data:
            if not isinstance(data[key], str):
                raise BankError(f"JSON lesson: {key} must be a string")
            args[attribute(key)] = data[key]
    for key in _JSON_LISTS:
        value = data.get(key)
        if value is None:
            continue
        if isinstance(value, str):
            # Tags and keywords may be one comma-separated string; a lone regex or glob stays whole.
            value = split_list(value) if key in ("tags", "keywords") else [value]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise BankError(f"JSON lesson: {key} must be a list of strings")
        args[key] = value
    for key, kind, low, high in _JSON_NUMBERS:
        value = data.get(key)
        if value is None:
            continue
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or (kind is int and value != int(value))
        ):
            raise BankError(f"JSON lesson: {key} must be a number from {low} to {high}")
        if not low <= value <= high:
            raise BankError(f"JSON lesson: {key} must be a number from {low} to {high}")
        args[key] = kind(value)
    if "verify" in data:
        if not isinstance(data["verify"], dict):
            raise BankError("JSON lesson: verify must be an object")
        args["verify"] = data["verify"]
    for key in ("when", "do"):
        if key not in args:
            raise BankError(f"JSON lesson: missing field {key!r}")
    if args.get("type", "gotcha") not in TYPES:
        raise BankError(f"JSON lesson: type must be one of {', '.join(TYPES)}")
    if args.get("source", "typed") not in SOURCES:
        raise BankError(f"JSON lesson: source must be one of {', '.join(SOURCES)}")
    if session:
        args["session"] = session
    return Draft(**args)
