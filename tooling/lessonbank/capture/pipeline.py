"""Capture: a draft lesson goes through the gates, then into lessons/ or onto a banked lesson's count."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from lessonbank.bank import lesson as lesson_mod
from lessonbank.bank.store import Bank, write_atomic
from lessonbank.capture import blocks, gates
from lessonbank.capture.redaction import Redaction, describe
from lessonbank.errors import BankError, GateRefusal
from lessonbank.kernel import words

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


BLOCK_FIELDS = blocks.BLOCK_FIELDS
_PATH_TOOLS = {"Read", "Edit", "Write", "MultiEdit", "NotebookEdit", "Glob"}


@dataclass
class Draft:
    """A lesson as a person or an agent offered it, before the gates."""

    when: str
    do: str
    promote_to: str = ""
    title: str = ""
    type: str = "gotcha"
    tools: list[str] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    keywords: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    session: str | None = None
    source: str = "typed"
    priority: int | None = None
    confidence: float | None = None
    body: str = ""
    verify: dict[str, Any] = field(default_factory=dict)


@dataclass
class Outcome:
    """What capture did: create, bump or unchanged, and to which lesson."""

    action: str
    slug: str
    path: Path
    message: str
    redactions: list[Redaction] = field(default_factory=list)

    def lines(self) -> list[str]:
        out = [self.message]
        if self.redactions:
            out.append(f"redacted before writing: {describe(self.redactions)}")
        return out


def split_list(value: str) -> list[str]:
    """'a, b c' -> ['a', 'b', 'c'] for tags and keywords given on one line."""
    return [v for v in re.split(r"[,\s]+", value.strip()) if v]


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


def derive_title(when: str, do: str) -> str:
    """A one-line title from the situation (what bit us), cut at 72 characters."""
    text = " ".join((when or do).split()).rstrip(".")
    text = text[:1].upper() + text[1:]
    if len(text) > 72:
        text = text[:72].rsplit(" ", 1)[0] + "…"
    return text


def derive_keywords(draft: Draft, limit: int = 6) -> list[str]:
    """Keywords for prompt recall: tag values first, then the situation's longer words."""
    out: list[str] = []
    for tag in draft.tags:
        value = tag.partition(":")[2].lower()
        if value and value not in out:
            out.append(value)
    for token in words.tokens(f"{draft.title} {draft.when}"):
        if len(token) >= 4 and token not in words.STOP_WORDS and not token.isdigit() and token not in out:
            out.append(token)
    return out[:limit]


def _today() -> str:
    return date.today().isoformat()


def _unique_slug(base: str, taken: set[str]) -> str:
    slug, n = base, 2
    while slug in taken:
        slug = f"{base[:60]}-{n}"
        n += 1
    return slug


def capture(bank: Bank, draft: Draft, dry_run: bool = False) -> Outcome:
    """Put a draft through the gates and save it (or bump the lesson it repeats). Raises GateRefusal."""
    # Secrets are scrubbed first, so that no refusal message can echo one; gate 4 reports them.
    clean, redactions = gates.scrub(
        {"when": draft.when, "do": draft.do, "title": draft.title, "body": draft.body}
    )
    if not clean["when"].strip() or not clean["do"].strip():
        raise GateRefusal("fields", "refused: a lesson needs both a situation (--when) and what to do (--do)")
    candidate = gates.Candidate(clean["when"], clean["do"], draft.promote_to, clean["title"])
    dest = gates.destination(draft.promote_to)
    with bank.lock():
        loaded = bank.load()
        dup = gates.find_duplicate(
            candidate, [x.lesson for x in loaded], bank.config.get("gates.duplicate_threshold")
        )
        if dup is not None:
            return _bump(bank, next(x for x in loaded if x.lesson is dup), draft.session, dry_run)
        dest_path = bank.destination_path(dest)
        if dest_path.is_file():
            written = dest_path.read_text(encoding="utf-8", errors="replace")
            if gates.already_written(candidate, written, bank.config.get("gates.destination_threshold")):
                raise GateRefusal(
                    "duplicate", f"refused: this lesson is already written in {bank.relative(dest_path)}"
                )
        gates.preference(candidate)
        lesson = _new_lesson(bank, draft, clean, {x.lesson.slug for x in loaded})
        problems = lesson_mod.validate(lesson)
        if problems:
            raise GateRefusal("format", f"refused: {problems[0][1]}")
        path = bank.lessons_dir / f"{lesson.slug}.md"
        action = write_atomic(path, lesson_mod.render(lesson), dry_run=dry_run)
        if not dry_run:
            from lessonbank.bank.render import regenerate

            regenerate(bank)
    verb = "would create" if dry_run else "created"
    return Outcome(action, lesson.slug, path, f"{verb} {bank.relative(path)}", redactions)


