"""Everything generated from the lessons, as one regenerate step: INDEX.md, BANK.md, the compiled index.

INDEX.md and BANK.md are rendered through sandboxed Jinja templates (the bank's templates/ first,
then the packaged ones) with StrictUndefined, from the context bank.pages makes; the compiled
index (`.lessonbank/index.bin`, local state, never committed; index.compiled_update) is built from
INDEX.md as written, which is what the hooks read. Deterministic: sorted, no timestamps,
byte-identical on rerun.

Incremental: what one lesson gives (its INDEX.md row, its BANK.md section from
`BANK-lesson.md.j2`, its compiled-index piece) is kept in the derived cache (index.derived) with
the lesson file's content hash, so `bank index` and a capture work out only the changed lessons'
parts, then join every part in order; the result is byte-identical to a build from nothing. A
bank with its own INDEX.md.j2 or BANK.md.j2 gets every lesson object too (its templates may use
them), which parses every lesson. Jinja is imported only when something is rendered.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lessonbank.bank import catalog
from lessonbank.bank.catalog import S_STATUS, S_TAGS, bad_values
from lessonbank.bank.inert import code_span, inert_lesson
from lessonbank.bank.pages import Entry, context, index_row, topic
from lessonbank.bank.store import Bank, Problem, write_atomic
from lessonbank.errors import BankError
from lessonbank.index import compiled_read, compiled_update, index_md
from lessonbank.index.compiled_update import compiled_path
from lessonbank.index.derived import PROBLEMS, SLUG, SUMMARY, VERSION, Derived
from lessonbank.state import statedir, userdirs

if TYPE_CHECKING:  # the lesson module imports YAML: only annotations need it here
    from jinja2.sandbox import SandboxedEnvironment

    from lessonbank.bank.lesson import Lesson

PACKAGE_TEMPLATES = Path(__file__).resolve().parents[1] / "templates"
GENERATED = ("INDEX.md", "BANK.md")
SECTION_TEMPLATE = "BANK-lesson.md.j2"
# Past this size of INDEX.md (about 17,000 lessons), a changed row is not patched into the compiled
# index (the patch compares INDEX.md's old and new texts line by line, and reads the old compiled
# file whole): it is built anew from INDEX.md read a line at a time, in bounded memory.
PATCH_MOST_BYTES = 8 << 20
STREAM_PART = 1 << 16  # a generated file is written (and compared with the old one) in parts of about this size


def template_cache() -> Path | None:
    """Where compiled templates are kept: the user's cache folder (trusted), never the repository."""
    folder = userdirs.user_cache(userdirs.TEMPLATE_CACHE)
    return Path(folder) if folder else None


def environment(bank_templates: Path | None = None, compiled_dir: Path | None = None) -> SandboxedEnvironment:
    """A sandboxed Jinja environment: the bank's templates/ first, then the packaged defaults.

    With `compiled_dir`, templates compiled to Python are kept there (Jinja's bytecode cache,
    keyed by each template's source): a `bank index` process then compiles none (about 30 ms).
    """
    import jinja2
    from jinja2.sandbox import SandboxedEnvironment

    search = [str(p) for p in (bank_templates, PACKAGE_TEMPLATES) if p is not None and p.is_dir()]
    cache = None
    if compiled_dir is not None:
        with contextlib.suppress(OSError):  # a read-only state folder only costs speed
            compiled_dir.mkdir(parents=True, exist_ok=True)
            cache = jinja2.FileSystemBytecodeCache(str(compiled_dir))
    env = SandboxedEnvironment(
        loader=jinja2.FileSystemLoader(search),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,
        trim_blocks=True,
        lstrip_blocks=True,
        bytecode_cache=cache,
    )
    env.filters["cell"] = index_md.escape
    env.filters["cells"] = index_md.cell_list
    env.filters["code"] = code_span
    return env


