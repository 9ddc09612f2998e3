"""How often the trial's fixed rule gets it right, and how often a lesson is flagged by noise alone.

Pure statistics, no hook processes: the same design as `tests/trial/test_simulate.py` (80 turns, each
fitting one of 4 lessons in turn, 3 checks per turn, a check failing with probability 0.9 without
lessons), the arms taken from the trial's real assignment sequence, repeated over many seeds.
Prints, for a true 30% drop and for none: how often the rule says "lessons help", and under no
effect the share of lessons flagged with the 20% margin and with a bare "worse".

Usage: python benchmarks/trial_design.py [--seeds 400]
"""

from __future__ import annotations

import argparse
import random

from lessonbank.kernel import arms
from lessonbank.trial import stats as v

TURNS, CHECKS, LESSONS, FAIL_WITHOUT = 80, 3, 4, 0.9


def run(seed: int, drop: float) -> list[v.Turn]:
    """One simulated trial: failed checks per turn drawn with the arm's failure probability."""
    rng = random.Random(seed)
    turns = []
    for n in range(TURNS):
        arm = arms.arm_at(arms.DEFAULT_SEED, arms.DEFAULT_BLOCK, n)
        p = FAIL_WITHOUT * (1 - drop) if arm == v.WITH else FAIL_WITHOUT
        failed = sum(rng.random() < p for _ in range(CHECKS))
        turns.append(v.Turn("s", str(n), arm, n, CHECKS, failed, lessons=(f"lesson-{n % LESSONS}",)))
    return turns


def flagged(turns: list[v.Turn], excess: float) -> int:
    """Lessons flagged when the with-arm must fail `excess` more per turn."""
    saved = v.ATTRIBUTION_MIN_EXCESS
    v.ATTRIBUTION_MIN_EXCESS = excess
    try:
        return sum(1 for item in v.attribute(turns) if item.flag)
    finally:
        v.ATTRIBUTION_MIN_EXCESS = saved


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=400)
    seeds = parser.parse_args().seeds
    print(
        f"design: {TURNS} turns, {LESSONS} lessons, {CHECKS} checks a turn, fail rate {FAIL_WITHOUT} without"
    )
    print(f"rule: {v.RULE}")
    for drop in (0.3, 0.0):
        says = 0
        for seed in range(seeds):
            turns = run(seed, drop)
            with_arm = v.arm_totals(t for t in turns if t.arm == v.WITH)
            without_arm = v.arm_totals(t for t in turns if t.arm == v.WITHOUT)
            says += v.apply_rule(with_arm, without_arm)[0] == v.HELP
        print(f"true drop {drop:.0%}: the rule says 'lessons help' in {says} of {seeds} seeds")
    margin = bare = 0
    for seed in range(seeds):
        turns = run(seed, 0.0)
        margin += flagged(turns, v.ATTRIBUTION_MIN_EXCESS)
        bare += flagged(turns, 1e-6)  # strictly worse, by any amount
    total = seeds * LESSONS
    print(
        f"no true effect: lessons flagged with the {v.ATTRIBUTION_MIN_EXCESS:.0%} margin "
        f"{margin} of {total} ({margin / total:.1%}); with a bare 'worse' {bare} of {total} ({bare / total:.1%})"
    )


if __name__ == "__main__":
    main()
