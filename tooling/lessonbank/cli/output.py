"""Output helpers: plain aligned tables for people, JSON for scripts, the lesson list's filters and warnings."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from lessonbank.bank.store import Bank


def table(headers: list[str], rows: list[list[str]], max_width: int = 60) -> str:
    """A plain text table; long cells are cut with '…' so rows stay on one line."""
    return table_of_columns(headers, [list(column) for column in zip(*rows, strict=True)] if rows else [[] for _ in headers], max_width)


def table_of_columns(headers: list[str], columns: list[list[str]], max_width: int = 60) -> str:
    """`table` of its columns (a list of cells each, the same length)."""
    # Column by column, each row padded by one format string: `bank list` of 10,000 lessons is
    # 70,000 cells, and a call per cell was a fifth of the command.
    widths = []
    for i, (header, column) in enumerate(zip(headers, columns, strict=True)):
        width = max(map(len, column), default=0)
        if width > max_width:
            column = columns[i] = [c if len(c) <= max_width else c[: max_width - 1] + "…" for c in column]
            width = max(map(len, column), default=0)
        widths.append(max(len(header), width))
    # the last column unpadded: each line's trailing spaces are stripped anyway
    line = "  ".join([*(f"{{:<{w}}}" for w in widths[:-1]), "{}"]).format
    lines = [line(*headers).rstrip()]
    lines += [line(*row).rstrip() for row in zip(*columns, strict=True)]
    if not columns or not columns[0]:
        lines.append("(none)")
    return "\n".join(lines)


def emit_json(data: Any) -> None:
    """Print `data` as indented, key-sorted JSON."""
    import json  # here: `bank list` prints no JSON

    click.echo(json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False, default=str))


def keep_row(row: tuple, tag: str | None, status: str | None, source: str | None) -> bool:
    """Does a summary row (slug, type, seen, priority, status, source, title, tags) pass the filters?"""
    _, _, _, _, st, so, _, tags = row
    return (
        (not tag or tag in tags or any(t.partition(":")[2] == tag for t in tags))
        and (not status or st == status)
        and (not source or so == source)
    )


def warn_problems(bank: Bank) -> None:
    """Name each lesson file the bank skipped as malformed, on stderr."""
    for p in bank.load_problems:
        click.echo(f"warning: skipped {bank.relative(p.path)}:{p.line}: {p.message}", err=True)
