"""`bank replay --chart`: the replay's figures as a plain SVG, written as text (the same report, the same bytes). Pure.

Top: per kind of later failure, the failures, those repeating an earlier session's error, and
those intercepted. Bottom: per lesson, its fires on calls that failed and on calls that succeeded.
"""

from __future__ import annotations

from xml.sax.saxutils import escape

from lessonbank.scan.replay import Report

WIDTH = 760
LABEL = 230  # left margin for the row labels
ROW = 22
BAR = 14
COLOURS = {"failures": "#d0d0d0", "repeats": "#f0a35e", "intercepted": "#1b6fb3",
           "on_failure": "#1b6fb3", "on_success": "#d95f02"}  # fmt: skip


def _text(x: float, y: float, body: str, size: int = 12, anchor: str = "start", weight: str = "normal") -> str:
    return (f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" font-weight="{weight}" '
            f'fill="#222">{escape(body)}</text>')  # fmt: skip


def _rect(x: float, y: float, w: float, h: float, colour: str) -> str:
    return f'<rect x="{x:.1f}" y="{y:.1f}" width="{max(w, 0.0):.1f}" height="{h:.1f}" fill="{colour}"/>'


def _legend(y: float, items: list[tuple[str, str]]) -> list[str]:
    out, x = [], float(LABEL)
    for label, colour in items:
        out += [_rect(x, y - 10, 12, 12, colour), _text(x + 16, y, label, 11)]
        x += 24 + 7 * len(label)
    return out


def _scale(top: int) -> float:
    return (WIDTH - LABEL - 60) / max(1, top)


def svg(report: Report) -> str:
    """The chart of one replay report."""
    kinds = sorted(report.kinds.items(), key=lambda kv: (-kv[1].failures, kv[0]))
    lessons = report.sorted_lessons()[:20]
    height = 120 + ROW * (len(kinds) + len(lessons)) + (60 if lessons else 0)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
             f'viewBox="0 0 {WIDTH} {height}" font-family="sans-serif">',
             _rect(0, 0, WIDTH, height, "#ffffff"),
             _text(20, 24, f"bank replay: {report.repeats} of {report.failures} later failures repeat an earlier "
                           f"session's; {report.intercepted} intercepted", 14, weight="bold"),
             _text(20, 42, f"learned from {report.learned} sessions before {report.cut[:19]}, {report.accepted} "
                           f"lessons; {report.fires} fires, {report.on_success} on calls that succeeded, "
                           f"~{report.tokens} tokens", 11)]  # fmt: skip
    y = 70.0
    parts += _legend(y, [("failures", COLOURS["failures"]), ("repeats", COLOURS["repeats"]),
                         ("intercepted", COLOURS["intercepted"])])  # fmt: skip
    scale = _scale(max([v.failures for _, v in kinds] or [1]))
    for name, count in kinds:
        y += ROW
        parts.append(_text(LABEL - 8, y + BAR - 3, name, anchor="end"))
        for field in ("failures", "repeats", "intercepted"):
            parts.append(_rect(LABEL, y, getattr(count, field) * scale, BAR, COLOURS[field]))
        parts.append(_text(LABEL + count.failures * scale + 6, y + BAR - 3,
                           f"{count.failures} / {count.repeats} / {count.intercepted}", 11))  # fmt: skip
    if lessons:
        y += ROW + 30
        parts += _legend(y, [("fires on calls that failed", COLOURS["on_failure"]),
                             ("fires on calls that succeeded", COLOURS["on_success"])])  # fmt: skip
        scale = _scale(max(v.fires for v in lessons))
        for lesson in lessons:
            y += ROW
            label = lesson.slug if len(lesson.slug) <= 34 else lesson.slug[:33] + "…"
            parts.append(_text(LABEL - 8, y + BAR - 3, label, 11, anchor="end"))
            parts.append(_rect(LABEL, y, lesson.on_failure * scale, BAR, COLOURS["on_failure"]))
            parts.append(_rect(LABEL + lesson.on_failure * scale, y, lesson.on_success * scale, BAR,
                               COLOURS["on_success"]))  # fmt: skip
            parts.append(_text(LABEL + lesson.fires * scale + 6, y + BAR - 3,
                               f"{lesson.fires} fires, {lesson.intercepted} intercepted", 11))  # fmt: skip
    parts.append("</svg>")
    return "\n".join(parts) + "\n"
