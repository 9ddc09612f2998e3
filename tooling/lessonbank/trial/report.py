"""The trial's verdict as text and as plain data: the report, the status line and --json. Pure."""

from __future__ import annotations

import math
from typing import Any

from lessonbank.trial import inference
from lessonbank.trial.stats import (
    ALPHA,
    COLLECTING,
    CONFIDENCE,
    HARM_ALPHA,
    HARMS,
    LESSON_ALPHA,
    LESSON_MIN_SESSIONS,
    METHOD,
    METHOD_SHORT,
    MIN_DROP,
    MIN_FAILING_SESSIONS,
    MIN_PLANNED,
    NO_EFFECT,
    SHUFFLES,
    WITH,
    WITHOUT,
    Arm,
    Verdict,
    fmt_num,
    p_text,
    rule_text,
)

# How often the rule (the test at ALPHA) says "helps", measured by `python3 benchmarks/trial_calibration.py --power`
# (2,000 simulated trials per cell, --seed 1, the trial's own assignment and analysis): (sessions per arm,
# no effect, 20% drop, 40% drop). Re-measure and update when the rule or the test changes.
POWER_SCENARIO = (
    "simulated sessions of 1 to ~8 turns, about 3 checks a turn, 30% of checks failing on average, "
    "some sessions much harder than others"
)
POWER: tuple[tuple[int, float, float, float], ...] = (
    (30, 0.042, 0.148, 0.438),
    (60, 0.037, 0.237, 0.694),
    (100, 0.035, 0.327, 0.881),
    (200, 0.021, 0.419, 0.988),
)


def power_lines(size: int) -> list[str]:
    """The power table `bank test` shows when a trial starts, the chosen size marked."""
    lines = [f'How often a trial of each size says "helps" ({POWER_SCENARIO}):']
    lines.append(f"  {'sessions per arm':>16}  {'no effect':>9}  {'20% drop':>8}  {'40% drop':>8}")
    for n, null, d20, d40 in POWER:
        mark = "  <- this trial" if n == size else ""
        lines.append(f"  {n:>16}  {null:>9.1%}  {d20:>8.1%}  {d40:>8.1%}{mark}")
    lines.append(
        "  A 20% drop is the smallest the rule calls help, so even a real one is found less than half the "
        "time at these sizes; "
        'a trial that says "no effect" has not shown that lessons do nothing.'
    )
    return lines


def _share(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1%}"


def _arm_line(name: str, arm: Arm) -> str:
    return (
        f"  {name:<8} {arm.sessions:>8} {arm.turns:>6} {arm.checks:>7} {arm.failed:>7} "
        f"{fmt_num(arm.failed_per_check):>13} {_share(arm.ended_failing_share):>14} "
        f"{fmt_num(arm.checks_per_turn):>12}"
    )


def _range(comparison: inference.Comparison) -> str:
    """The interval in words: from a drop of x to a rise of y."""
    low, high = comparison.low, comparison.high
    assert low is not None and high is not None

    def words(ratio: float) -> str:
        if ratio <= 1:
            return f"{1 - ratio:.0%} fewer"
        return f"{ratio - 1:.0%} more" if ratio < 2 else f"{ratio:.1f} times as many"

    return f"anything from {words(low)} to {words(high)} failed checks per check run"


