"""What the lessons become in the generated files, before any template runs: rows, topics, the templates' context.

A lesson's INDEX.md row (`index_row`, the one place a lesson becomes a row), the topic BANK.md
lists it under and the link targets of BANK.md's headings, and `context`: what INDEX.md.j2 and
BANK.md.j2 are given for every lesson's (slug, status, row, section, topic). No Jinja here
(bank.render renders); it may import what the bank may.
"""

from __future__ import annotations

import re
from operator import itemgetter
from typing import TYPE_CHECKING, Any, NamedTuple

from lessonbank.bank.fields import STATUSES
from lessonbank.bank.inert import inert_lesson
from lessonbank.index import index_md

if TYPE_CHECKING:  # the lesson module imports YAML: only annotations need it here
    from lessonbank.bank.lesson import Lesson

# BANK.md groups each status's lessons by topic: the first tag of the first of these categories.
TOPIC_CATEGORIES = ("tool", "area", "lang")
OTHER_TOPIC = "other"
TOPIC_JUNK = re.compile(r"[^a-z0-9.+#_-]+")


class Entry(NamedTuple):
    """What one lesson gives INDEX.md and BANK.md: its row (None: not in INDEX.md) and its section
    (a str, or a derived_file.Stored one, which the template reads when it writes it out)."""

    slug: str
    status: str
    row: str | None
    section: Any
    topic: str



def number(value: float) -> str:
    return f"{value:g}"


def row_cells(lesson: Lesson) -> list[str]:
    """The escaped cells of a lesson's INDEX.md row, in COLUMNS order."""
    return [
        f"[{lesson.slug}](lessons/{lesson.slug}.md)",
        index_md.escape(lesson.title),
        index_md.escape(lesson.when),
        index_md.escape(lesson.do),
        index_md.cell_list(lesson.tools),
        index_md.cell_list(lesson.commands),
        index_md.cell_list(lesson.paths),
        index_md.cell_list(lesson.keywords),
        index_md.cell_list(lesson.tags),
        str(lesson.seen),
        str(lesson.priority),
        number(lesson.confidence),
    ]


def index_row(lesson: Lesson) -> str | None:
    """A lesson's INDEX.md row, or None for one INDEX.md leaves out (not active). The one place
    where a lesson becomes a row."""
    return index_md.row_line(row_cells(lesson)) if lesson.status == "active" else None


def index_lessons(lessons: list[Lesson]) -> list[Lesson]:
    """The lessons INDEX.md lists, sorted by slug."""
    return sorted((x for x in lessons if index_row(x) is not None), key=lambda x: x.slug)


def topic(tags: list[str] | tuple[str, ...]) -> str:
    """The BANK.md group a lesson is listed under: its first `tool:` tag's value, else `area:`'s,
    else `lang:`'s, else "other"; lower case, with only letters, digits and `.+#_-` kept."""
    for category in TOPIC_CATEGORIES:
        for tag in tags:
            cat, _, value = tag.partition(":")
            if cat.strip().lower() == category:
                name = TOPIC_JUNK.sub("-", value.strip().lower()).strip("-")
                if name:
                    return name
    return OTHER_TOPIC


def anchor(heading: str, used: dict[str, int] | None = None) -> str:
    """The link target GitHub gives a heading: punctuation but `-` and `_` dropped, spaces made
    `-`; with `used` (the targets given so far, and how often), a repeat gets `-1`, `-2`, …"""
    base = re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
    if used is None:
        return base
    target, n = base, used.get(base, 0)
    while target in used:
        n += 1
        target = f"{base}-{n}"
    used[base] = n
    used[target] = used.get(target, 0)
    return target


def topics(items: list[Entry]) -> tuple[list, list]:
    """BANK.md's contents (topic, anchor of its first heading, count per status) and its sections
    (status, count, [(topic, sections)]): topics sorted by name, "other" last; lessons by slug
    within each. Topic headings read "Topic: <name>", which the template's own headings and
    lesson titles do not, so their targets depend only on each other (`c`, `c#` and `c++` are `topic-c`, `topic-c-1`, …)."""
    by_status: dict[str, dict[str, list[Any]]] = {s: {} for s in STATUSES}
    for item in items:
        by_status[item.status].setdefault(item.topic, []).append(item.section)
    order = sorted({name for groups in by_status.values() for name in groups}, key=lambda n: (n == OTHER_TOPIC, n))
    used: dict[str, int] = {}
    first: dict[str, str] = {}
    for s in STATUSES:  # in the order the headings appear: each one takes its target
        for n in order:
            if n in by_status[s]:
                target = anchor(f"Topic: {n}", used)
                first.setdefault(n, target)
    contents = [(n, first[n], [len(by_status[s].get(n, ())) for s in STATUSES]) for n in order]
    sections = [(s, sum(len(v) for v in by_status[s].values()), [(n, by_status[s][n]) for n in order if n in by_status[s]])
                for s in STATUSES]  # fmt: skip
    return contents, sections


def context(items: list[Entry], lessons: list[Lesson] | None) -> dict[str, Any]:
    """The templates' context for each lesson's entry; `lessons` (a custom template's) sorted alike."""
    items = sorted(items, key=itemgetter(0))  # by slug
    contents, grouped = topics(items)
    ctx: dict[str, Any] = {
        "columns": index_md.COLUMNS,
        "header": index_md.row_line(list(index_md.COLUMNS)),
        "rule": index_md.row_line(["---"] * len(index_md.COLUMNS)),
        "rows": [x.row for x in items if x.row is not None],
        "sections": [(s, [x.section for x in items if x.status == s]) for s in STATUSES],
        "statuses": STATUSES,
        "contents": contents,
        "grouped": grouped,
        "count": len(items),
    }
    if lessons is not None:
        shown = [inert_lesson(x) for x in sorted(lessons, key=lambda x: x.slug)]  # BANK.md prose: no @imports, no raw HTML
        ctx["lessons"] = shown
        ctx["groups"] = [(s, [x for x in shown if x.status == s]) for s in STATUSES]
    return ctx

