"""The trial's verdict: the rule fixed in advance, the effect estimate, per-lesson attribution, and the
verdict as text and as plain data. Pure; the exact intervals and the permutation test are in
trial.inference.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from lessonbank.trial.inference import Interval, permutation_p, poisson_rate_interval, rate_ratio

# The rule, fixed before any data is seen. Changing these after a trial started is cheating.
MIN_TURNS_PER_ARM = 30
MIN_RELATIVE_DROP = 0.20
CONFIDENCE = 0.95
PERMUTATIONS = 2000
PERMUTATION_SEED = 20261129
# A lesson is flagged only when both of its arms have at least this many turns, and its with-arm
# fails at least this much more per turn: a bare "worse" flags half of all lessons by noise alone.
ATTRIBUTION_MIN_TURNS = 5
ATTRIBUTION_MIN_EXCESS = MIN_RELATIVE_DROP

WITH = "with"
WITHOUT = "without"
HELP = "lessons help"
NO_EFFECT = "no effect"

RULE = (
    f"Rule (fixed in advance): lessons are said to help only when each arm has at least "
    f"{MIN_TURNS_PER_ARM} turns AND the failed-check rate per turn is at least "
    f"{MIN_RELATIVE_DROP:.0%} lower with lessons than without; otherwise no effect is claimed. "
    f"The rule decides; the {CONFIDENCE:.0%} interval informs."
)


@dataclass(frozen=True)
class Turn:
    """One trial turn: its arm, its place in assignment order, its checks and the lessons that fit it."""

    session: str
    turn: str
    arm: str
    order: int
    checks: int = 0
    failed: int = 0
    recovered: bool = False
    lessons: tuple[str, ...] = ()


@dataclass(frozen=True)
class Arm:
    """Totals for one arm."""

    turns: int
    checks: int
    failed: int
    recovered: int

    @property
    def rate(self) -> float | None:
        """Failed checks per turn (None before the first turn)."""
        return self.failed / self.turns if self.turns else None


@dataclass(frozen=True)
class Attribution:
    """One lesson: the turns it was (or would have been) injected in, failed checks by arm, a flag."""

    slug: str
    with_arm: Arm
    without_arm: Arm
    flag: str | None = None


@dataclass(frozen=True)
class Verdict:
    """The decision under the rule, the numbers behind it, and per-lesson attribution."""

    decision: str
    reason: str
    with_arm: Arm
    without_arm: Arm
    relative_drop: float | None
    rate_ratio: Interval
    p_value: float | None
    attributions: list[Attribution] = field(default_factory=list)


# --- the trial ---


def arm_totals(turns: Iterable[Turn]) -> Arm:
    """Sum a set of turns into an Arm."""
    items = list(turns)
    return Arm(
        turns=len(items),
        checks=sum(t.checks for t in items),
        failed=sum(t.failed for t in items),
        recovered=sum(1 for t in items if t.recovered),
    )


def apply_rule(with_arm: Arm, without_arm: Arm) -> tuple[str, str, float | None]:
    """Apply the rule: the decision, a plain reason, and the relative drop in failed checks per turn."""
    short = [f"{name} has {arm.turns}" for name, arm in ((WITH, with_arm), (WITHOUT, without_arm))
             if arm.turns < MIN_TURNS_PER_ARM]  # fmt: skip
    rate_with, rate_without = with_arm.rate, without_arm.rate
    drop = None
    if rate_with is not None and rate_without:
        drop = 1.0 - rate_with / rate_without
    if short:
        return (
            NO_EFFECT,
            f"too few turns: {', '.join(short)}; the rule needs {MIN_TURNS_PER_ARM} in each arm",
            drop,
        )
    if drop is None:
        return NO_EFFECT, "no failed checks without lessons, so there is nothing for lessons to lower", drop
    if drop >= MIN_RELATIVE_DROP - 1e-12:
        return (
            HELP,
            f"failed checks per turn are {drop:.1%} lower with lessons; the rule needs {MIN_RELATIVE_DROP:.0%}",
            drop,
        )
    if abs(drop) < 0.0005:
        return NO_EFFECT, "failed checks per turn are the same with and without lessons", drop
    if drop < 0:
        return NO_EFFECT, f"failed checks per turn are {-drop:.1%} HIGHER with lessons", drop
    return (
        NO_EFFECT,
        f"failed checks per turn are only {drop:.1%} lower with lessons; the rule needs {MIN_RELATIVE_DROP:.0%}",
        drop,
    )


def attribute(turns: Sequence[Turn]) -> list[Attribution]:
    """Per lesson: turns it fitted by arm and their failed checks; flag lessons whose with-arm does worse."""
    by_lesson: dict[str, list[Turn]] = {}
    for turn in turns:
        for slug in sorted(set(turn.lessons)):
            by_lesson.setdefault(slug, []).append(turn)
    out = []
    for slug in sorted(by_lesson):
        items = by_lesson[slug]
        w = arm_totals(t for t in items if t.arm == WITH)
        wo = arm_totals(t for t in items if t.arm == WITHOUT)
        flag = None
        if (
            w.turns >= ATTRIBUTION_MIN_TURNS
            and wo.turns >= ATTRIBUTION_MIN_TURNS
            and (w.rate or 0.0) > 0.0
            and (w.rate or 0.0) >= (1.0 + ATTRIBUTION_MIN_EXCESS) * (wo.rate or 0.0) - 1e-12
        ):
            flag = (
                f"with-arm does worse: {w.rate:.2f} failed checks per turn with it "
                f"({w.turns} turns) vs {wo.rate:.2f} without ({wo.turns} turns)"
            )
        out.append(Attribution(slug, w, wo, flag))
    return out


def judge(turns: Sequence[Turn], permutations: int = PERMUTATIONS) -> Verdict:
    """The verdict over every assigned turn (permutations=0 skips the permutation test)."""
    with_turns = [t for t in turns if t.arm == WITH]
    without_turns = [t for t in turns if t.arm == WITHOUT]
    w, wo = arm_totals(with_turns), arm_totals(without_turns)
    decision, reason, drop = apply_rule(w, wo)
    return Verdict(
        decision=decision,
        reason=reason,
        with_arm=w,
        without_arm=wo,
        relative_drop=drop,
        rate_ratio=rate_ratio(w.failed, w.turns, wo.failed, wo.turns, CONFIDENCE),
        p_value=permutation_p(
            [t.failed for t in with_turns], [t.failed for t in without_turns], permutations, PERMUTATION_SEED
        )
        if permutations
        else None,
        attributions=attribute(turns),
    )


@dataclass(frozen=True)
class Point:
    """One arm's running failed-check rate after its n-th turn, with the exact interval."""

    order: int
    arm: str
    turns: int
    rate: float
    low: float
    high: float