def _bump(bank: Bank, item: Any, session: str | None, dry_run: bool) -> Outcome:
    lesson = item.lesson
    text, counted = lesson_mod.bump_text(item.text, session, _today())
    rel = bank.relative(item.path)
    if not counted:
        return Outcome(
            "unchanged", lesson.slug, item.path,
            f"repeat of {lesson.slug} ({rel}), already seen in session {session}: seen stays {lesson.seen}",
        )  # fmt: skip
    if not dry_run:
        write_atomic(item.path, text)
        from lessonbank.bank.render import regenerate

        regenerate(bank)
    verb = "would bump" if dry_run else "bumped"
    return Outcome(
        "bump", lesson.slug, item.path,
        f"repeat of {lesson.slug} ({rel}): {verb} seen {lesson.seen} -> {lesson.seen + 1}",
    )  # fmt: skip


def _new_lesson(bank: Bank, draft: Draft, clean: dict[str, str], taken: set[str]) -> lesson_mod.Lesson:
    title = clean["title"].strip() or derive_title(clean["when"], clean["do"])
    today = _today()
    default_conf = {"typed": 0.8, "learned": 0.7, "scanned": 0.6}.get(draft.source, 0.7)
    lesson = lesson_mod.Lesson(
        id=lesson_mod.new_id(),
        slug=_unique_slug(lesson_mod.slugify(title), taken),
        title=title,
        when=" ".join(clean["when"].split()),
        do=" ".join(clean["do"].split()),
        promote_to=draft.promote_to.strip(),
        type=draft.type,
        tools=list(draft.tools),
        commands=list(draft.commands),
        paths=list(draft.paths),
        keywords=list(draft.keywords),
        tags=list(draft.tags),
        seen=1,
        sessions=[draft.session] if draft.session else [],
        priority=draft.priority
        if draft.priority is not None
        else bank.config.get("capture.default_priority"),
        confidence=draft.confidence if draft.confidence is not None else default_conf,
        source=draft.source,
        status="active",
        created=today,
        updated=today,
        verify=dict(draft.verify),
        body=clean["body"],
    )
    if not lesson.keywords:
        draft_for_words = Draft(when=lesson.when, do=lesson.do, title=title, tags=lesson.tags)
        lesson.keywords = derive_keywords(draft_for_words)
    return lesson


PENDING = "pending-lessons.jsonl"


def take_pending(bank: Bank) -> list[Draft]:
    """The `#lesson` blocks the Stop hook could not save, as drafts; the pending file is taken away.

    The file is renamed before it is read, so a hook appending meanwhile starts a new one.
    """
    import os

    path = bank.state_dir / PENDING
    taken = path.with_name(PENDING + ".taking")
    if path.exists():
        if taken.exists():
            # A run that failed half-way left blocks behind: keep them, add the new ones.
            with open(taken, "a", encoding="utf-8") as out:
                out.write(path.read_text(encoding="utf-8", errors="replace"))
            path.unlink()
        else:
            os.replace(path, taken)
    if not taken.exists():
        return []
    drafts: list[Draft] = []
    for line in taken.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            continue
        if not isinstance(entry, dict) or not isinstance(entry.get("message"), str):
            continue
        for draft in parse_lesson_blocks(entry["message"]):
            draft.session = str(entry.get("session") or "") or None
            drafts.append(draft)
    return drafts


def drop_taken(bank: Bank) -> None:
    """Forget the pending blocks once every one went through the gates."""
    (bank.state_dir / (PENDING + ".taking")).unlink(missing_ok=True)


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


_JSON_TEXT = ("when", "do", "promote-to", "title", "type", "session", "source", "body")
_JSON_LISTS = ("tools", "commands", "paths", "keywords", "tags")


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
        if key not in _JSON_LISTS[:4]:
            raise BankError(f"JSON lesson: unknown trigger {key!r}; known: tools, commands, paths, keywords")
        data[key] = value
    known = (*_JSON_TEXT, *_JSON_LISTS, "priority", "confidence", "verify")
    unknown = sorted(set(data) - set(known))
    if unknown:
        raise BankError(f"JSON lesson: unknown field {unknown[0]!r}; known: {', '.join(known)}")
    args: dict[str, Any] = {}
    for key in _JSON_TEXT:
        if key in data:
            if not isinstance(data[key], str):
                raise BankError(f"JSON lesson: {key} must be a string")
            args[key.replace("-", "_")] = data[key]
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
    for key, kind, low, high in (("priority", int, 1, 10), ("confidence", float, 0, 1)):
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
    if args.get("type", "gotcha") not in lesson_mod.TYPES:
        raise BankError(f"JSON lesson: type must be one of {', '.join(lesson_mod.TYPES)}")
    if args.get("source", "typed") not in lesson_mod.SOURCES:
        raise BankError(f"JSON lesson: source must be one of {', '.join(lesson_mod.SOURCES)}")
    if session:
        args["session"] = session
    return Draft(**args)