def render_template(env: SandboxedEnvironment, name: str, context: dict[str, Any]) -> str:
    """Render one template, turning Jinja's errors into a BankError that names the template."""
    import jinja2

    try:
        return env.get_template(name).render(**context)
    except jinja2.TemplateError as exc:
        raise _template_error(exc, name) from None


def _template_error(exc: Exception, name: str) -> BankError:
    import jinja2

    where = f"{exc.filename}:{exc.lineno}" if isinstance(exc, jinja2.TemplateSyntaxError) else name
    return BankError(f"template {where}: {exc}")


def section(env: SandboxedEnvironment, lesson: Lesson) -> str:
    """A lesson's section of BANK.md, its prose made inert (no @imports, no raw HTML)."""
    return render_template(env, SECTION_TEMPLATE, {"lesson": inert_lesson(lesson)})


def custom(bank: Bank) -> bool:
    """Whether the bank has its own INDEX.md.j2 or BANK.md.j2 (which may use the lesson objects);
    the packaged ones seen through the bank's templates/ (this project's own bank) are not."""
    if bank.templates_dir.resolve() == PACKAGE_TEMPLATES.resolve():
        return False
    return any((bank.templates_dir / (name + ".j2")).is_file() for name in GENERATED)


def fingerprint(bank: Bank) -> str:
    """What the cached rows, sections and pieces, and the files written from them, were worked out
    with: the three templates (the bank's or the packaged ones), the compiled format and the
    cache's version."""
    digest = hashlib.blake2b(digest_size=16)
    for name in (SECTION_TEMPLATE, *(n + ".j2" for n in GENERATED)):
        for folder in (bank.templates_dir, PACKAGE_TEMPLATES):
            with contextlib.suppress(OSError):
                digest.update((folder / name).read_bytes())
                break
    digest.update(f"{compiled_read.FORMAT}/{VERSION}".encode())
    return digest.hexdigest()