def report_lines(verdict: Verdict, attribution: bool = True) -> list[str]:
    """The verdict as text: the rule, the decision, the arms, the estimate, per-lesson harm tests."""
    c = verdict.comparison
    lines = [rule_text(verdict.planned), "", f"Verdict: {verdict.verdict.upper()} ({verdict.reason})."]
    label = "analysed" if verdict.verdict != COLLECTING else "so far"
    lines += [
        f"  {'arm':<8} {'sessions':>8} {'turns':>6} {'checks':>7} {'failed':>7} {'failed/check':>13} "
        f"{'turns ending':>14} {'checks/turn':>12}",
        f"  {'':<8} {label:>8} {'':>6} {'':>7} {'':>7} {'':>13} {'failing':>14}",
        _arm_line(WITH, verdict.with_arm),
        _arm_line(WITHOUT, verdict.without_arm),
    ]
    if verdict.beyond_plan:
        lines.append(
            f"  ({verdict.beyond_plan} session(s) after the planned {verdict.planned} per arm are not analysed.)"
        )
    if verdict.verdict == COLLECTING:
        lines.append(
            f"No estimate, interval or test before {verdict.planned} sessions in each arm: acting on an early "
            "look is how a trial finds help that is not there."
        )
    elif c.low is not None and c.high is not None:
        lines.append(
            f"Failed checks per check run, with/without lessons: {fmt_num(c.ratio)}, "
            f"{CONFIDENCE:.0%} interval {fmt_num(c.low)} to {fmt_num(c.high)}; one-sided {p_text(c.p_lower)}."
        )
        lines.append(f"  The data are consistent with {_range(c)}.")
    else:
        lines.append("Failed checks per check run, with/without lessons: no interval (no checks in an arm).")
    lines.append(f"Method: {METHOD}.")
    lines.append(
        "Turns ending with a check still failing, and checks per turn, are shown beside it but not tested: "
        "fewer checks is not fewer mistakes."
    )
    if verdict.verdict == COLLECTING:
        lines.append(f"Keep `bank test` on: the verdict comes at {verdict.planned} sessions in each arm.")
    elif verdict.too_few:
        lines.append(
            "The data are too few to say anything, for or against lessons. No help was shown, so the "
            "honest move is `bank off` (or `bank trial reset` with a larger planned size)."
        )
    elif verdict.verdict in (NO_EFFECT, HARMS):
        lines.append("No help was shown, so the honest move is `bank off`.")
    if attribution and verdict.lessons:
        lines += [
            "",
            "Per lesson (exploratory; sessions it was or would have been handed to; failed checks per check run):",
        ]
        for item in verdict.lessons:
            mark = "  HARM" if item.flag else ""
            tested = f", Holm-adjusted {p_text(item.p_adjusted)}" if item.p_adjusted is not None else ""
            lines.append(
                f"  {item.slug}: with {item.with_arm.sessions} sessions {fmt_num(item.with_arm.failed_per_check)}, "
                f"without {item.without_arm.sessions} sessions {fmt_num(item.without_arm.failed_per_check)}"
                f"{tested}{mark}"
            )
        flagged = sum(1 for item in verdict.lessons if item.flag)
        lines.append(
            f"{flagged} lesson(s) shown as doing harm. A lesson is tested only at the planned size with "
            f"{LESSON_MIN_SESSIONS}+ sessions in each arm, and shown as doing harm only when the one-sided "
            f"test, Holm-corrected across the tested lessons, rejects at {LESSON_ALPHA:.0%}; no lesson is ever said "
            "not to help from these numbers."
        )
    return lines


def status_line(verdict: Verdict) -> str:
    """One line: the verdict or the count so far."""
    if verdict.verdict == COLLECTING:
        return (
            f"trial: collecting {verdict.counts[WITH]}/{verdict.planned} sessions with lessons, "
            f"{verdict.counts[WITHOUT]}/{verdict.planned} without; no verdict before {verdict.planned} in each arm"
        )
    return f"trial: {verdict.verdict} — {verdict.reason}"


def _plain(value: Any) -> Any:
    """Infinite floats as the string "inf" so the output stays strict JSON."""
    if isinstance(value, float) and math.isinf(value):
        return "inf"
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def verdict_json(verdict: Verdict) -> dict[str, Any]:
    """The verdict as plain data for --json."""
    c = verdict.comparison
    data = {
        "verdict": verdict.verdict,
        "reason": verdict.reason,
        "planned": verdict.planned,
        "sessions": dict(verdict.counts),
        "turns": {WITH: verdict.with_arm.turns, WITHOUT: verdict.without_arm.turns},
        "drop": verdict.drop,
        "ratio": c.ratio,
        "interval": [c.low, c.high] if c.low is not None else None,
        "p": c.p_lower,
        "p_harm": c.p_higher,
        "method": METHOD_SHORT,
        "method_detail": METHOD,
        "too_few": verdict.too_few,
        "analysed": {WITH: verdict.with_arm.to_json(), WITHOUT: verdict.without_arm.to_json()},
        "beyond_plan": verdict.beyond_plan,
        "lessons": [
            {
                "slug": item.slug,
                "with": item.with_arm.to_json(),
                "without": item.without_arm.to_json(),
                "ratio": item.ratio,
                "p_harm": item.p_harm,
                "p_adjusted": item.p_adjusted,
                "flag": item.flag,
            }
            for item in verdict.lessons
        ],
        "rule": {
            "text": rule_text(verdict.planned),
            "alpha": ALPHA,
            "harm_alpha": HARM_ALPHA,
            "lesson_alpha": LESSON_ALPHA,
            "min_drop": MIN_DROP,
            "min_planned": MIN_PLANNED,
            "confidence": CONFIDENCE,
            "shuffles": SHUFFLES,
            "min_failing_sessions": MIN_FAILING_SESSIONS,
            "lesson_min_sessions": LESSON_MIN_SESSIONS,
            "lesson_correction": "holm",
        },
    }
    return dict(_plain(data))
