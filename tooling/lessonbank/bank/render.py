"""Everything generated from the lessons, as one regenerate step: INDEX.md, BANK.md, the compiled index.

INDEX.md and BANK.md are rendered through sandboxed Jinja templates (the bank's templates/ first,
then the packaged ones) with StrictUndefined; the compiled index (`.lessonbank/index.bin`, local
state, never committed) is built from INDEX.md as written, which is what the hooks read.
Deterministic: sorted, no timestamps, byte-identical on rerun.
"""

from __future__ import annotations

import contextlib
import marshal
from pathlib import Path
from typing import Any

import jinja2
from jinja2.sandbox import SandboxedEnvironment

from lessonbank.bank.inert import code_span, inert_lesson
from lessonbank.bank.lesson import STATUSES, Lesson
from lessonbank.bank.store import Bank, write_atomic
from lessonbank.errors import BankError
from lessonbank.kernel import compiled_build, compiled_read, statedir
from lessonbank.kernel import index_md as index_mod

PACKAGE_TEMPLATES = Path(__file__).resolve().parents[1] / "templates"
GENERATED = ("INDEX.md", "BANK.md")


def environment(bank_templates: Path | None = None) -> SandboxedEnvironment:
    """A sandboxed Jinja environment: the bank's templates/ first, then the packaged defaults."""
    search = [str(p) for p in (bank_templates, PACKAGE_TEMPLATES) if p is not None and p.is_dir()]
    env = SandboxedEnvironment(
        loader=jinja2.FileSystemLoader(search),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["cell"] = index_mod.escape
    env.filters["cells"] = index_mod.cell_list
    env.filters["code"] = code_span
    return env


def render_template(env: SandboxedEnvironment, name: str, context: dict[str, Any]) -> str:
    """Render one template, turning Jinja's errors into a BankError that names the template."""
    try:
        return env.get_template(name).render(**context)
    except jinja2.TemplateError as exc:
        where = f"{exc.filename}:{exc.lineno}" if isinstance(exc, jinja2.TemplateSyntaxError) else name
        raise BankError(f"template {where}: {exc}") from None


def context(lessons: list[Lesson]) -> dict[str, Any]:
    """What the INDEX and BANK templates see."""
    ordered = sorted(lessons, key=lambda x: x.slug)
    rows = [index_mod.row_line(row_cells(x)) for x in index_lessons(ordered)]
    shown = [inert_lesson(x) for x in ordered]  # BANK.md prose: no @imports, no raw HTML
    return {
        "columns": index_mod.COLUMNS,
        "header": index_mod.row_line(list(index_mod.COLUMNS)),
        "rule": index_mod.row_line(["---"] * len(index_mod.COLUMNS)),
        "rows": rows,
        "groups": [(s, [x for x in shown if x.status == s]) for s in STATUSES],
        "lessons": shown,
        "count": len(ordered),
    }


def _number(value: float) -> str:
    return f"{value:g}"


def row_cells(lesson: Lesson) -> list[str]:
    """The escaped cells of a lesson's INDEX.md row, in COLUMNS order."""
    return [
        f"[{lesson.slug}](lessons/{lesson.slug}.md)",
        index_mod.escape(lesson.title),
        index_mod.escape(lesson.when),
        index_mod.escape(lesson.do),
        index_mod.cell_list(lesson.tools),
        index_mod.cell_list(lesson.commands),
        index_mod.cell_list(lesson.paths),
        index_mod.cell_list(lesson.keywords),
        index_mod.cell_list(lesson.tags),
        str(lesson.seen),
        str(lesson.priority),
        _number(lesson.confidence),
    ]


def index_lessons(lessons: list[Lesson]) -> list[Lesson]:
    """The lessons INDEX.md lists: active ones, sorted by slug."""
    return sorted((x for x in lessons if x.status == "active"), key=lambda x: x.slug)


def render(bank: Bank, lessons: list[Lesson]) -> dict[str, str]:
    """The text of each generated file."""
    env = environment(bank.templates_dir)
    ctx = context(lessons)
    out = {}
    for name in GENERATED:
        text = render_template(env, name + ".j2", ctx)
        out[name] = text.rstrip("\n") + "\n"
    return out


def valid_lessons(bank: Bank) -> list[Lesson]:
    """The lessons to render: a lesson with an invalid value (a regex that does not compile or
    could backtrack, a bad glob, a value out of range) is left out of INDEX.md, BANK.md and the
    compiled index, and its problems join `bank.load_problems`, which commands print as warnings."""
    from lessonbank.bank.lint import value_problems

    out = []
    for item in bank.load():
        problems = value_problems(item)
        bank.load_problems += problems
        if not problems:
            out.append(item.lesson)
    return out


def regenerate(bank: Bank, dry_run: bool = False) -> list[tuple[str, str]]:
    """Write INDEX.md, BANK.md and the compiled index; return (name, action) for each."""
    lessons = valid_lessons(bank)
    results = []
    for name, text in render(bank, lessons).items():
        results.append((name, write_atomic(bank.root / name, text, dry_run=dry_run)))
    results.append(("compiled index", write_compiled(bank, lessons, dry_run=dry_run)))
    return results


def stale(bank: Bank) -> list[str]:
    """The generated files (by name) whose bytes differ from a fresh rendering."""
    lessons = valid_lessons(bank)
    names = []
    for name, text in render(bank, lessons).items():
        try:
            current = (bank.root / name).read_text(encoding="utf-8")
        except FileNotFoundError:
            current = None
        if current != text:
            names.append(name)
    return names


def compiled_path(bank: Bank) -> Path:
    """Where the compiled index lives."""
    return bank.state_dir / compiled_read.NAME


def render_compiled(bank: Bank, lessons: list[Lesson], dry_run: bool = False) -> bytes:
    """The compiled bytes: from INDEX.md on disk, or (dry run) from the INDEX.md the lessons give."""
    index_text, toml_text, key = compiled_read.read_sources(str(bank.root))
    if dry_run:
        expected = render(bank, lessons)["INDEX.md"]
        if expected != index_text:
            key = None
        index_text = expected
    cache_path = bank.state_dir / statedir.TRIGGER_CACHE
    compiled = _read_triggers(cache_path)
    before = len(compiled)
    try:
        data = compiled_build.from_texts(index_text, toml_text, compiled)
    except index_mod.IndexFormatError as exc:
        raise BankError(f"INDEX.md: {exc}") from None
    if len(compiled) != before and not dry_run:
        used = {entry[6] for group in data["groups"] for entry in group if entry[5] == "c"}
        _write_triggers(cache_path, {p: v for p, v in compiled.items() if p in used})
    return compiled_build.serialize(data, key if key is not None else ("pending",))


def _read_triggers(path: Path) -> dict:
    """The compiled command regexes `bank index` kept (pattern -> compiled_build.command_trigger);
    {} when missing or written by another format."""
    try:
        data = marshal.loads(path.read_bytes())
    except Exception:
        return {}
    if not isinstance(data, dict) or data.get("format") != compiled_read.FORMAT:
        return {}
    triggers: dict = data["triggers"]
    return triggers


def _write_triggers(path: Path, triggers: dict) -> None:
    with contextlib.suppress(OSError, ValueError):  # only speed is lost
        statedir.write_atomic(str(path), marshal.dumps({"format": compiled_read.FORMAT, "triggers": triggers}))


def write_compiled(bank: Bank, lessons: list[Lesson], dry_run: bool = False) -> str:
    """Write the compiled index when its bytes change; return create, update or unchanged.

    It is built from INDEX.md as it is on disk (the hooks' source of truth), so call this
    after writing INDEX.md; `lessons` only matter for a dry run, which cannot rely on INDEX.md.
    """
    return write_atomic(compiled_path(bank), render_compiled(bank, lessons, dry_run), dry_run=dry_run)
