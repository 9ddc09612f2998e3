"""The trial's test and interval, by session: a studentized permutation test and the interval it calibrates.

Sessions are the unit (they were randomized, and a lesson stays in a session's context). The estimate is
the ratio of failed checks per check run, with lessons over without, each arm's rate being its failed
checks over its check runs summed across sessions. Its standard error on the log scale is the
session-robust (sandwich, cluster) one: each session's failures minus its checks times the arm's rate,
squared and summed, so a few sessions with many failures widen it as they should. The statistic
T = log ratio / SE is computed for the observed arms and for `shuffles` reshuffles of the session
labels (arm sizes kept), all as one matrix product over five per-session sums.

- The one-sided p-value (with lessons lower) is the share of shuffles with T at or below the observed
  one; it is exact when lessons change nothing at all, whatever the overdispersion, and studentizing
  keeps it close to its level when only the number of checks differs between the arms.
- The interval is log ratio minus the 97.5th and 2.5th percentiles of the shuffled T, times the SE.

Pure apart from numpy, imported only when a comparison runs (the import costs ~90 ms, and `bank
groom` and `bank ledger` load this module). The constants (confidence, shuffles, seed) live in
trial.stats and are passed in.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np


@dataclass(frozen=True)
class Comparison:
    """Failed checks per check run, with over without: estimate, interval and one-sided p-values."""

    ratio: float | None  # the plain ratio (None when nothing failed without lessons)
    low: float | None
    high: float | None
    p_lower: float | None  # one-sided: lessons lower the rate
    p_higher: float | None  # one-sided: lessons raise it


# Half a failure and one check added to each arm's totals on the log scale only, so an arm with
# no failures still has a finite log rate and standard error.
_HALF = 0.5
_TINY = 1e-12


def _columns(failed: Sequence[int], checks: Sequence[int]) -> np.ndarray:
    import numpy as np

    f = np.asarray(failed, dtype=float)
    c = np.asarray(checks, dtype=float)
    return np.stack([f, c, f * f, f * c, c * c], axis=-1)


def _log_rate(sums: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Log failed-per-check rate and its session-robust variance from an arm's five sums."""
    import numpy as np

    f, c, ff, fc, cc = (sums[..., i] for i in range(5))
    rate = (f + _HALF) / (c + 2 * _HALF)
    resid = np.maximum(ff - 2 * rate * fc + rate * rate * cc, 0.0)
    return np.log(rate), n / (n - 1) * resid / (f + _HALF) ** 2


def _statistic(with_sums: np.ndarray, without_sums: np.ndarray, n_with: int, n_without: int):
    import numpy as np

    lw, vw = _log_rate(with_sums, n_with)
    lo, vo = _log_rate(without_sums, n_without)
    se = np.sqrt(vw + vo + _TINY)
    return (lw - lo) / se, lw - lo, se


def labels(n_with: int, n_without: int, shuffles: int, seed: int) -> np.ndarray:
    """`shuffles` rows of 0/1 arm labels (1 = with), each a random reordering of the observed ones."""
    import numpy as np

    rng = np.random.default_rng(seed)
    base = np.concatenate([np.ones(n_with), np.zeros(n_without)])
    return rng.permuted(np.tile(base, (shuffles, 1)), axis=1)


def shuffle_seed(seed: int, data: np.ndarray) -> int:
    """The shuffles' seed: `seed` mixed with the sessions' outcomes (in their fixed order), not their arms.

    The same records always give the same report, yet each data set gets its own shuffles, and since
    the seed does not depend on which sessions had lessons the test stays exact (a fixed set of
    shuffles reused for every trial would be slightly off its level for some data).
    """
    import numpy as np

    rows = data[:, :2].astype(np.int64).tolist()
    return int(zlib.crc32(repr(rows).encode()) ^ (seed & 0xFFFFFFFF))


def compare(
    failed_with: Sequence[int],
    checks_with: Sequence[int],
    failed_without: Sequence[int],
    checks_without: Sequence[int],
    shuffles: int,
    seed: int,
    confidence: float,
) -> Comparison:
    """The session-level comparison; interval and p-values need at least 2 sessions in each arm."""
    import numpy as np

    fw, cw, fo, co = sum(failed_with), sum(checks_with), sum(failed_without), sum(checks_without)
    ratio: float | None = None
    if cw and co and fo:
        ratio = (fw / cw) / (fo / co)
    elif cw and co and fw:
        ratio = math.inf
    n_with, n_without = len(failed_with), len(failed_without)
    if n_with < 2 or n_without < 2 or not (cw and co):
        return Comparison(ratio, None, None, None, None)
    data = _columns(list(failed_with) + list(failed_without), list(checks_with) + list(checks_without))
    # Sessions in a fixed order (by failed, then checks, then arm) with their arms beside them, so
    # the same records in any order meet the same shuffles.
    arm = np.concatenate([np.ones(n_with), np.zeros(n_without)])
    order = np.lexsort((arm, data[:, 1], data[:, 0]))
    data = data[order]
    is_with = arm[order]
    total = data.sum(axis=0)
    observed = is_with @ data
    t_obs, log_ratio, se = _statistic(observed, total - observed, n_with, n_without)
    shuffled = labels(n_with, n_without, shuffles, shuffle_seed(seed, data)) @ data
    t, _, _ = _statistic(shuffled, total - shuffled, n_with, n_without)
    p_lower = (1 + int(np.count_nonzero(t <= t_obs + 1e-9))) / (shuffles + 1)
    p_higher = (1 + int(np.count_nonzero(t >= t_obs - 1e-9))) / (shuffles + 1)
    alpha = 1.0 - confidence
    q_low, q_high = np.quantile(t, [alpha / 2, 1 - alpha / 2])
    low = float(np.exp(log_ratio - q_high * se))
    high = float(np.exp(log_ratio - q_low * se))
    return Comparison(ratio, low, high, p_lower, p_higher)


def log_rate_band(
    failed: Sequence[int], checks: Sequence[int], z: float
) -> tuple[float, float, float] | None:
    """One arm's failed checks per check run with a session-robust band (rate, low, high), for charts."""
    n = len(failed)
    if n < 2 or not sum(checks):
        return None
    sums = _columns(failed, checks).sum(axis=0)
    log_rate, var = _log_rate(sums, n)
    rate = sum(failed) / sum(checks)
    spread = z * math.sqrt(float(var))
    return rate, float(math.exp(float(log_rate) - spread)), float(math.exp(float(log_rate) + spread))


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjustment: each p-value made safe to compare with 5% across the whole family."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [1.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted
