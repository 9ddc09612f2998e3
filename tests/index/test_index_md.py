"""INDEX.md: escaping that survives any text, a parser that reads it back, determinism."""

from __future__ import annotations

import pytest
from markdown_it import MarkdownIt

from lessonbank.bank import pages
from lessonbank.bank.lesson import Lesson
from lessonbank.index import index_md

NASTY = [
    "plain words",
    "a | pipe and a \\| escaped pipe",
    "back\\slash at the end\\",
    "<br> literal and <script>",
    "`code` *stars* _under_ [link](x) ~tilde~ &amp;",
    "regex (?!.*--forceExit)\\bjest\\b",
]


def make(slug: str, text: str, **kw: object) -> Lesson:
    base: dict[str, object] = dict(
        id="01J" + slug.upper().replace("-", "")[:23].ljust(23, "0"),
        slug=slug,
        title=f"Title {text}",
        when=f"when {text}",
        do=f"do {text}",
        promote_to="rule:x",
        commands=[text, "\\bpytest\\b"],
        paths=["src/**/*.py", text],
        keywords=["k1", text],
        tags=["tool:pytest"],
    )
    base.update(kw)
    return Lesson(**base)  # type: ignore[arg-type]


def render_table(lessons: list[Lesson]) -> str:
    lines = [index_md.row_line(list(index_md.COLUMNS)), index_md.row_line(["---"] * len(index_md.COLUMNS))]
    lines += [index_md.row_line(pages.row_cells(x)) for x in pages.index_lessons(lessons)]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("text", NASTY)
def test_round_trip_through_the_table(text: str) -> None:
    lesson = make("nasty", text, priority=7, confidence=0.25, seen=3)
    (row,) = index_md.parse(render_table([lesson]))
    assert (row.slug, row.title, row.when, row.do) == ("nasty", lesson.title, lesson.when, lesson.do)
    assert row.commands == lesson.commands and row.paths == lesson.paths
    assert row.keywords == lesson.keywords and row.tags == lesson.tags
    assert (row.seen, row.priority, row.confidence) == (3, 7, 0.25)
    assert row == index_md.IndexRow(**{f: getattr(row, f) for f in index_md.IndexRow.FIELDS})


@pytest.mark.parametrize("text", NASTY)
def test_markdown_renders_the_table_with_the_original_text(text: str) -> None:
    """A markdown renderer sees one row of 12 cells, and the cell shows the original text."""
    tokens = MarkdownIt("commonmark").enable("table").parse(render_table([make("nasty", text)]))
    cells = [t for t in tokens if t.type == "inline"]
    assert len(cells) == 2 * len(index_md.COLUMNS)
    do_cell = cells[len(index_md.COLUMNS) + 3]
    shown = "".join(
        child.content for child in do_cell.children or [] if child.type in ("text", "code_inline")
    )
    assert shown == f"do {text}"


def test_newlines_fold_to_spaces() -> None:
    assert index_md.escape("a\nb\r\n  c") == "a b c"


def test_only_active_lessons_are_listed_sorted_by_slug() -> None:
    lessons = [make("b-two", "x"), make("a-one", "y"), make("c-off", "z", status="disabled")]
    assert [r.slug for r in index_md.parse(render_table(lessons))] == ["a-one", "b-two"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("no table here\n", "no lesson table"),
        (render_table([make("a", "x")]).replace(" | 0.7 |", " |"), "11 cells, expected 12"),
        (render_table([make("a", "x")]).replace("| 5 |", "| five |"), "not a number"),
    ],
)
def test_broken_tables_are_reported(text: str, message: str) -> None:
    with pytest.raises(index_md.IndexFormatError, match=message):
        index_md.parse(text)


def test_random_cells_survive_escape_and_split() -> None:
    """Backslashes and pipes in any order and number: every cell comes back whole."""
    import random

    rng = random.Random(2026)
    for _ in range(3000):
        cells = [
            "".join(rng.choice("ab\\| <>_") for _ in range(rng.randrange(0, 9))).strip() for _ in range(5)
        ]
        cells = [" ".join(c.split()) for c in cells]
        line = index_md.row_line([index_md.escape(c) for c in cells])
        assert [index_md.unescape(c) for c in index_md.split_row(line)] == cells, line
