"""`lessonbank.compile.write`: create, update, unchanged, dry run; the settings baked in."""

from __future__ import annotations

from pathlib import Path

import pytest

import lessonbank.bank.lesson
from lessonbank.bank import catalog, pages, render
from lessonbank.bank.store import Bank
from lessonbank.index import (
    compiled_build,
    compiled_bytes,
    compiled_pieces,
    compiled_read,
    compiled_update,
    derived,
)
from tests.hook_support import lesson, make_bank


def test_write_actions(tmp_path: Path) -> None:
    bank = make_bank(tmp_path / "p", [lesson("one", commands=["make"])])
    target = Path(render.compiled_path(bank))
    lessons = [item.lesson for item in bank.load()]
    assert target.is_file()
    assert render.write_compiled(bank, lessons) == "unchanged"
    before = target.read_bytes()
    lessons.append(lesson("two", commands=["tox"]))
    assert render.write_compiled(bank, lessons, dry_run=True) == "update"
    assert target.read_bytes() == before
    target.unlink()
    assert render.write_compiled(bank, lessons, dry_run=True) == "create"
    assert not target.exists()
    assert render.write_compiled(bank, lessons) == "create"


def test_settings_come_from_bank_toml(tmp_path: Path) -> None:
    bank = make_bank(tmp_path / "p", [lesson("one", commands=["make"])])
    (bank.root / "bank.toml").write_text("[recall]\nmax_lessons = 2\nmax_bytes = 900\n", encoding="utf-8")
    bank = Bank.open(bank.root)
    assert dict(render.regenerate(bank))["compiled index"] == "update"
    index = compiled_build.load(str(bank.root), str(bank.state_dir))
    assert isinstance(index, compiled_read.DiskIndex)
    assert index.settings == {
        "max_lessons": 2,
        "max_bytes": 900,
        "prompt_max_lessons": 3,
        "compact_priority": 7,
    }


def test_a_broken_bank_toml_falls_back_to_defaults(tmp_path: Path) -> None:
    bank = make_bank(tmp_path / "p", [lesson("one", commands=["make"])])
    (bank.root / "bank.toml").write_text("[recall\n", encoding="utf-8")
    index = compiled_build.load(str(bank.root), str(bank.state_dir))
    assert index.settings["max_lessons"] == 3


def test_the_same_tables_give_the_same_bytes_whatever_the_process_holds() -> None:
    """Interning and sharing must not leak into the file, or `bank index` rewrites unchanged files."""
    import sys

    from lessonbank.index.compiled_build import from_texts, serialize

    def tables(name: str) -> dict:
        return from_texts(None, None) | {"lessons": {7: (name, 5, 0.7, name + " text", name)}}

    fresh = "".join(["ma", "ke"])  # equal to "make", but neither interned nor shared
    assert fresh is not sys.intern("make")
    assert serialize(tables(fresh), ("k",)) == serialize(tables(sys.intern("make")), ("k",))


def test_lessons_come_from_the_cache_until_their_file_changes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    from lessonbank.state import statedir

    monkeypatch.setattr(derived, "RACY_NS", -(10**18))  # files written just now may be cached here

    bank = make_bank(tmp_path / "b", [lesson(f"cached-{i}", commands=[rf"\bgo{i}\b"]) for i in range(5)])
    old = 1_600_000_000
    for path in bank.lesson_paths():
        os.utime(path, (old, old))
    fresh = [(x.path, x.text, x.lesson) for x in bank.load()]
    cache = bank.state_dir / statedir.LESSON_CACHE
    assert cache.is_file()
    again = Bank.open(bank.root)
    assert [(x.path, x.text, x.lesson) for x in again.load()] == fresh
    index_before = (bank.root / "INDEX.md").read_text(encoding="utf-8")
    render.regenerate(again)
    assert (bank.root / "INDEX.md").read_text(encoding="utf-8") == index_before
    # The same size and an old mtime, but another file: its stat key differs (ctime, inode).
    path = bank.lessons_dir / "cached-3.md"
    text = path.read_text(encoding="utf-8").replace("remember cached-3", "remember cached-X")
    path.write_text(text, encoding="utf-8")
    os.utime(path, (old, old))
    changed = {x.lesson.slug: x.lesson.do for x in Bank.open(bank.root).load()}
    assert changed["cached-3"] == "remember cached-X"
    (bank.lessons_dir / "cached-4.md").unlink()
    assert len(Bank.open(bank.root).load()) == 4
    cache.write_bytes(b"not a cache")
    assert len(Bank.open(bank.root).load()) == 4