def _hash(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()


def _frame(env: SandboxedEnvironment, items: list[Entry], lessons: list[Lesson] | None) -> dict[str, str]:
    """INDEX.md and BANK.md from each lesson's (slug, status, row, section, topic), sorted by slug
    here; `lessons` (a custom template's) sorted alike."""
    return _render_all(env, context(items, lessons))


def _render_all(env: SandboxedEnvironment, ctx: dict[str, Any]) -> dict[str, str]:
    return {name: render_template(env, name + ".j2", ctx).rstrip("\n") + "\n" for name in GENERATED}


def _stream(env: SandboxedEnvironment, name: str, ctx: dict[str, Any], digest: hashlib.blake2b) -> Iterator[bytes]:
    """A generated file's bytes as the template writes them (`_frame`'s text: trailing newlines
    made one), in parts of about STREAM_PART bytes, hashed into `digest` as they go."""
    import jinja2

    held: list[str] = []
    size = 0
    carried = ""  # the trailing newlines of the part last given: only the file's last run of them is made one
    try:
        for chunk in env.get_template(name + ".j2").generate(**ctx):
            held.append(chunk)
            size += len(chunk)
            if size > STREAM_PART:
                text = carried + "".join(held)
                body = text.rstrip("\n")
                held, size, carried = [], 0, text[len(body) :]
                if body:
                    data = body.encode("utf-8")
                    digest.update(data)
                    yield data
    except jinja2.TemplateError as exc:
        raise _template_error(exc, name + ".j2") from None
    data = ((carried + "".join(held)).rstrip("\n") + "\n").encode("utf-8")
    digest.update(data)
    yield data


def render(bank: Bank, lessons: list[Lesson]) -> dict[str, str]:
    """The text of each generated file for these lessons (no cache: groom renders lessons it has
    not written yet)."""
    env = environment(bank.templates_dir)
    items = [Entry(x.slug, x.status, index_row(x), section(env, x), topic(x.tags)) for x in lessons]
    return _frame(env, items, lessons if custom(bank) else None)


def valid_lessons(bank: Bank) -> list[Lesson]:
    """Every lesson without a bad value (a regex that does not compile or could backtrack, a bad
    glob, a value out of range), parsed: what a bank's own templates are given."""
    from lessonbank.bank.lint import value_problems

    return [item.lesson for item in bank.load() if not value_problems(item)]


def open_cache(bank: Bank) -> Derived:
    """The derived cache as `regenerate` uses it, up to date with lessons/; each lesson parsed in
    the process gets its row and section at once (Jinja is imported only then). A caller (capture)
    may read it, write a lesson file, then hand it to `regenerate` (lessons/ is scanned once)."""
    envs: list[SandboxedEnvironment] = []

    def work_out(derived: Derived, name: str, lesson: Lesson) -> None:
        if not envs:
            envs.append(environment(bank.templates_dir, template_cache()))
        part = derived.part(name)
        part.row = index_row(lesson)
        part.section = derived.keep(section(envs[0], lesson))

    derived = catalog.cache(bank, fingerprint(bank), on_parse=work_out)
    _note_problems(bank, derived)
    return derived


def _note_problems(bank: Bank, derived: Derived) -> None:
    # A lesson with a bad value is left out of everything generated; say so on every run.
    small = derived.small
    with_problems = sorted(name for name, rec in small.items() if rec[PROBLEMS] and rec[SLUG] is not None)
    bank.load_problems = catalog.problems(bank, derived) + [
        Problem(bank.lessons_dir / name, line, message) for name in with_problems for line, message in bad_values(small[name])
    ]


def _untouched(bank: Bank, derived: Derived, sources: bytes) -> bool:
    """Whether INDEX.md and BANK.md are, byte for byte, what the last run wrote from these very
    lessons and templates: then nothing is rendered (nor the generated parts even read)."""
    outputs = derived.meta.get("outputs")
    if not outputs or custom(bank) or derived.meta.get("fingerprint") != derived.fingerprint:
        return False
    if derived.meta.get("sources") != sources:
        return False
    for name in GENERATED:
        try:
            if _hash((bank.root / name).read_bytes()) != outputs.get(name):
                return False
        except OSError:
            return False
    return True


def _context_of(bank: Bank, derived: Derived) -> tuple[SandboxedEnvironment, dict[str, Any]]:
    """The environment and the templates' context for lessons/, through the derived cache (which
    then holds every part worked out, not saved yet; the sections kept stay in the cache file
    until written out)."""
    items = []
    topics: dict[tuple, str] = {}  # by tags: lessons share them, and a topic is a regex's work
    small = derived.small
    names = [name for name in derived.names() if (rec := small[name])[SLUG] is not None and not (rec[PROBLEMS] and bad_values(rec))]
    for name, part in zip(names, derived.parts(names), strict=True):
        if part.section is None and derived.on_parse is not None:  # parsed before, part dropped since
            derived.on_parse(derived, name, derived.lesson(name))
        rec = small[name]
        summary = rec[SUMMARY]
        tags = summary[S_TAGS]
        group = topics.get(tags)
        if group is None:
            group = topics[tags] = topic(tags)
        items.append(Entry(rec[SLUG], summary[S_STATUS], part.row, part.section, group))
    lessons = valid_lessons(bank) if custom(bank) else None
    if lessons is not None:  # a bank's own template may use a section as a string in any way
        items = [item._replace(section=str(item.section)) for item in items]
    env = environment(bank.templates_dir, template_cache())
    return env, context(items, lessons)


def _write_out(bank: Bank, derived: Derived, dry_run: bool, sources: bytes) -> list[tuple[str, str]]:
    """Write INDEX.md and BANK.md from lessons/, each streamed from its template to its file
    (neither is ever held whole); their hashes go into the cache's meta."""
    env, ctx = _context_of(bank, derived)
    results, outputs = [], {}
    for name in GENERATED:
        digest = hashlib.blake2b(digest_size=16)
        # Not flushed to disk before the rename (15-40 ms for the two at 10,000 lessons): both are made again
        # from lessons/ by `bank index`, and lessons/ itself is flushed when it is written.
        parts = _stream(env, name, ctx, digest)
        results.append((name, write_atomic(bank.root / name, parts, dry_run=dry_run, sync=False)))
        outputs[name] = digest.digest()
    if not dry_run:
        derived.meta.update(fingerprint=derived.fingerprint, sources=sources, outputs=outputs)
        derived.changed = True
    return results


def _texts(bank: Bank, derived: Derived) -> dict[str, str]:
    """The text of each generated file from lessons/, through the derived cache."""
    return _render_all(*_context_of(bank, derived))


@contextlib.contextmanager
def _no_collection() -> Iterator[None]:
    """The cyclic garbage collector paused: reading the cache and joining the parts make a
    hundred thousand tuples that hold no cycle, and its passes over them would triple the time."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def regenerate(
    bank: Bank, dry_run: bool = False, cache: Derived | None = None, written: list[str] | None = None
) -> list[tuple[str, str]]:
    """Write INDEX.md, BANK.md and the compiled index; return (name, action) for each.

    `cache`: the one `open_cache` gave, after which the caller wrote only the lesson files named
    in `written` (only those are looked at again); it is saved and closed here."""
    with _no_collection():
        if cache is None:
            derived = open_cache(bank)
        else:
            derived = cache
            derived.refresh(written)
            _note_problems(bank, derived)
        try:
            index_text = old_index = None
            sources = derived.sources()  # a hash over every lesson: worked out once
            if _untouched(bank, derived, sources):
                results = [(name, "unchanged") for name in GENERATED]
            else:
                # what the compiled index may have been built from: it may be patched from there
                # (not past PATCH_MOST_BYTES: the patch holds INDEX.md's texts and lines whole)
                old_index = None if dry_run else _small_text(bank.root / "INDEX.md")
                results = _write_out(bank, derived, dry_run, sources)
                if dry_run:  # nothing on disk to build from: the text the lessons give
                    index_text = _texts(bank, derived)["INDEX.md"]
            derived.pack()  # the compiled index's build needs the memory more than the records
            action = compiled_update.write(bank, custom(bank), derived, index_text, dry_run, write_atomic, old_index)
            results.append(("compiled index", action))
            derived.save()
        finally:
            derived.close()
    return results


def stale(bank: Bank) -> list[str]:
    """The generated files (by name) whose bytes differ from a fresh rendering."""
    with _no_collection():
        derived = open_cache(bank)
        try:
            if _untouched(bank, derived, derived.sources()):
                derived.save()
                return []
            env, ctx = _context_of(bank, derived)
            names = []
            for name in GENERATED:
                # compared as it is made: neither text is held whole
                if write_atomic(bank.root / name, _stream(env, name, ctx, hashlib.blake2b()), dry_run=True) != "unchanged":
                    names.append(name)
            derived.save()
        finally:
            derived.close()
    return names


def _small_text(path: Path) -> str | None:
    """A file's text when it is at most PATCH_MOST_BYTES long (else None, as for a missing one)."""
    try:
        if path.stat().st_size > PATCH_MOST_BYTES:
            return None
    except OSError:
        return None
    return statedir.read_text(str(path))


def write_compiled(bank: Bank, lessons: list[Lesson] | None = None, dry_run: bool = False) -> str:
    """Write the compiled index when its bytes change; return create, update or unchanged.

    It is built from INDEX.md as it is on disk (the hooks' source of truth), so call this
    after writing INDEX.md; `lessons` are needed only by a dry run, which cannot rely on INDEX.md.
    """
    if dry_run and lessons is None:
        raise ValueError("a dry run renders INDEX.md from the lessons it is given")
    index_text = render(bank, lessons)["INDEX.md"] if dry_run and lessons is not None else None
    parts = compiled_update.build(bank, custom(bank), dry_run, None, index_text)
    return compiled_update.write_parts(compiled_path(bank), parts, dry_run, write_atomic)