def running(turns: Sequence[Turn]) -> list[Point]:
    """Each arm's cumulative failed checks per turn, in assignment order, with Garwood intervals."""
    counts = {WITH: [0, 0], WITHOUT: [0, 0]}
    points = []
    for turn in sorted(turns, key=lambda t: t.order):
        if turn.arm not in counts:
            continue
        tally = counts[turn.arm]
        tally[0] += 1
        tally[1] += turn.failed
        low, high = poisson_rate_interval(tally[1], tally[0], CONFIDENCE)
        points.append(Point(turn.order, turn.arm, tally[0], tally[1] / tally[0], low, high))
    return points


# --- text ---


def fmt_num(value: float | None, digits: int = 2) -> str:
    """A figure for a report: n/a for none, inf for infinity, else fixed digits."""
    if value is None:
        return "n/a"
    if math.isinf(value):
        return "inf"
    return f"{value:.{digits}f}"


def _p(value: float | None) -> str:
    """A p-value as text: never "0.000", since the smallest a permutation test gives is 1/(shuffles+1)."""
    if value is not None and value < 0.001:
        return "p < 0.001"
    return f"p = {fmt_num(value, 3)}"


def _arm_line(name: str, arm: Arm) -> str:
    return (
        f"  {name:<8} {arm.turns:>5} turns  {arm.checks:>5} checks  {arm.failed:>5} failed  "
        f"{fmt_num(arm.rate):>5} failed/turn  {arm.recovered:>4} recovered"
    )


def report_lines(verdict: Verdict, attribution: bool = True) -> list[str]:
    """The verdict as text: the rule, the decision, the arms, the estimate, flagged lessons."""
    rr = verdict.rate_ratio
    lines = [
        RULE,
        "",
        f"Verdict: {verdict.decision.upper()} ({verdict.reason}).",
        _arm_line(WITH, verdict.with_arm),
        _arm_line(WITHOUT, verdict.without_arm),
        f"Rate ratio with/without: {fmt_num(rr.estimate)} "
        f"({CONFIDENCE:.0%} exact conditional interval {fmt_num(rr.low)} to {fmt_num(rr.high)}); "
        f"permutation test {_p(verdict.p_value)} ({PERMUTATIONS} shuffles).",
    ]
    if verdict.decision == NO_EFFECT:
        lines.append("No effect is claimed, so the honest move is `bank off`.")
        if min(verdict.with_arm.turns, verdict.without_arm.turns) < MIN_TURNS_PER_ARM:
            lines.append(f"(Or keep `bank test` on until each arm has {MIN_TURNS_PER_ARM} turns.)")
    if attribution and verdict.attributions:
        lines += ["", "Per lesson (turns it was or would have been injected in; failed checks per turn):"]
        for item in verdict.attributions:
            mark = "  FLAG" if item.flag else ""
            lines.append(
                f"  {item.slug}: with {item.with_arm.turns} turns {fmt_num(item.with_arm.rate)}, "
                f"without {item.without_arm.turns} turns {fmt_num(item.without_arm.rate)}{mark}"
            )
        flagged = [a for a in verdict.attributions if a.flag]
        lines.append(
            f"{len(flagged)} lesson(s) flagged (flags need {ATTRIBUTION_MIN_TURNS}+ turns in each arm and "
            f"{ATTRIBUTION_MIN_EXCESS:.0%} more failed checks per turn with the lesson)."
        )
    return lines


def status_line(verdict: Verdict) -> str:
    """One line: the decision and the turn counts."""
    return (
        f"trial: {verdict.decision} — {verdict.with_arm.turns} turns with, "
        f"{verdict.without_arm.turns} without; {verdict.reason}"
    )


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
    """The verdict, the rule's constants and the attribution as plain data for --json."""
    data = asdict(verdict)
    for arm in ("with_arm", "without_arm"):
        data[arm]["rate"] = getattr(verdict, arm).rate
    for item, attribution in zip(data["attributions"], verdict.attributions, strict=True):
        item["with_arm"]["rate"] = attribution.with_arm.rate
        item["without_arm"]["rate"] = attribution.without_arm.rate
    data["rule"] = {
        "text": RULE,
        "min_turns_per_arm": MIN_TURNS_PER_ARM,
        "min_relative_drop": MIN_RELATIVE_DROP,
        "confidence": CONFIDENCE,
        "permutations": PERMUTATIONS,
        "attribution_min_turns": ATTRIBUTION_MIN_TURNS,
    }
    return dict(_plain(data))