def test_bank_index_compiles_only_new_regexes_and_writes_the_same_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from lessonbank.state import statedir

    monkeypatch.setattr(compiled_update, "FEW_NEW_ROWS", 0)  # the kept regexes are read for any new row
    bank = make_bank(tmp_path / "b", [lesson(f"t-{i}", commands=[rf"\bgo{i}\s+test\b"]) for i in range(4)])
    assert (bank.state_dir / statedir.TRIGGER_CACHE).is_file()
    full = render.compiled_path(bank).read_bytes()
    compiled: list[str] = []
    real = compiled_pieces.command_trigger
    monkeypatch.setattr(compiled_pieces, "command_trigger", lambda p: compiled.append(p) or real(p))
    render.compiled_path(bank).unlink()
    render.regenerate(bank)
    assert compiled == []
    assert render.compiled_path(bank).read_bytes() == full
    (bank.state_dir / statedir.TRIGGER_CACHE).write_bytes(b"broken")
    render.compiled_path(bank).unlink()
    render.regenerate(bank)
    assert compiled == []  # each row's piece is in the derived cache
    (bank.state_dir / statedir.DERIVED_CACHE).write_bytes(b"broken")
    render.compiled_path(bank).unlink()
    render.regenerate(bank)
    assert len(compiled) == 4
    assert render.compiled_path(bank).read_bytes() == full


