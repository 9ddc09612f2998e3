"""The trial as an SVG chart, written as text: running failed checks per check run by arm, and the ratio. Pure."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from xml.sax.saxutils import escape

from lessonbank.trial.stats import (
    ALPHA,
    CONFIDENCE,
    MIN_DROP,
    WITH,
    WITHOUT,
    Point,
    Verdict,
    fmt_num,
)

WIDTH, HEIGHT = 760, 460
# Main panel (running rates) and the rate-ratio strip below it.
LEFT, RIGHT, TOP, BOTTOM = 70, 730, 70, 300
RR_TOP, RR_BOTTOM = 360, 400
COLOURS = {WITH: "#1b6fb3", WITHOUT: "#d95f02"}


def _f(value: float) -> str:
    """Coordinates with one decimal, so the same data always gives the same bytes."""
    text = f"{value:.1f}"
    return "0.0" if text == "-0.0" else text


def _nice_max(value: float) -> float:
    """A round axis maximum at or above `value`."""
    if value <= 0:
        return 1.0
    exp = 10 ** math.floor(math.log10(value))
    for step in (1, 2, 2.5, 5, 10):
        if step * exp >= value:
            return step * exp
    return 10 * exp


def _text(x: float, y: float, body: str, size: int = 12, anchor: str = "start", colour: str = "#222") -> str:
    return (
        f'<text x="{_f(x)}" y="{_f(y)}" font-size="{size}" text-anchor="{anchor}" '
        f'fill="{colour}">{escape(body)}</text>'
    )


def _line(
    x1: float, y1: float, x2: float, y2: float, colour: str = "#999", extra: str = "", width: int = 1
) -> str:
    return (
        f'<line x1="{_f(x1)}" y1="{_f(y1)}" x2="{_f(x2)}" y2="{_f(y2)}" stroke="{colour}" '
        f'stroke-width="{width}"{extra}/>'
    )


def _series(
    points: Sequence[Point], arm: str, sx: Callable[[float], float], sy: Callable[[float], float]
) -> list[str]:
    """One arm's band (the session-robust interval of its running rate) and its line."""
    mine = [p for p in points if p.arm == arm]
    if not mine:
        return []
    upper = [f"{_f(sx(p.order))},{_f(sy(p.high))}" for p in mine]
    lower = [f"{_f(sx(p.order))},{_f(sy(p.low))}" for p in reversed(mine)]
    line = [f"{_f(sx(p.order))},{_f(sy(p.rate))}" for p in mine]
    colour = COLOURS[arm]
    return [
        f'<polygon points="{" ".join(upper + lower)}" fill="{colour}" fill-opacity="0.15" stroke="none"/>',
        f'<polyline points="{" ".join(line)}" fill="none" stroke="{colour}" stroke-width="2"/>',
    ]


