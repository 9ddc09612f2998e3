"""The session-level test and interval, and Holm's correction."""

from __future__ import annotations

import math
import random

import pytest

from lessonbank.trial import inference


def compare(
    fw: list[int], cw: list[int], fo: list[int], co: list[int], shuffles: int = 2000
) -> inference.Comparison:
    return inference.compare(fw, cw, fo, co, shuffles, 7, 0.95)


def test_the_ratio_is_failed_checks_per_check_run_over_summed_sessions() -> None:
    got = compare([1, 3], [10, 10], [2, 2], [5, 5])
    assert got.ratio == pytest.approx((4 / 20) / (4 / 10))
    assert got.low is not None and got.high is not None and got.low < got.high


def test_a_clear_difference_is_significant_one_way_only() -> None:
    got = compare([0, 1, 0, 1] * 10, [4] * 40, [3, 2, 3, 2] * 10, [4] * 40)
    assert got.p_lower == pytest.approx(1 / 2001)
    assert got.p_higher == 1.0
    assert got.high is not None and got.high < 0.5


def test_identical_arms_give_no_evidence() -> None:
    got = compare([1, 2, 0, 3] * 8, [5] * 32, [1, 2, 0, 3] * 8, [5] * 32)
    assert got.ratio == 1.0
    assert got.p_lower is not None and got.p_lower > 0.4
    assert got.low is not None and got.high is not None and got.low < 1 < got.high


def test_the_same_records_give_the_same_answer_in_any_order() -> None:
    # Sessions with the same outcome in both arms (0 of 2, 1 of 4) too: ties must not depend on order.
    fw, cw, fo, co = [0, 5, 1, 2, 0, 0], [3, 9, 4, 4, 2, 1], [2, 2, 1, 0, 1, 6], [4, 5, 4, 2, 2, 9]
    first = compare(fw, cw, fo, co)
    assert first == compare(fw, cw, fo, co)
    order = [5, 0, 3, 1, 4, 2]
    assert first == compare([fw[i] for i in order], [cw[i] for i in order], fo[::-1], co[::-1])


@pytest.mark.parametrize(
    ("fw", "cw", "fo", "co", "ratio"),
    [
        ([0], [3], [1], [3], 0.0),  # one session each: a ratio, no interval
        ([1, 0], [2, 2], [0, 0], [2, 2], math.inf),  # nothing failed without
        ([0, 0], [2, 2], [0, 0], [2, 2], None),
        ([0, 0], [0, 0], [1, 1], [2, 2], None),  # no checks with lessons
    ],
)
def test_degenerate_arms(
    fw: list[int], cw: list[int], fo: list[int], co: list[int], ratio: float | None
) -> None:
    got = compare(fw, cw, fo, co)
    assert got.ratio == ratio
    if len(fw) < 2 or not sum(cw):
        assert (got.low, got.high, got.p_lower, got.p_higher) == (None, None, None, None)


def test_the_test_holds_its_level_under_heavy_overdispersion() -> None:
    """200 null data sets, most sessions with no failure and a few with many: p <= 5% about 5% of the time."""
    rng = random.Random(3)
    rejected = 0
    for _ in range(200):
        failed = [int(rng.paretovariate(1.2)) - 1 if rng.random() < 0.2 else 0 for _ in range(60)]
        checks = [f + rng.randint(1, 6) for f in failed]
        got = compare(failed[:30], checks[:30], failed[30:], checks[30:], shuffles=500)
        assert got.p_lower is not None
        rejected += got.p_lower <= 0.05
    assert rejected <= 20  # 10 expected; 20 is 3.3 standard deviations above


@pytest.mark.parametrize(
    ("p", "adjusted"),
    [
        ([0.01, 0.04, 0.03], [0.03, 0.06, 0.06]),
        ([0.2], [0.2]),
        ([0.5, 0.001, 0.02, 0.8], [1.0, 0.004, 0.06, 1.0]),
        ([], []),
    ],
)
def test_holm(p: list[float], adjusted: list[float]) -> None:
    assert inference.holm(p) == pytest.approx(adjusted)


def test_band_of_one_arm() -> None:
    band = inference.log_rate_band([1, 2, 0, 1], [4, 4, 4, 4], 1.96)
    assert band is not None
    rate, low, high = band
    assert rate == 0.25 and low < rate < high
    assert inference.log_rate_band([1], [4], 1.96) is None
