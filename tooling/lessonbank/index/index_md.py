"""INDEX.md as data: table cells that escape what breaks a row, and a parser that reads it back.

Standard library only and no `re`: the hooks fall back to `parse` when their compiled
index is stale, so this module is on the hot path.
"""

from __future__ import annotations

# Neither `typing` nor `dataclasses` (which pulls in `inspect` and `re`): ~40 ms at start-up.
COLUMNS = (
    "lesson", "title", "when this bites you", "do", "tools", "commands", "paths",
    "keywords", "tags", "seen", "priority", "confidence",
)  # fmt: skip
# Characters that markdown (or the table) would read as syntax, and `@`, which Claude Code reads
# as a file import; each is escaped with '\'.
_SPECIAL = frozenset("\\`*_[]<>|&~@")
_ITEM_SEP = "<br>"


class IndexRow:
    """One lesson as the hooks see it."""

    __slots__ = FIELDS = (
        "slug", "title", "when", "do", "tools", "commands", "paths", "keywords", "tags",
        "seen", "priority", "confidence",
    )  # fmt: skip

    def __init__(
        self,
        slug: str,
        title: str,
        when: str,
        do: str,
        tools: list[str] | None = None,
        commands: list[str] | None = None,
        paths: list[str] | None = None,
        keywords: list[str] | None = None,
        tags: list[str] | None = None,
        seen: int = 1,
        priority: int = 5,
        confidence: float = 0.7,
    ) -> None:
        self.slug, self.title, self.when, self.do = slug, title, when, do
        self.tools = tools or []
        self.commands = commands or []
        self.paths = paths or []
        self.keywords = keywords or []
        self.tags = tags or []
        self.seen, self.priority, self.confidence = seen, priority, confidence

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, IndexRow):
            return NotImplemented
        return all(getattr(self, f) == getattr(other, f) for f in self.FIELDS)

    def __repr__(self) -> str:
        return "IndexRow(" + ", ".join(f"{f}={getattr(self, f)!r}" for f in self.FIELDS) + ")"

    @property
    def summary(self) -> str:
        """The one-line fallback when the full text does not fit the budget."""
        return f"{self.title}: {self.do}" if len(self.do) <= 100 else self.title

    @property
    def full(self) -> str:
        """The text handed to an agent."""
        when = self.when.strip().rstrip(".")
        if when[:1].isupper() and not when[1:2].isupper():
            when = when[:1].lower() + when[1:]
        return f"{self.title}. When {when}: {self.do}"


def escape(text: str) -> str:
    """One table cell: newlines folded to spaces, markdown syntax escaped with backslashes."""
    flat = " ".join(text.split())
    return "".join("\\" + ch if ch in _SPECIAL else ch for ch in flat)


def cell_list(items: list[str]) -> str:
    """Several values in one cell, separated by `<br>` (a real '<' is always escaped)."""
    return _ITEM_SEP.join(escape(item) for item in items)


def row_line(cells: list[str]) -> str:
    """A markdown table row from escaped cells."""
    return "| " + " | ".join(cells) + " |"


def split_row(line: str) -> list[str]:
    """Split a table row into raw cells on unescaped '|'; escapes are kept for `unescape`."""
    line = line.strip()
    if line.startswith("|"):
        line = line[1:]
    cells: list[str] = []
    pending: str | None = None
    # Split on every '|', then glue back the pieces whose '|' was escaped: a piece ending in an
    # odd number of backslashes. Per cell, not per character: the hooks' fallback reads this.
    for piece in line.split("|"):
        pending = piece if pending is None else pending + "|" + piece
        if (len(pending) - len(pending.rstrip("\\"))) % 2:
            continue
        cells.append(pending.strip())
        pending = None
    if pending is not None:
        cells.append(pending.strip())
    if cells and not cells[-1]:
        cells.pop()
    return cells


def unescape(cell: str) -> str:
    """Undo `escape` for one value."""
    if "\\" not in cell:
        return cell
    out: list[str] = []
    i = 0
    while i < len(cell):
        if cell[i] == "\\" and i + 1 < len(cell):
            out.append(cell[i + 1])
            i += 2
        else:
            out.append(cell[i])
            i += 1
    return "".join(out)


def unescape_list(cell: str) -> list[str]:
    """Undo `cell_list`: split on unescaped `<br>`, then unescape each value."""
    if not cell:
        return []
    return [unescape(part) for part in cell.split(_ITEM_SEP)]


class IndexFormatError(ValueError):
    """INDEX.md does not hold the table this version writes."""


def table_lines(text):  # (str | Iterable[str]) -> Iterator[tuple[int, str]], unannotated: `typing` costs the hooks' fallback
    """(line number, stripped line) of each row of INDEX.md's lesson table, header and rule left
    out, one at a time (50,000 rows are 24 MB); `text` is the file's text or its lines as
    str.splitlines gives them. Raises IndexFormatError when there is no table."""
    in_table = False
    for number, line in enumerate(text.splitlines() if isinstance(text, str) else text, start=1):
        stripped = line.strip()
        if not in_table:
            if stripped.startswith("|") and [c.strip() for c in split_row(stripped)] == list(COLUMNS):
                in_table = True
            continue
        if not stripped.startswith("|"):
            break
        if stripped.startswith("|---") or stripped.startswith("| ---"):
            continue
        yield number, stripped
    if not in_table:
        raise IndexFormatError("INDEX.md has no lesson table: run `bank index`")


def parse_row(line: str, number: int) -> IndexRow:
    """One table row (a stripped line, `number` for messages). Raises IndexFormatError."""
    cells = split_row(line)
    if len(cells) != len(COLUMNS):
        raise IndexFormatError(f"INDEX.md:{number}: {len(cells)} cells, expected {len(COLUMNS)}")
    link = cells[0]
    if not (link.startswith("[") and "](" in link):
        raise IndexFormatError(f"INDEX.md:{number}: first cell is not a [slug](path) link")
    try:
        return IndexRow(
            slug=link[1 : link.index("](")],
            title=unescape(cells[1]),
            when=unescape(cells[2]),
            do=unescape(cells[3]),
            tools=unescape_list(cells[4]),
            commands=unescape_list(cells[5]),
            paths=unescape_list(cells[6]),
            keywords=unescape_list(cells[7]),
            tags=unescape_list(cells[8]),
            seen=int(cells[9]),
            priority=int(cells[10]),
            confidence=float(cells[11]),
        )
    except ValueError:
        raise IndexFormatError(f"INDEX.md:{number}: seen, priority or confidence is not a number") from None


def parse(text: str) -> list[IndexRow]:
    """Read INDEX.md's lesson table back into rows. Raises IndexFormatError on a broken table."""
    return [parse_row(line, number) for number, line in table_lines(text)]