def svg(verdict: Verdict, points: Sequence[Point]) -> str:
    """The chart's SVG text: deterministic for the same verdict and points."""
    last = max((p.order for p in points), default=0)
    # Early intervals are very wide: the axis follows the rates and clips the bands.
    ymax = _nice_max(2 * max((p.rate for p in points), default=0.5))

    def sx(order: float) -> float:
        return LEFT + (RIGHT - LEFT) * (order / last if last else 0.0)

    def sy(rate: float) -> float:
        return BOTTOM - (BOTTOM - TOP) * min(rate, ymax) / ymax

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif">',
        f'<rect x="0" y="0" width="{WIDTH}" height="{HEIGHT}" fill="#ffffff"/>',
        _text(LEFT, 28, f"lessonbank trial: {verdict.verdict.upper()}", 16),
        _text(LEFT, 48, f"{verdict.reason}", 11, colour="#444"),
    ]
    # Axes and ticks of the running-rate panel.
    out.append(_line(LEFT, BOTTOM, RIGHT, BOTTOM, "#444"))
    out.append(_line(LEFT, TOP, LEFT, BOTTOM, "#444"))
    for i in range(5):
        value = ymax * i / 4
        y = sy(value)
        out.append(_line(LEFT - 4, y, RIGHT, y, "#e5e5e5" if i else "#444"))
        out.append(_text(LEFT - 8, y + 4, f"{value:.2f}", 10, "end"))
    for i in range(5):
        order = round(last * i / 4)
        out.append(_text(sx(order), BOTTOM + 16, str(order + 1 if points else 0), 10, "middle"))
    out.append(_text((LEFT + RIGHT) / 2, BOTTOM + 32, "trial session (assignment order)", 11, "middle"))
    out.append(
        f'<text x="18" y="{_f((TOP + BOTTOM) / 2)}" font-size="11" text-anchor="middle" '
        f'transform="rotate(-90 18 {_f((TOP + BOTTOM) / 2)})">failed checks per check run (running, {CONFIDENCE:.0%} band)</text>'
    )
    if not points:
        out.append(
            _text((LEFT + RIGHT) / 2, (TOP + BOTTOM) / 2, "no trial sessions yet", 14, "middle", "#888")
        )
    for arm in (WITHOUT, WITH):
        out += _series(points, arm, sx, sy)
    # Legend.
    for i, arm in enumerate((WITH, WITHOUT)):
        x = RIGHT - 250 + i * 130
        out.append(f'<rect x="{x}" y="{TOP - 14}" width="12" height="12" fill="{COLOURS[arm]}"/>')
        out.append(_text(x + 16, TOP - 4, f"{arm} lessons ({verdict.counts[arm]})", 11))
    out += _ratio_strip(verdict)
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _ratio_strip(verdict: Verdict) -> list[str]:
    """The ratio with its interval on a 0-2 axis, beside 1 (no change) and the rule's threshold."""
    rr = verdict.comparison
    top = 2.0

    def rx(value: float) -> float:
        return LEFT + (RIGHT - LEFT) * min(max(value, 0.0), top) / top

    mid = (RR_TOP + RR_BOTTOM) / 2
    out = [
        _text(
            LEFT,
            RR_TOP - 14,
            f"failed checks per check run, with/without lessons, {CONFIDENCE:.0%} interval "
            f"(rule: {verdict.planned} sessions per arm, test at {ALPHA:.0%} and ratio at most {1 - MIN_DROP:.2f})",
            11,
        ),
        _line(LEFT, RR_BOTTOM, RIGHT, RR_BOTTOM, "#444"),
    ]
    for i in range(9):
        value = top * i / 8
        out.append(_line(rx(value), RR_BOTTOM, rx(value), RR_BOTTOM + 4, "#444"))
        out.append(_text(rx(value), RR_BOTTOM + 16, f"{value:.2f}", 10, "middle"))
    out.append(_line(rx(1.0), RR_TOP, rx(1.0), RR_BOTTOM, "#444", ' stroke-dasharray="4 3"'))
    threshold = 1 - MIN_DROP
    out.append(_line(rx(threshold), RR_TOP, rx(threshold), RR_BOTTOM, "#2a9d3a", ' stroke-dasharray="2 2"'))
    if rr.low is not None and rr.high is not None:
        high = rr.high if not math.isinf(rr.high) else top * 2
        out.append(_line(rx(rr.low), mid, rx(high), mid, "#222", width=2))
        out.append(_line(rx(rr.low), mid - 6, rx(rr.low), mid + 6, "#222"))
        if high <= top:
            out.append(_line(rx(high), mid - 6, rx(high), mid + 6, "#222"))
    if rr.ratio is not None and not math.isinf(rr.ratio):
        out.append(f'<circle cx="{_f(rx(rr.ratio))}" cy="{_f(mid)}" r="4" fill="#222"/>')
    label = f"ratio {fmt_num(rr.ratio)} ({fmt_num(rr.low)} to {fmt_num(rr.high)})"
    out.append(_text(LEFT, RR_BOTTOM + 40, label, 11))
    return out
