"""The trial's verdict: the rule fixed in advance, the effect estimate and per-lesson attribution. Pure."""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

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
class Interval:
    """A point estimate with its two-sided interval (upper may be infinite)."""

    estimate: float | None
    low: float | None
    high: float | None


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


# --- special functions (stdlib only: math) ---


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction for the incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 10000):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-15:
            break
    return h


def beta_cdf(x: float, a: float, b: float) -> float:
    """The regularized incomplete beta function I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _betacf(a, b, x) / a
    return 1.0 - math.exp(log_front) * _betacf(b, a, 1.0 - x) / b


def gamma_cdf(x: float, a: float) -> float:
    """The regularized lower incomplete gamma function P(a, x)."""
    if x <= 0.0:
        return 0.0
    log_front = a * math.log(x) - x - math.lgamma(a)
    if x < a + 1.0:
        term = total = 1.0 / a
        ap = a
        for _ in range(100000):
            ap += 1.0
            term *= x / ap
            total += term
            if abs(term) < abs(total) * 1e-16:
                break
        return min(1.0, total * math.exp(log_front))
    tiny = 1e-300
    b = x + 1.0 - a
    c = 1.0 / tiny
    d = 1.0 / b
    h = d
    for i in range(1, 100000):
        an = -i * (i - a)
        b += 2.0
        d = an * d + b
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = b + an / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-15:
            break
    return max(0.0, 1.0 - math.exp(log_front) * h)


def _bisect(cdf: Callable[[float], float], q: float, low: float, high: float) -> float:
    for _ in range(200):
        mid = (low + high) / 2.0
        if cdf(mid) < q:
            low = mid
        else:
            high = mid
        if high - low <= 1e-13 * max(1.0, high):
            break
    return (low + high) / 2.0


def beta_ppf(q: float, a: float, b: float) -> float:
    """The q-quantile of Beta(a, b)."""
    return _bisect(lambda x: beta_cdf(x, a, b), q, 0.0, 1.0)


def gamma_ppf(q: float, a: float) -> float:
    """The q-quantile of Gamma(a, 1)."""
    high = max(1.0, a)
    while gamma_cdf(high, a) < q:
        high *= 2.0
    return _bisect(lambda x: gamma_cdf(x, a), q, 0.0, high)


def clopper_pearson(successes: int, trials: int, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """The exact (Clopper-Pearson) interval for a binomial proportion."""
    if trials <= 0 or not 0 <= successes <= trials:
        raise ValueError(f"need 0 <= successes <= trials and trials > 0, got {successes}/{trials}")
    alpha = 1.0 - confidence
    low = 0.0 if successes == 0 else beta_ppf(alpha / 2, successes, trials - successes + 1)
    high = 1.0 if successes == trials else beta_ppf(1 - alpha / 2, successes + 1, trials - successes)
    return low, high


def poisson_rate_interval(count: int, exposure: int, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """The exact (Garwood) interval for a Poisson rate: `count` events over `exposure` units."""
    if exposure <= 0 or count < 0:
        raise ValueError(f"need exposure > 0 and count >= 0, got {count}/{exposure}")
    alpha = 1.0 - confidence
    low = 0.0 if count == 0 else gamma_ppf(alpha / 2, count)
    high = gamma_ppf(1 - alpha / 2, count + 1)
    return low / exposure, high / exposure


def rate_ratio(
    failed_with: int, turns_with: int, failed_without: int, turns_without: int, confidence: float = CONFIDENCE
) -> Interval:
    """Rate ratio with/without, with the exact conditional interval (binomial split of all failures)."""
    if turns_with <= 0 or turns_without <= 0:
        return Interval(None, None, None)
    total = failed_with + failed_without
    if failed_without == 0:
        estimate = None if failed_with == 0 else math.inf
    else:
        estimate = (failed_with / turns_with) / (failed_without / turns_without)
    if total == 0:
        return Interval(estimate, None, None)
    p_low, p_high = clopper_pearson(failed_with, total, confidence)
    scale = turns_without / turns_with
    low = p_low / (1.0 - p_low) * scale
    high = math.inf if p_high >= 1.0 else p_high / (1.0 - p_high) * scale
    return Interval(estimate, low, high)


def permutation_p(
    with_counts: Sequence[int],
    without_counts: Sequence[int],
    permutations: int = PERMUTATIONS,
    seed: int = PERMUTATION_SEED,
) -> float | None:
    """Two-sided permutation p-value for the difference in mean failed checks per turn."""
    n1, n0 = len(with_counts), len(without_counts)
    if n1 == 0 or n0 == 0:
        return None
    pooled = list(with_counts) + list(without_counts)
    total = sum(pooled)
    observed = abs(sum(with_counts) / n1 - (total - sum(with_counts)) / n0)
    rng = random.Random(seed)
    extreme = 0
    for _ in range(permutations):
        rng.shuffle(pooled)
        first = sum(pooled[:n1])
        if abs(first / n1 - (total - first) / n0) >= observed - 1e-12:
            extreme += 1
    return (extreme + 1) / (permutations + 1)


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


def decide(with_arm: Arm, without_arm: Arm) -> tuple[str, str, float | None]:
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
    decision, reason, drop = decide(w, wo)
    return Verdict(
        decision=decision,
        reason=reason,
        with_arm=w,
        without_arm=wo,
        relative_drop=drop,
        rate_ratio=rate_ratio(w.failed, w.turns, wo.failed, wo.turns),
        p_value=permutation_p([t.failed for t in with_turns], [t.failed for t in without_turns], permutations)
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
        low, high = poisson_rate_interval(tally[1], tally[0])
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
