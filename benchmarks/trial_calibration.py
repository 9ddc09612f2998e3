"""Is the trial's verdict honest? Simulated trials with a known truth, analysed by the trial's own code.

Each simulated trial assigns sessions with the real assignment (state.arms.arm_at: mixed blocks of
2, 4 and 6, a new seed per trial, drawn from --seed), draws each session's checks and failed checks
from a scenario, and hands the sessions to trial.stats.decide, the function `bank trial report` and
`bank trial analyze` use. Per scenario and true effect it prints how often the verdict is "helps"
(the false positive rate when there is no effect, the power when there is one), how often "harms",
and how often the 95% interval covers the true ratio of failed checks per check run (with /
without; worked out exactly where it can be, else measured on 2,000,000 simulated sessions per arm).

Scenarios (a session has turns; a turn has checks; "drop" lowers the failure rate per check):
  readme      the README's old design: 4 turns, 3 checks a turn, 90% of checks fail
  poisson-1   4 turns; failed checks a turn ~ Poisson(1), passing checks ~ Poisson(2)
  poisson-0.3 the same with Poisson(0.3) failed checks a turn
  negbin-0.5  failed checks a turn negative binomial, mean 1, k = 0.5 (overdispersed)
  negbin-0.1  the same with k = 0.1: most turns none, a few 10-30
  sessions    1 + Poisson(3) turns, a session difficulty factor Gamma(1) multiplies the failure rate
  trend       as sessions, with the failure rate rising from 0.5x to 1.5x over the trial
  carry-over  as sessions; the lesson acts from the second turn on, and a turn after a failing
              turn fails 1.5x as often (what went wrong carries over inside a session)
  fewer-checks the lesson makes the agent run 40% fewer checks; failures per check unchanged
              unless there is a drop (the old per-turn rule called this "helps")
  peeking     as sessions, with `bank trial status` read after every session and the trial stopped
              at the first "helps"; looks go on 10 sessions past the planned size

Usage: python benchmarks/trial_calibration.py [--runs 2000] [--planned 30] [--only NAME ...] [--power] [--null-only]
  --power      the power table `bank test` shows: the sessions scenario at 30, 60, 100 and 200 per arm
  --null-only  only the no-effect cells, to pin the false positive rate with more runs
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

# The analysis multiplies small matrices: BLAS threads cost far more than they save (2.7 ms vs 0.06 ms
# a product here), and the machine is shared.
for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tooling"))

from lessonbank.state import arms  # noqa: E402
from lessonbank.trial import stats  # noqa: E402

DROPS = (0.0, 0.2, 0.4)
MAX_TURNS = 16
Generator = Callable[[np.random.Generator, np.ndarray, float], tuple[np.ndarray, np.ndarray]]


def _fixed_turns(shape: tuple[int, ...], turns: int) -> np.ndarray:
    return np.ones((*shape, turns), dtype=bool)


def _varying_turns(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    length = np.minimum(1 + rng.poisson(3.0, size=shape), MAX_TURNS)
    return np.arange(MAX_TURNS) < length[..., None]


def _sum(values: np.ndarray, mask: np.ndarray) -> np.ndarray:
    return (values * mask).sum(axis=-1)


def readme(rng: np.random.Generator, with_arm: np.ndarray, drop: float) -> tuple[np.ndarray, np.ndarray]:
    p = np.where(with_arm, 0.9 * (1 - drop), 0.9)[..., None]
    failed = rng.binomial(3, np.broadcast_to(p, (*with_arm.shape, 4)))
    return failed.sum(axis=-1), np.full(with_arm.shape, 12)


def poisson(mean: float, k: float | None = None) -> Generator:
    def generate(
        rng: np.random.Generator, with_arm: np.ndarray, drop: float
    ) -> tuple[np.ndarray, np.ndarray]:
        shape = (*with_arm.shape, 4)
        rate = np.where(with_arm, mean * (1 - drop), mean)[..., None] * np.ones(shape)
        if k is not None:
            rate = rng.gamma(k, rate / k)
        failed = rng.poisson(rate)
        passed = rng.poisson(2.0, size=shape)
        return failed.sum(axis=-1), (failed + passed).sum(axis=-1)

    return generate


def _sessions(
    rng: np.random.Generator,
    with_arm: np.ndarray,
    drop: float,
    trend: bool = False,
    carry: bool = False,
    fewer_checks: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    shape = with_arm.shape
    mask = _varying_turns(rng, shape)
    difficulty = rng.gamma(1.0, 1.0, size=shape)
    base = 0.3 * difficulty
    if trend:
        base = base * np.linspace(0.5, 1.5, shape[-1])
    effect = np.where(with_arm, 1 - drop, 1.0)
    checks = 1 + rng.poisson(
        np.where(with_arm, 2.0 * 0.6, 2.0)[..., None] if fewer_checks else 2.0, size=(*shape, MAX_TURNS)
    )
    if not carry:
        p = np.minimum(base * effect, 0.95)[..., None]
        failed = rng.binomial(checks, np.broadcast_to(p, checks.shape))
        return _sum(failed, mask), _sum(checks, mask)
    failed = np.zeros_like(checks)
    previous = np.zeros(shape, dtype=bool)
    for t in range(MAX_TURNS):
        acting = effect if t else np.ones(shape)
        p = np.minimum(base * acting * np.where(previous, 1.5, 1.0), 0.95)
        failed[..., t] = rng.binomial(checks[..., t], p)
        previous = failed[..., t] > 0
    return _sum(failed, mask), _sum(checks, mask)


SCENARIOS: dict[str, Generator] = {
    "readme": readme,
    "poisson-1": poisson(1.0),
    "poisson-0.3": poisson(0.3),
    "negbin-0.5": poisson(1.0, 0.5),
    "negbin-0.1": poisson(1.0, 0.1),
    "sessions": lambda rng, w, d: _sessions(rng, w, d),
    "trend": lambda rng, w, d: _sessions(rng, w, d, trend=True),
    "carry-over": lambda rng, w, d: _sessions(rng, w, d, carry=True),
    "fewer-checks": lambda rng, w, d: _sessions(rng, w, d, fewer_checks=True),
    "peeking": lambda rng, w, d: _sessions(rng, w, d),
}


def _capped_mean(scale: float) -> float:
    """E[min(scale * D, 0.95)] for a difficulty D ~ Exponential(1) (Gamma with shape 1)."""
    return scale * (1 - math.exp(-0.95 / scale))


def true_ratio(name: str, drop: float, rng: np.random.Generator) -> float:
    """Failed checks per check run, with over without, in the scenario's population.

    Exact where it can be worked out: the number of checks does not depend on the failure rate, so
    the ratio is the ratio of mean failure rates per check (averaged over the trend's span where
    there is one). The carry-over scenario, whose turns depend on each other, is measured on
    2,000,000 simulated sessions per arm.
    """
    if drop == 0:
        return 1.0
    if name == "readme":
        return 1 - drop
    if name in ("poisson-1", "negbin-0.5", "negbin-0.1", "poisson-0.3"):
        mean = 0.3 if name == "poisson-0.3" else 1.0
        return (1 - drop) * (mean + 2) / (mean * (1 - drop) + 2)
    if name in ("sessions", "peeking", "fewer-checks", "trend"):
        spans = np.linspace(0.5, 1.5, 10_001) if name == "trend" else np.array([1.0])
        with_rate = np.mean([_capped_mean(0.3 * t * (1 - drop)) for t in spans])
        without_rate = np.mean([_capped_mean(0.3 * t) for t in spans])
        return float(with_rate / without_rate)
    totals = np.zeros(4)
    for _ in range(20):
        ones, zeros = np.ones((1000, 100), dtype=bool), np.zeros((1000, 100), dtype=bool)
        fw, cw = SCENARIOS[name](rng, ones, drop)
        fo, co = SCENARIOS[name](rng, zeros, drop)
        totals += [fw.sum(), cw.sum(), fo.sum(), co.sum()]
    return float((totals[0] / totals[1]) / (totals[2] / totals[3]))


def assignments(runs: int, sessions: int, seed: int) -> np.ndarray:
    """(runs, sessions) booleans, True = with: the real assignment, a new trial seed per run.

    `bank test` draws each trial's seed from the operating system; here they are drawn from a seeded
    generator instead, so a run of this benchmark can be repeated exactly.
    """
    rng = np.random.default_rng(seed)
    out = np.zeros((runs, sessions), dtype=bool)
    for r in range(runs):
        trial_seed = int(rng.integers(0, 2**63 - 1))
        out[r] = [arms.arm_at(trial_seed, n) == arms.WITH for n in range(sessions)]
    return out


def as_sessions(with_arm: np.ndarray, failed: np.ndarray, checks: np.ndarray) -> list[stats.Session]:
    return [
        stats.Session(str(i), stats.WITH if w else stats.WITHOUT, 1, int(c), int(f), 0, frozenset())
        for i, (w, f, c) in enumerate(zip(with_arm.tolist(), failed.tolist(), checks.tolist(), strict=True))
    ]


def cell(
    name: str, drop: float, runs: int, planned: int, arm_table: np.ndarray, seed: int
) -> dict[str, float]:
    """One scenario and drop over `runs` simulated trials: helps, harms and coverage rates."""
    rng = np.random.default_rng(seed)
    generate = SCENARIOS[name]
    truth = true_ratio(name, drop, rng)
    failed, checks = generate(rng, arm_table, drop)
    helps = harms = covered = 0
    for r in range(runs):
        sessions = as_sessions(arm_table[r], failed[r], checks[r])
        if name == "peeking":
            verdict = None
            stop = len(sessions)
            for k in range(1, len(sessions) + 1):
                verdict = stats.decide(sessions[:k], planned, lessons=False)
                if verdict.verdict != stats.COLLECTING:
                    stop = min(stop, k + 10)
                if verdict.verdict == stats.HELPS or k >= stop:
                    break
            assert verdict is not None
        else:
            verdict = stats.decide(sessions, planned, lessons=False)
        helps += verdict.verdict == stats.HELPS
        harms += verdict.verdict == stats.HARMS
        low, high = verdict.comparison.low, verdict.comparison.high
        covered += low is not None and high is not None and low <= truth <= high
    return {"truth": truth, "helps": helps / runs, "harms": harms / runs, "covered": covered / runs}


def upper(rate: float, runs: int) -> float:
    """The one-sided 95% Wilson upper bound of a measured rate (how high the true rate could be)."""
    z = 1.6448536269514722
    centre = rate + z * z / (2 * runs)
    spread = z * math.sqrt(rate * (1 - rate) / runs + z * z / (4 * runs * runs))
    return (centre + spread) / (1 + z * z / runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--planned", type=int, default=30)
    parser.add_argument("--only", nargs="*", default=None, help="Scenario names to run.")
    parser.add_argument("--power", action="store_true", help="The power table of the sessions scenario.")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--null-only", action="store_true", help="Only the no-effect cells (for more runs).")
    args = parser.parse_args()
    started = time.perf_counter()
    if args.power:
        print(
            f"sessions scenario, {args.runs} simulated trials per cell, the rule's test at {stats.ALPHA:.0%}: "
            'how often the verdict is "helps"'
        )
        print(f"{'per arm':>8} {'no effect':>10} {'20% drop':>9} {'40% drop':>9} {'cover 0/20/40':>15}")
        for planned in (30, 60, 100, 200):
            table = assignments(args.runs, 2 * planned + 8, args.seed * 7907 + planned)
            got = [cell("sessions", d, args.runs, planned, table, args.seed + i) for i, d in enumerate(DROPS)]
            cover = "/".join(f"{g['covered']:.3f}" for g in got)
            print(
                f"{planned:>8} {got[0]['helps']:>10.3f} {got[1]['helps']:>9.3f} {got[2]['helps']:>9.3f} {cover:>15}",
                flush=True,
            )
        print(f"({time.perf_counter() - started:.0f} s)")
        return
    names = args.only or list(SCENARIOS)
    if args.null_only:
        print(
            f"no effect only, {args.runs} simulated trials per scenario, {args.planned} sessions per arm, "
            f"the rule's test at {stats.ALPHA:.0%}"
        )
        print(f"{'scenario':<13} {'helps':>7} {'(upper)':>8} {'harms':>7} {'cover':>7}")
        for number, name in enumerate(names):
            table = assignments(args.runs, 2 * args.planned + 8, args.seed * 7919 + number)
            got = cell(name, 0.0, args.runs, args.planned, table, args.seed * 1000 + number)
            print(
                f"{name:<13} {got['helps']:>7.4f} {upper(got['helps'], args.runs):>8.4f} "
                f"{got['harms']:>7.4f} {got['covered']:>7.4f}",
                flush=True,
            )
        print(f"({time.perf_counter() - started:.0f} s)")
        return
    print(
        f"{args.runs} simulated trials per cell, {args.planned} sessions per arm, the rule's test at "
        f"{stats.ALPHA:.0%}; "
        'helps = share of trials whose verdict is "helps" (at no effect: the false positive rate, '
        "with its one-sided 95% upper bound); cover = share whose 95% interval holds the true ratio"
    )
    print(
        f"{'scenario':<13} {'true ratio 0/20/40':>19} {'helps@0':>8} {'(upper)':>8} {'helps@20':>9} "
        f"{'helps@40':>9} {'harms@0':>8} {'cover@0':>8} {'cover@20':>9} {'cover@40':>9}"
    )
    for number, name in enumerate(names):
        table = assignments(args.runs, 2 * args.planned + 8, args.seed * 7901 + number)
        got = [
            cell(name, d, args.runs, args.planned, table, args.seed * 100 + 10 * number + i)
            for i, d in enumerate(DROPS)
        ]
        truths = "/".join(f"{g['truth']:.2f}" for g in got)
        print(
            f"{name:<13} {truths:>19} {got[0]['helps']:>8.3f} {upper(got[0]['helps'], args.runs):>8.3f} "
            f"{got[1]['helps']:>9.3f} {got[2]['helps']:>9.3f} {got[0]['harms']:>8.3f} "
            f"{got[0]['covered']:>8.3f} {got[1]['covered']:>9.3f} {got[2]['covered']:>9.3f}",
            flush=True,
        )
    print(f"({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
