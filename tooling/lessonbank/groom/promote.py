"""Promotion: lessons that graduate are rendered into rules, skills and docs between stable markers."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from jinja2.sandbox import SandboxedEnvironment

from lessonbank.bank import lesson as lesson_mod
from lessonbank.bank import render as generate
from lessonbank.bank.git import GitRepo
from lessonbank.bank.store import Bank, Loaded, remove, write_atomic
from lessonbank.errors import BankError
from lessonbank.groom import decide as verdicts

TEMPLATES = {"rule": "rule.md.j2", "skill": "skill.md.j2", "doc": "doc-section.md.j2"}
MARK_RE = re.compile(r"<!--\s*lessonbank\s*:\s*(begin|end)\s+(\S+?)\s*-->", re.IGNORECASE)
# Anything that reads as `lessonbank:` could open or close a section (or the rules block);
# a backslash before the colon breaks the marker and still renders as a colon in markdown.
_FORGE_RE = re.compile(r"(lessonbank\s*):", re.IGNORECASE)
_ID_RE = re.compile(r"^[0-9A-Za-z_-]{1,64}$")
DESCRIPTION_LIMIT = 1023


class TemplateError(BankError):
    """A template (the package's or the bank's override) failed or dropped the section markers."""


def begin_marker(lesson_id: str) -> str:
    """The line that opens a lesson's section."""
    return f"<!-- lessonbank:begin {lesson_id} -->"


def end_marker(lesson_id: str) -> str:
    """The line that closes a lesson's section."""
    return f"<!-- lessonbank:end {lesson_id} -->"


def neutralise(text: str) -> str:
    """Lesson text with anything marker-like broken, so it cannot open or close a section."""
    return _FORGE_RE.sub(lambda m: m.group(1) + "\\:", text)


def sections(text: str, where: str) -> dict[str, tuple[int, int]]:
    """id -> (start, end) offsets of each marked section, whole lines; BankError when malformed."""
    found: dict[str, tuple[int, int]] = {}
    open_id: str | None = None
    open_at = 0
    for m in MARK_RE.finditer(text):
        kind, ident = m.group(1).lower(), m.group(2)
        if kind == "begin":
            if open_id is not None:
                raise BankError(f"{where}: the section of {open_id} is not closed before {ident} opens")
            if ident in found:
                raise BankError(f"{where}: lesson {ident} has two sections")
            open_id, open_at = ident, text.rfind("\n", 0, m.start()) + 1
        else:
            if open_id != ident:
                raise BankError(f"{where}: an end marker for {ident} has no matching begin")
            nl = text.find("\n", m.end())
            found[ident] = (open_at, len(text) if nl < 0 else nl + 1)
            open_id = None
    if open_id is not None:
        raise BankError(f"{where}: the section of {open_id} has no end marker")
    return found


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


def _heading_levels(lines: list[str]) -> list[int | None]:
    """The heading level of each line (None for text and for anything inside a code fence)."""
    levels: list[int | None] = []
    fence: str | None = None
    for line in lines:
        stripped = line.lstrip()
        level = None
        if stripped.startswith(("```", "~~~")):
            mark = stripped[:3]
            fence = None if fence == mark else (fence or mark)
        elif fence is None and re.match(r"#{1,6}\s", line):
            level = len(line) - len(line.lstrip("#"))
        levels.append(level)
    return levels


def shift_headings(body: str, by: int) -> str:
    """Markdown headings moved `by` levels deeper (at most level 6), code fences left alone."""
    lines = body.splitlines()
    levels = _heading_levels(lines)
    if by <= 0 or all(lv is None for lv in levels):
        return body
    out = [
        ln if lv is None else "#" * min(6, lv + by) + ln[lv:] for ln, lv in zip(lines, levels, strict=True)
    ]
    return "\n".join(out)


def _demote(body: str, top: int) -> str:
    """Markdown headings shifted so the highest sits at level `top`, code fences left alone."""
    found = [lv for lv in _heading_levels(body.splitlines()) if lv is not None]
    return shift_headings(body, top - min(found)) if found else body


def _extra_body(lesson: lesson_mod.Lesson) -> str:
    """The body minus what the section already says: a first heading that repeats the title."""
    body = lesson.body.strip("\n")
    lines = body.splitlines()
    if lines and lines[0].lstrip("# ").strip() == lesson.title.strip() and lines[0].startswith("#"):
        body = "\n".join(lines[1:]).strip("\n")
    return body


