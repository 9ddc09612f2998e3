"""Promotion: the lessons bound for one destination rendered into it, between stable markers.

A destination is a rule file (rules/NAME.md), a skill (<groom.skills_dir>/NAME/SKILL.md) or a doc
file; `resolve_target` finds its file and refuses anything the bank manages itself. The lessons are
shown to the bank's (or the packaged) Jinja template as neutralised views, and the rendered
sections are spliced into what the file already holds, so hand-written text outside the markers
survives and a lesson's section is refreshed in place. Nothing here writes: the plan carries the
text. It imports `bank` (lesson, store, render), `markers` and `errors`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from jinja2.sandbox import SandboxedEnvironment

from lessonbank.bank import render
from lessonbank.bank.lesson import Lesson, split_frontmatter
from lessonbank.bank.names import parse_destination, reserved_path
from lessonbank.bank.store import Bank
from lessonbank.errors import BankError
from lessonbank.groom.markers import begin_marker, demote, end_marker, neutralise, sections

TEMPLATES = {"rule": "rule.md.j2", "skill": "skill.md.j2", "doc": "doc-section.md.j2"}
_ID_RE = re.compile(r"^[0-9A-Za-z_-]{1,64}$")
DESCRIPTION_LIMIT = 1023


class TemplateError(BankError):
    """A template (the package's or the bank's override) failed or dropped the section markers."""


def merge(existing: str | None, rendered: str, ids: Sequence[str], where: str) -> str:
    """Splice the rendered sections of `ids` into `existing`: replace in place, append new ones."""
    try:
        new = sections(rendered, f"the template output for {where}")
    except BankError as exc:
        raise TemplateError(str(exc)) from None
    if sorted(new) != sorted(ids):
        raise TemplateError(
            f"the template for {where} must wrap each lesson in {{{{ lesson.begin }}}} and "
            "{{ lesson.end }} lines, once each"
        )
    if existing is None:
        return rendered.rstrip("\n") + "\n"
    old = sections(existing, where)

    def block(ident: str) -> str:
        start, end = new[ident]
        return rendered[start:end].rstrip("\n") + "\n"

    text = existing
    for ident in sorted((i for i in ids if i in old), key=lambda i: old[i][0], reverse=True):
        start, end = old[ident]
        text = text[:start] + block(ident) + text[end:]
    added = [block(i).rstrip("\n") for i in ids if i not in old]
    if added:
        text = text.rstrip("\n") + "\n\n" + "\n\n".join(added) + "\n"
    return text


def _extra_body(lesson: Lesson) -> str:
    """The body minus what the section already says: a first heading that repeats the title."""
    body = lesson.body.strip("\n")
    lines = body.splitlines()
    if lines and lines[0].lstrip("# ").strip() == lesson.title.strip() and lines[0].startswith("#"):
        body = "\n".join(lines[1:]).strip("\n")
    return body


def lesson_view(lesson: Lesson) -> dict[str, Any]:
    """What a template sees of one lesson: every text neutralised, markers ready to print."""
    if not _ID_RE.match(lesson.id):
        raise BankError(f"id {lesson.id!r} cannot mark a section: ids are letters, digits, '-' and '_'")
    when = " ".join(lesson.when.split()).rstrip(".")
    if when[:1].isupper() and not when[1:2].isupper():
        when = when[:1].lower() + when[1:]
    return {
        "id": lesson.id,
        "slug": lesson.slug,
        "title": neutralise(" ".join(lesson.title.split())),
        "when": neutralise(when),
        "do": neutralise(lesson.do.strip()),
        "type": lesson.type,
        "tags": [neutralise(t) for t in lesson.tags],
        "tools": [neutralise(t) for t in lesson.tools],
        "commands": [neutralise(c) for c in lesson.commands],
        "paths": [neutralise(p) for p in lesson.paths],
        "keywords": [neutralise(k) for k in lesson.keywords],
        "seen": lesson.seen,
        "priority": lesson.priority,
        "body": neutralise(demote(_extra_body(lesson), 3)),
        "begin": begin_marker(lesson.id),
        "end": end_marker(lesson.id),
    }


def environment(bank: Bank) -> SandboxedEnvironment:
    """The sandboxed Jinja environment: the bank's templates/ first, then the packaged defaults."""
    env = render.environment(bank.templates_dir)
    env.filters["yaml_str"] = lambda s: json.dumps(" ".join(str(s).split()), ensure_ascii=False)
    return env


@dataclass
class Target:
    """One destination file and the lessons graduating into it."""

    kind: str
    name: str
    path: Path
    rel: str
    lessons: list[Lesson] = field(default_factory=list)


def resolve_target(bank: Bank, promote_to: str) -> Target:
    """The file a promote-to names, refusing traversal, links that lead out and reserved files."""
    try:
        dest = parse_destination(promote_to)
    except ValueError as exc:
        raise BankError(str(exc)) from None
    path = bank.destination_path(dest)
    root = bank.root.resolve()
    rel = path.relative_to(root).as_posix()
    parts = rel.split("/")
    # Checked again after resolving: the skills folder (a setting) could lead into them too.
    if reserved_path(parts):
        raise BankError(f"{promote_to} resolves to {rel}, which the bank manages itself")
    if path.is_dir():
        raise BankError(f"{promote_to} resolves to {rel}, which is a folder")
    return Target(dest.kind, dest.name, path, rel)


def _skill_description(name: str, lessons: list[Lesson]) -> str:
    titles = "; ".join(" ".join(x.title.split()).rstrip(".") for x in lessons)
    text = neutralise(f"What this project learned about {name}, the hard way: {titles}.")
    text += f" Use when working with {name} here."
    if len(text) > DESCRIPTION_LIMIT:
        text = text[: DESCRIPTION_LIMIT - 1].rsplit(" ", 1)[0] + "…"
    return text


def _check_skill_header(target: Target, existing: str) -> None:
    try:
        front, _, _ = split_frontmatter(existing)
        data = yaml.safe_load(front) or {}
    except Exception:  # noqa: BLE001 - any unreadable header gets the same refusal
        data = {}
    if not isinstance(data, dict) or data.get("name") != target.name:
        raise BankError(
            f"{target.rel}: its frontmatter name must be {target.name!r} (the folder's name) "
            "and it needs a description; fix the header by hand"
        )


def render_target(env: SandboxedEnvironment, target: Target, existing: str | None) -> str:
    """The destination's new text: the template's sections spliced into what is there."""
    ordered = sorted(target.lessons, key=lambda x: (x.slug, x.id))
    views = [lesson_view(x) for x in ordered]
    if target.kind == "skill" and existing is not None:
        _check_skill_header(target, existing)
    context = {
        "kind": target.kind,
        "name": target.name,
        "path": target.rel,
        "title": Path(target.name).stem.replace("-", " ").replace("_", " ").capitalize(),
        "description": _skill_description(target.name, ordered),
        "lessons": views,
    }
    try:
        rendered = render.render_template(env, TEMPLATES[target.kind], context)
    except BankError as exc:
        raise TemplateError(str(exc)) from None
    return merge(existing, rendered, [v["id"] for v in views], target.rel)
