"""Exact intervals and the permutation test the trial's verdict reports. Pure: `math` and `random` only.

The rule's constants (confidence, shuffles, seed) live in trial.stats and are passed in.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Interval:
    """A point estimate with its two-sided interval (upper may be infinite)."""

    estimate: float | None
    low: float | None
    high: float | None


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


def clopper_pearson(successes: int, trials: int, confidence: float) -> tuple[float, float]:
    """The exact (Clopper-Pearson) interval for a binomial proportion."""
    if trials <= 0 or not 0 <= successes <= trials:
        raise ValueError(f"need 0 <= successes <= trials and trials > 0, got {successes}/{trials}")
    alpha = 1.0 - confidence
    low = 0.0 if successes == 0 else beta_ppf(alpha / 2, successes, trials - successes + 1)
    high = 1.0 if successes == trials else beta_ppf(1 - alpha / 2, successes + 1, trials - successes)
    return low, high


def poisson_rate_interval(count: int, exposure: int, confidence: float) -> tuple[float, float]:
    """The exact (Garwood) interval for a Poisson rate: `count` events over `exposure` units."""
    if exposure <= 0 or count < 0:
        raise ValueError(f"need exposure > 0 and count >= 0, got {count}/{exposure}")
    alpha = 1.0 - confidence
    low = 0.0 if count == 0 else gamma_ppf(alpha / 2, count)
    high = gamma_ppf(1 - alpha / 2, count + 1)
    return low / exposure, high / exposure


def rate_ratio(
    failed_with: int, turns_with: int, failed_without: int, turns_without: int, confidence: float
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
    permutations: int,
    seed: int,
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