def lesson_view(lesson: lesson_mod.Lesson) -> dict[str, Any]:
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
        "body": neutralise(_demote(_extra_body(lesson), 3)),
        "begin": begin_marker(lesson.id),
        "end": end_marker(lesson.id),
    }


def environment(bank: Bank) -> SandboxedEnvironment:
    """The sandboxed Jinja environment: the bank's templates/ first, then the packaged defaults."""
    env = generate.environment(bank.templates_dir)
    env.filters["yaml_str"] = lambda s: json.dumps(" ".join(str(s).split()), ensure_ascii=False)
    return env


@dataclass
class Target:
    """One destination file and the lessons graduating into it."""

    kind: str
    name: str
    path: Path
    rel: str
    lessons: list[lesson_mod.Lesson] = field(default_factory=list)


def resolve_target(bank: Bank, promote_to: str) -> Target:
    """The file a promote-to names, refusing traversal, links that lead out and reserved files."""
    try:
        dest = lesson_mod.parse_destination(promote_to)
    except ValueError as exc:
        raise BankError(str(exc)) from None
    path = bank.destination_path(dest)
    root = bank.root.resolve()
    rel = path.relative_to(root).as_posix()
    parts = rel.split("/")
    # Checked again after resolving: the skills folder (a setting) could lead into them too.
    if rel in lesson_mod.RESERVED_TOP or lesson_mod.RESERVED_DIRS & set(parts[:-1]):
        raise BankError(f"{promote_to} resolves to {rel}, which the bank manages itself")
    if path.is_dir():
        raise BankError(f"{promote_to} resolves to {rel}, which is a folder")
    return Target(dest.kind, dest.name, path, rel)


def _skill_description(name: str, lessons: list[lesson_mod.Lesson]) -> str:
    titles = "; ".join(" ".join(x.title.split()).rstrip(".") for x in lessons)
    text = neutralise(f"What this project learned about {name}, the hard way: {titles}.")
    text += f" Use when working with {name} here."
    if len(text) > DESCRIPTION_LIMIT:
        text = text[: DESCRIPTION_LIMIT - 1].rsplit(" ", 1)[0] + "…"
    return text


def _check_skill_header(target: Target, existing: str) -> None:
    try:
        front, _, _ = lesson_mod.split_frontmatter(existing)
        import yaml

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
        rendered = generate.render_template(env, TEMPLATES[target.kind], context)
    except BankError as exc:
        raise TemplateError(str(exc)) from None
    return merge(existing, rendered, [v["id"] for v in views], target.rel)


def command_runner(cwd: Path, timeout: float) -> Callable[[str], verdicts.CommandResult]:
    """Run verify.command in a shell at `cwd`; its whole process group dies at the timeout."""

    def run(command: str) -> verdicts.CommandResult:
        try:
            proc = subprocess.Popen(
                command, shell=True, cwd=cwd, stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
            )  # fmt: skip
        except OSError as exc:
            return verdicts.CommandResult("error", str(exc))
        try:
            code = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            return verdicts.CommandResult("timeout", f"timed out after {timeout:g}s")
        return verdicts.CommandResult("pass" if code == 0 else "fail", f"exit {code}")

    return run


# The bank's own files quote lessons (their patterns included): a lesson must not verify itself.
_BANK_FILES = ("INDEX.md", "BANK.md", "CLAUDE.md", "AGENTS.md", "bank.toml")
_BANK_DIRS = ("lessons/", "rules/", "templates/", ".cursor/rules/")


def _prefix(bank: Bank, repo: GitRepo) -> str:
    top = repo.rel(bank.root)
    return "" if top in ("", ".") else top + "/"


