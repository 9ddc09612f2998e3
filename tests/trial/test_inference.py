"""Exact intervals and the permutation test, against published values and their defining equations."""

from __future__ import annotations

import math

import pytest

from lessonbank.trial import inference

# The trial's rule uses a 95% confidence (trial.stats.CONFIDENCE); any fixed seed will do here.
CONFIDENCE = 0.95
SEED = 20261129


@pytest.mark.parametrize(
    ("successes", "trials", "low", "high"),
    [
        (5, 10, 0.187086, 0.812914),
        (0, 10, 0.0, 1 - 0.025 ** (1 / 10)),
        (10, 10, 0.025 ** (1 / 10), 1.0),
        (1, 20, 0.001265, 0.248733),
        (50, 100, 0.398321, 0.601679),
        (3, 1000, 0.000619, 0.008742),
    ],
)
def test_clopper_pearson_matches_published_values(
    successes: int, trials: int, low: float, high: float
) -> None:
    got_low, got_high = inference.clopper_pearson(successes, trials, CONFIDENCE)
    assert got_low == pytest.approx(low, abs=2e-6)
    assert got_high == pytest.approx(high, abs=2e-6)


@pytest.mark.parametrize(
    ("count", "low", "high"),
    [
        (0, 0.0, 3.688879),
        (1, 0.025318, 5.571643),
        (5, 1.623486, 11.668332),
        (10, 4.795389, 18.390356),
    ],
)
def test_garwood_interval_matches_published_values(count: int, low: float, high: float) -> None:
    got_low, got_high = inference.poisson_rate_interval(count, 1, CONFIDENCE)
    assert got_low == pytest.approx(low, abs=2e-5)
    assert got_high == pytest.approx(high, abs=2e-5)
    assert inference.poisson_rate_interval(count, 10, CONFIDENCE) == pytest.approx((got_low / 10, got_high / 10))


@pytest.mark.parametrize("count", [1, 7, 30, 100, 400])
def test_garwood_bounds_solve_their_defining_tail_equations(count: int) -> None:
    low, high = inference.poisson_rate_interval(count, 1, CONFIDENCE)

    def cdf(k: int, lam: float) -> float:
        return math.fsum(math.exp(i * math.log(lam) - lam - math.lgamma(i + 1)) for i in range(k + 1))

    assert 1 - cdf(count - 1, low) == pytest.approx(0.025, abs=1e-9)
    assert cdf(count, high) == pytest.approx(0.025, abs=1e-9)


@pytest.mark.parametrize(("successes", "trials"), [(1, 7), (13, 40), (250, 600), (999, 1000)])
def test_clopper_pearson_bounds_solve_their_defining_tail_equations(successes: int, trials: int) -> None:
    low, high = inference.clopper_pearson(successes, trials, CONFIDENCE)

    def cdf(k: int, p: float) -> float:
        return math.fsum(
            math.exp(math.lgamma(trials + 1) - math.lgamma(i + 1) - math.lgamma(trials - i + 1)
                     + i * math.log(p) + (trials - i) * math.log1p(-p))
            for i in range(k + 1)
        )  # fmt: skip

    assert 1 - cdf(successes - 1, low) == pytest.approx(0.025, abs=1e-9)
    assert cdf(successes, high) == pytest.approx(0.025, abs=1e-9)


@pytest.mark.parametrize(("k", "lam"), [(0, 0.5), (3, 2.0), (10, 7.5), (40, 55.0), (200, 180.0)])
def test_gamma_cdf_agrees_with_the_poisson_sum(k: int, lam: float) -> None:
    poisson_cdf = sum(math.exp(i * math.log(lam) - lam - math.lgamma(i + 1)) for i in range(k + 1))
    assert 1.0 - inference.gamma_cdf(lam, k + 1) == pytest.approx(poisson_cdf, abs=1e-10)


@pytest.mark.parametrize(
    ("x", "a", "b"), [(0.3, 2.0, 5.0), (0.9, 0.5, 0.5), (0.01, 30.0, 3.0), (0.5, 100.0, 100.0)]
)
def test_beta_cdf_symmetry_and_quantile_round_trip(x: float, a: float, b: float) -> None:
    assert inference.beta_cdf(x, a, b) + inference.beta_cdf(1 - x, b, a) == pytest.approx(1.0, abs=1e-12)
    q = inference.beta_cdf(x, a, b)
    if 1e-9 < q < 1 - 1e-9:
        assert inference.beta_ppf(q, a, b) == pytest.approx(x, abs=1e-9)


@pytest.mark.parametrize(
    ("fw", "nw", "fo", "no", "estimate"),
    [
        (30, 100, 50, 100, 0.6),
        (12, 40, 30, 60, 0.6),
        (0, 40, 0, 40, None),
        (5, 40, 0, 40, math.inf),
        (0, 40, 12, 40, 0.0),
    ],
)
def test_rate_ratio_is_the_binomial_split_of_all_failures(
    fw: int, nw: int, fo: int, no: int, estimate: float | None
) -> None:
    got = inference.rate_ratio(fw, nw, fo, no, CONFIDENCE)
    if estimate is None:
        assert got == inference.Interval(None, None, None)
        return
    assert got.estimate == pytest.approx(estimate)
    # Given all failures, those in the with-arm are binomial with p = nw*RR / (nw*RR + no).
    p_low, p_high = inference.clopper_pearson(fw, fw + fo, CONFIDENCE)
    assert got.low == pytest.approx(p_low / (1 - p_low) * no / nw)
    assert got.high == (math.inf if p_high == 1.0 else pytest.approx(p_high / (1 - p_high) * no / nw))
    if fo and fw:
        assert got.low < got.estimate < got.high


def test_rate_ratio_scales_with_unequal_exposures() -> None:
    # Twice the turns without lessons and twice the failures: the same rates, a ratio of 1.
    got = inference.rate_ratio(20, 50, 40, 100, CONFIDENCE)
    assert got.estimate == pytest.approx(1.0)
    assert got.low is not None and got.high is not None
    assert got.low < 1.0 < got.high


@pytest.mark.parametrize(
    ("with_counts", "without_counts", "low", "high"),
    [
        ([0, 1, 2] * 20, [0, 1, 2] * 20, 0.9, 1.0),
        ([0] * 40, [2] * 40, 0.0, 0.001),
        ([0, 1] * 20, [1, 2] * 20, 0.0, 0.001),
        ([1, 0, 0, 1] * 10, [1, 1, 0, 0] * 10, 0.9, 1.0),
    ],
)
def test_permutation_p(with_counts: list[int], without_counts: list[int], low: float, high: float) -> None:
    p = inference.permutation_p(with_counts, without_counts, 999, SEED)
    assert p is not None
    assert low <= p <= high
    assert inference.permutation_p(with_counts, without_counts, 999, SEED) == p


def test_permutation_p_needs_both_arms() -> None:
    assert inference.permutation_p([], [1, 2], 999, SEED) is None