def test_a_few_new_rows_compile_their_regexes_without_reading_the_kept_ones(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from lessonbank.state import statedir

    monkeypatch.setattr(compiled_update, "FEW_NEW_ROWS", 2)
    bank = make_bank(tmp_path / "b", [lesson(f"t-{i}", commands=[rf"\bgo{i}\s+test\b"]) for i in range(4)])
    kept = (bank.state_dir / statedir.TRIGGER_CACHE).read_bytes()  # 4 new rows: read and written
    compiled: list[str] = []
    real = compiled_pieces.command_trigger
    monkeypatch.setattr(compiled_pieces, "command_trigger", lambda p: compiled.append(p) or real(p))
    monkeypatch.setattr(compiled_update, "_read_triggers", lambda path: pytest.fail("the kept regexes were read"))
    for i in (4, 5):
        item = lesson(f"t-{i}", commands=[rf"\bgo{i}\s+test\b"])
        (bank.lessons_dir / f"{item.slug}.md").write_text(lessonbank.bank.lesson.render(item), encoding="utf-8")
    render.regenerate(bank)
    assert compiled == [r"\bgo4\s+test\b", r"\bgo5\s+test\b"]
    assert (bank.state_dir / statedir.TRIGGER_CACHE).read_bytes() == kept  # not rewritten without them
    incremental = render.compiled_path(bank).read_bytes()
    (bank.state_dir / statedir.DERIVED_CACHE).unlink()
    render.compiled_path(bank).unlink()
    monkeypatch.undo()
    render.regenerate(bank)
    assert render.compiled_path(bank).read_bytes() == incremental


def test_bank_md_copies_short_bodies_and_links_long_ones(tmp_path: Path) -> None:
    long_body = "\n".join(f"- step {i}: what happened and why it matters here" for i in range(30))
    bank = make_bank(
        tmp_path / "b", [lesson("short-story", body="It broke once."), lesson("long-story", body=long_body)]
    )
    text = (bank.root / "BANK.md").read_text(encoding="utf-8")
    assert "It broke once." in text
    assert "step 29" not in text
    assert "- **More** in [lessons/long-story.md](lessons/long-story.md) (30 lines)" in text


def test_summaries_come_from_the_cache_and_follow_a_changed_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(derived, "RACY_NS", -(10**18))
    bank = make_bank(tmp_path / "b", [lesson(f"s-{i}", tags=[f"tool:t{i}"]) for i in range(3)])
    bank.load()
    want = [(x.slug, x.type, x.seen, x.priority, x.status, x.source, x.title, tuple(x.tags)) for x in
            (i.lesson for i in bank.load())]  # fmt: skip
    monkeypatch.setattr(Bank, "load", lambda self: pytest.fail("the summaries should not parse"))
    assert catalog.summaries(Bank.open(bank.root)) == want
    monkeypatch.undo()
    monkeypatch.setattr(derived, "RACY_NS", -(10**18))
    path = bank.lessons_dir / "s-1.md"
    path.write_text(path.read_text(encoding="utf-8").replace("title: s 1", "title: renamed"), encoding="utf-8")
    assert [row[6] for row in catalog.summaries(Bank.open(bank.root))] == ["s 0", "renamed", "s 2"]


def test_compiled_templates_are_kept_and_a_changed_template_is_still_used(tmp_path: Path) -> None:
    """Jinja's bytecode cache in .lessonbank/ is keyed by each template's source: a bank's own
    section template, added or edited later, shows in BANK.md at once."""

    bank = make_bank(tmp_path / "b", [lesson("kept-one")])
    cache = render.template_cache()
    assert cache is not None and any(cache.iterdir())  # the user's cache folder, not the bank's
    assert not (bank.state_dir / "compiled-templates").exists()
    (bank.root / "templates").mkdir()
    own = bank.root / "templates" / render.SECTION_TEMPLATE
    own.write_text("\n### {{ lesson.slug }} (first)\n", encoding="utf-8")
    render.regenerate(Bank.open(bank.root))
    assert "### kept-one (first)" in (bank.root / "BANK.md").read_text(encoding="utf-8")
    own.write_text("\n### {{ lesson.slug }} (second)\n", encoding="utf-8")
    render.regenerate(Bank.open(bank.root))
    text = (bank.root / "BANK.md").read_text(encoding="utf-8")
    assert "### kept-one (second)" in text and "(first)" not in text


def _streamed_bank(root: Path) -> Bank:
    lessons = [
        lesson(f"l-{n}", commands=[rf"\bcargo\s+t{n % 3}\b(?!.*--locked)"] if n % 2 else [], paths=["src/**/*.rs"] if n % 3 else [],
               tools=["Bash"] if n % 5 == 0 else [], keywords=["cargo", f"k{n % 4}"], priority=n % 10 + 1)
        for n in range(40)
    ]  # fmt: skip
    return make_bank(root, lessons)


def test_bank_index_writes_the_bytes_of_the_hooks_in_memory_build(tmp_path: Path) -> None:
    """`bank index` builds the compiled file streamed (compiled_build.stream); the hooks' fallback
    builds it in memory (compiled_build.rebuild): the same bytes."""
    bank = _streamed_bank(tmp_path / "b")
    written = render.compiled_path(bank).read_bytes()
    index_text, toml_text, key = compiled_read.read_sources(str(bank.root))
    assert key is not None
    assert written == compiled_bytes.serialize(compiled_build.from_texts(index_text, toml_text), key)


def test_past_the_patch_size_a_change_is_built_not_patched(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bank = _streamed_bank(tmp_path / "b")
    path = bank.lessons_dir / "l-3.md"
    path.write_text(path.read_text(encoding="utf-8").replace("\ndo: ", "\ndo: reworded ", 1), encoding="utf-8")
    monkeypatch.setattr(render, "PATCH_MOST_BYTES", 100)
    monkeypatch.setattr(compiled_update, "_patch", lambda *a, **k: pytest.fail("patched"))
    assert dict(render.regenerate(Bank.open(bank.root)))["compiled index"] == "update"
    index_text, toml_text, key = compiled_read.read_sources(str(bank.root))
    assert key is not None and "reworded" in (index_text or "")
    assert render.compiled_path(bank).read_bytes() == compiled_bytes.serialize(compiled_build.from_texts(index_text, toml_text), key)


def test_a_dry_run_with_nothing_to_change_says_unchanged(tmp_path: Path) -> None:
    bank = _streamed_bank(tmp_path / "b")
    render.compiled_path(bank).unlink()
    assert dict(render.regenerate(Bank.open(bank.root)))["compiled index"] == "create"
    lessons = [item.lesson for item in bank.load()]
    assert render.write_compiled(bank, lessons, dry_run=True) == "unchanged"


@pytest.mark.parametrize(
    ("tags", "want"),
    [
        (["tool:pytest", "lang:python"], "pytest"),
        (["lang:python", "tool:pytest"], "pytest"),  # tool: wins wherever it stands
        (["lang:python", "area:hooks"], "hooks"),  # area: before lang:
        (["lang:python"], "python"),
        (["severity:hang"], "other"),
        ([], "other"),
        (["tool:Git"], "git"),
        (["Tool: My Linter "], "my-linter"),
        (["lang:c++"], "c++"),
        (["tool:<b>x</b>"], "b-x-b"),  # no markup reaches a heading
        (["tool:!!!", "lang:go"], "go"),  # a value with nothing left falls through
    ],
)
def test_topic_is_the_first_tool_then_area_then_lang_tag(tags: list[str], want: str) -> None:
    assert pages.topic(tags) == want


@pytest.mark.parametrize(
    ("heading", "want"),
    [("git", "git"), ("c++", "c"), ("my-linter", "my-linter"), ("node.js", "nodejs"), ("a b", "a-b")],
)
def test_anchor_follows_the_github_heading_rule(heading: str, want: str) -> None:
    assert pages.anchor(heading) == want


def test_bank_md_groups_lessons_by_topic_under_each_status_with_a_contents_table(tmp_path: Path) -> None:
    bank = make_bank(
        tmp_path / "b",
        [
            lesson("b-git", tags=["tool:git"]),
            lesson("a-git", tags=["tool:git"]),
            lesson("py", tags=["lang:python"]),
            lesson("plain"),
            lesson("old-git", tags=["tool:git"], status="disabled"),
        ],
    )
    text = (bank.root / "BANK.md").read_text(encoding="utf-8")
    contents = text[text.index("## Contents") : text.index("## Active")]
    assert [line for line in contents.splitlines() if line.startswith("|")] == [
        "| topic | active | needs-review | disabled |",
        "|---|---:|---:|---:|",
        "| [git](#topic-git) | 2 | 0 | 1 |",
        "| [python](#topic-python) | 1 | 0 | 0 |",
        "| [other](#topic-other) | 1 | 0 | 0 |",
    ]
    headings = [line for line in text.splitlines() if line.startswith("##")]
    assert headings[headings.index("## Contents") + 1 :] == [
        "## Active (4)",
        "### Topic: git",
        "#### a git",
        "#### b git",
        "### Topic: python",
        "#### py",
        "### Topic: other",
        "#### plain",
        "## Needs-review (0)",
        "## Disabled (1)",
        "### Topic: git",
        "#### old git",
    ]


def test_anchor_numbers_repeated_targets_as_github_does() -> None:
    used: dict[str, int] = {}
    got = [pages.anchor(h, used) for h in ["Topic: c", "Topic: c++", "Topic: c#", "Topic: git", "Topic: c-1", "Topic: c"]]
    assert got == ["topic-c", "topic-c-1", "topic-c-2", "topic-git", "topic-c-1-1", "topic-c-3"]


def test_bank_md_fields_table_names_each_field_once(tmp_path: Path) -> None:
    bank = make_bank(tmp_path / "b", [lesson("one", commands=["make"])])
    text = (bank.root / "BANK.md").read_text(encoding="utf-8")
    table = text.split("## Fields\n", 1)[1].split("\n\n", 1)[0]
    fields = [line.split(" | ")[0] for line in table.strip().splitlines()[2:]]
    assert "| `guard`" in fields
    assert len(fields) == len(set(fields)) > 20


def test_bank_md_contents_link_each_topic_to_its_first_heading(tmp_path: Path) -> None:
    """`c` and `c++` share a target; a topic met again under another status takes the next number."""
    bank = make_bank(
        tmp_path / "b",
        [
            lesson("plus", tags=["lang:c++"]),
            lesson("plain-c", tags=["lang:c"], status="disabled"),
            lesson("old-plus", tags=["lang:c++"], status="disabled"),
        ],
    )
    text = (bank.root / "BANK.md").read_text(encoding="utf-8")
    links = [line.split("](#")[1].split(")")[0] for line in text.splitlines() if line.startswith("| [")]
    # headings in order: Topic: c++ (active) -> topic-c; Topic: c (disabled) -> topic-c-1;
    # Topic: c++ (disabled) -> topic-c-2
    assert links == ["topic-c-1", "topic-c"]  # contents sorted by name: c, then c++


def test_a_compiled_file_of_an_older_format_is_built_anew_not_rekeyed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """After an upgrade that changes the compiled format, `bank index` must not stamp the new
    header on the old body (the re-key path for a seen-only change keeps the body)."""
    monkeypatch.setattr(derived, "RACY_NS", -(10**18))  # files written just now count as settled
    # INDEX.md as one too big to hold: the re-key by shape is then what is tried
    monkeypatch.setattr(render, "PATCH_MOST_BYTES", 0)
    bank = make_bank(tmp_path / "b", [lesson("one", commands=["make"]), lesson("two", commands=["tox"])])
    path = render.compiled_path(bank)
    render.regenerate(Bank.open(bank.root))  # the cache now knows the file it wrote
    monkeypatch.setattr(compiled_read, "FORMAT", compiled_read.FORMAT + 1)
    monkeypatch.setattr(compiled_bytes, "FORMAT", compiled_read.FORMAT)
    rekeyed: list[object] = []
    real_rekey = compiled_update._rekey
    monkeypatch.setattr(compiled_update, "_rekey", lambda *a: rekeyed.append(real_rekey(*a)) or rekeyed[-1])
    render.regenerate(Bank.open(bank.root))
    assert rekeyed and all(r is None for r in rekeyed)  # tried, and declined the old format
    upgraded = path.read_bytes()
    path.unlink()
    render.regenerate(Bank.open(bank.root))
    assert upgraded == path.read_bytes()
    assert int.from_bytes(upgraded[8:12], "little") == compiled_read.FORMAT