def bank_paths(bank: Bank, repo: GitRepo) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(files, folder prefixes) the bank manages, as git names them."""
    prefix = _prefix(bank, repo)
    dirs = [prefix + d for d in _BANK_DIRS]
    # A skills folder outside the repository is refused when a lesson is promoted there.
    with contextlib.suppress(ValueError):
        dirs.append(repo.rel(bank.root / str(bank.config.get("groom.skills_dir"))) + "/")
    return tuple(prefix + name for name in _BANK_FILES), tuple(dirs)


def snapshot(bank: Bank, repo: GitRepo) -> verdicts.Snapshot:
    """HEAD as lessons name it (paths relative to the bank root, like the hooks); bank files unsearched."""
    prefix = _prefix(bank, repo)
    files, dirs = bank_paths(bank, repo)
    cut = len(prefix)

    def contents(paths: Sequence[str]) -> dict[str, str]:
        wanted = [prefix + p for p in paths if prefix + p not in files and not (prefix + p).startswith(dirs)]
        return {k[cut:]: v for k, v in repo.read_head(wanted).items()}

    seen: dict[str, frozenset[str] | None] = {}

    def changed_since(commit: str) -> frozenset[str] | None:
        if commit not in seen:
            changed = repo.changed_since(commit)
            seen[commit] = (
                None if changed is None else frozenset(c[cut:] for c in changed if c.startswith(prefix))
            )
        return seen[commit]

    tracked = [p[cut:] for p in repo.tracked() if p.startswith(prefix)]
    return verdicts.Snapshot(
        tracked=tracked, contents=contents, changed_since=changed_since, head=repo.head()
    )


@dataclass
class Plan:
    """Everything one groom would do, computed before anything is written."""

    decisions: list[verdicts.Decision]
    writes: dict[str, tuple[Path, str, str]] = field(default_factory=dict)  # rel -> (path, text, action)
    edits: dict[str, tuple[Path, str]] = field(default_factory=dict)  # rel -> (lesson path, new text)
    removals: dict[str, Path] = field(default_factory=dict)  # rel -> lesson path
    targets: dict[str, str] = field(default_factory=dict)  # lesson id -> destination rel
    offers: list[tuple[str, list[str]]] = field(default_factory=list)
    head: str | None = None

    def count(self, outcome: str) -> int:
        """How many decisions have this outcome."""
        return sum(1 for d in self.decisions if d.outcome == outcome)

    @property
    def changes(self) -> bool:
        """Whether applying the plan writes anything."""
        return bool(self.removals or self.edits or any(a != "unchanged" for _, _, a in self.writes.values()))


def gather_text(text: str, tool: str) -> str:
    """A lesson file's text with promote-to pointed at the skill for `tool`."""
    return lesson_mod.set_scalar(text, "promote-to", f"skill:{tool}")


def plan_groom(
    bank: Bank,
    repo: GitRepo,
    min_seen: int | None = None,
    run_command: Callable[[str], verdicts.CommandResult] | None = None,
    gather: str | None = None,
) -> Plan:
    """Decide every lesson, render every destination, and return the plan (nothing written)."""
    loaded = bank.load()
    texts = {(item.lesson.id, item.lesson.slug): item.text for item in loaded}
    if gather:
        if not lesson_mod.DEST_NAME_RE.match(gather):
            raise BankError(f"--gather {gather!r}: a skill name is 1-64 of a-z, 0-9 and '-'")
        loaded = [_gathered(item, gather, texts) for item in loaded]
    lessons = [item.lesson for item in loaded]
    threshold = min_seen if min_seen is not None else int(bank.config.get("groom.min_seen"))
    snap = snapshot(bank, repo)
    if snap.head is None:
        # Against an empty tree every check fails: refuse rather than delete the whole bank.
        raise BankError("the repository has no commit yet; groom verifies lessons against committed code")
    decisions = verdicts.decide(lessons, snap, threshold, run_command)
    ids: dict[str, int] = {}
    by_key: dict[tuple[str, str], Loaded] = {}
    for item in loaded:
        ids[item.lesson.id] = ids.get(item.lesson.id, 0) + 1
        by_key[(item.lesson.id, item.lesson.slug)] = item
    plan = Plan(decisions=[], head=snap.head)
    targets: dict[str, Target] = {}
    final: list[verdicts.Decision] = []
    for decision in decisions:
        item = by_key[(decision.lesson_id, decision.slug)]
        if decision.outcome == verdicts.PROMOTE:
            try:
                if ids[decision.lesson_id] > 1:
                    raise BankError(f"id {decision.lesson_id} is used by more than one lesson")
                target = resolve_target(bank, decision.destination)
                lesson_view(item.lesson)
            except BankError as exc:
                decision = _review(decision, f"cannot promote: {exc}")
            else:
                targets.setdefault(target.rel, target).lessons.append(item.lesson)
                plan.targets[decision.lesson_id] = target.rel
        final.append(decision)
    env = environment(bank)
    for rel in sorted(targets):
        target = targets[rel]
        try:
            try:
                existing = target.path.read_text(encoding="utf-8") if target.path.is_file() else None
            except (OSError, UnicodeDecodeError) as exc:
                raise BankError(
                    f"{target.rel} cannot be read as UTF-8 text ({exc.__class__.__name__})"
                ) from None
            text = render_target(env, target, existing)
        except BankError as exc:
            if isinstance(exc, TemplateError):
                raise
            failed = {x.id for x in target.lessons}
            final = [_review(d, f"cannot promote: {exc}") if d.lesson_id in failed else d for d in final]
            for ident in failed:
                plan.targets.pop(ident, None)
            continue
        action = write_atomic(target.path, text, dry_run=True)
        plan.writes[rel] = (target.path, text, action)
    plan.decisions = final
    for decision in final:
        item = by_key[(decision.lesson_id, decision.slug)]
        rel = bank.relative(item.path)
        if decision.outcome in (verdicts.PROMOTE, verdicts.DELETE):
            plan.removals[rel] = item.path
        elif decision.outcome == verdicts.REVIEW:
            text = review_text(texts[(decision.lesson_id, decision.slug)], decision.reason)
            if text != item.text:
                plan.edits[rel] = (item.path, text)
        elif texts[(decision.lesson_id, decision.slug)] != item.text:
            plan.edits[rel] = (item.path, texts[(decision.lesson_id, decision.slug)])
    limit = int(bank.config.get("groom.tool_skill_threshold"))
    kept = [x for x in lessons if x.id not in plan.targets]
    plan.offers = verdicts.tool_skill_offers(kept, limit)
    return plan


def _gathered(item: Loaded, tool: str, texts: dict[tuple[str, str], str]) -> Loaded:
    if f"tool:{tool}" not in item.lesson.tags or item.lesson.status == "disabled":
        return item
    text = gather_text(item.text, tool)
    texts[(item.lesson.id, item.lesson.slug)] = text
    return Loaded(item.path, item.text, lesson_mod.parse(text))


def _review(decision: verdicts.Decision, reason: str) -> verdicts.Decision:
    return verdicts.Decision(
        decision.lesson_id, decision.slug, verdicts.REVIEW, " ".join(reason.split()),
        decision.destination, (reason,),
    )  # fmt: skip


def review_text(text: str, reason: str, today: str | None = None) -> str:
    """A lesson's text with status needs-review and the reason, touching only those lines."""
    new = lesson_mod.set_scalar(text, "status", "needs-review")
    new = lesson_mod.set_scalar(new, "review-reason", reason)
    if new != text:
        new = lesson_mod.set_scalar(new, "updated", today or date.today().isoformat())
    return new


def apply_plan(bank: Bank, plan: Plan, cursor: bool | None = None) -> list[tuple[str, str]]:
    """Write the plan: destinations, lesson edits and removals, INDEX/BANK, the rules blocks."""
    from lessonbank.groom import rulesync  # it builds on this module's markers

    results: list[tuple[str, str]] = []
    rulesync.sync(bank, cursor=cursor, dry_run=True)  # a file it cannot read stops us before any write
    with bank.lock():
        for rel in sorted(plan.writes):
            path, text, _ = plan.writes[rel]
            results.append((rel, write_atomic(path, text)))
        for rel in sorted(plan.edits):
            path, text = plan.edits[rel]
            results.append((rel, write_atomic(path, text)))
        for rel in sorted(plan.removals):
            results.append((rel, remove(plan.removals[rel])))
        if plan.removals or plan.edits:
            for name, action in generate.regenerate(bank):
                if name in generate.GENERATED:
                    results.append((name, action))
        results += rulesync.sync(bank, cursor=cursor)
    return results


def commit_plan(bank: Bank, repo: GitRepo, plan: Plan, results: list[tuple[str, str]]) -> str:
    """Commit exactly the files the groom wrote or deleted, with its message; return the sha."""
    changed = [repo.rel(bank.root / rel) for rel, action in results if action != "unchanged"]
    return repo.commit(changed, commit_message(plan))


def commit_message(plan: Plan) -> str:
    """The groom commit: a count line, then each promotion, deletion and review with its reason."""
    promoted = [d for d in plan.decisions if d.outcome == verdicts.PROMOTE]
    deleted = [d for d in plan.decisions if d.outcome == verdicts.DELETE]
    review = [d for d in plan.decisions if d.outcome == verdicts.REVIEW]
    lines = [f"bank groom: promote {len(promoted)}, delete {len(deleted)}, review {len(review)}", ""]
    if promoted:
        lines.append("Promoted:")
        lines += [f"- {d.slug} -> {plan.targets[d.lesson_id]}: {d.reason}" for d in promoted]
    if deleted:
        lines += ([""] if len(lines) > 2 else []) + ["Deleted as stale:"]
        lines += [f"- {d.slug}: {d.reason}" for d in deleted]
    if review:
        lines += ([""] if len(lines) > 2 else []) + ["Marked needs-review:"]
        lines += [f"- {d.slug}: {d.reason}" for d in review]
    return "\n".join(lines).rstrip("\n") + "\n"
