"""The trial's rule and verdict: decisions, attribution, running rates, the report and the chart."""

from __future__ import annotations

import pytest

from lessonbank.trial import chart
from lessonbank.trial import stats as v


def turn(n: int, arm: str, failed: int, lessons: tuple[str, ...] = (), checks: int | None = None) -> v.Turn:
    return v.Turn(
        "s", str(n), arm, n, checks if checks is not None else max(failed, 1), failed, False, lessons
    )


def arms(turns_with: int, failed_with: int, turns_without: int, failed_without: int) -> list[v.Turn]:
    """Turns whose failed checks add up to the given totals (spread as evenly as possible)."""
    out = []
    for arm, n, failed in ((v.WITH, turns_with, failed_with), (v.WITHOUT, turns_without, failed_without)):
        for i in range(n):
            out.append(turn(len(out), arm, failed // n + (1 if i < failed % n else 0)))
    return out


@pytest.mark.parametrize(
    ("turns_with", "failed_with", "turns_without", "failed_without", "decision", "reason"),
    [
        (29, 0, 40, 40, v.NO_EFFECT, "too few turns: with has 29; the rule needs 30 in each arm"),
        (40, 0, 29, 40, v.NO_EFFECT, "too few turns: without has 29; the rule needs 30 in each arm"),
        (0, 0, 0, 0, v.NO_EFFECT, "too few turns: with has 0, without has 0; the rule needs 30 in each arm"),
        (30, 24, 30, 30, v.HELP, "failed checks per turn are 20.0% lower with lessons; the rule needs 20%"),
        (30, 21, 30, 30, v.HELP, "failed checks per turn are 30.0% lower with lessons; the rule needs 20%"),
        (
            30,
            25,
            30,
            30,
            v.NO_EFFECT,
            "failed checks per turn are only 16.7% lower with lessons; the rule needs 20%",
        ),
        (30, 36, 30, 30, v.NO_EFFECT, "failed checks per turn are 20.0% HIGHER with lessons"),
        (
            30,
            0,
            30,
            0,
            v.NO_EFFECT,
            "no failed checks without lessons, so there is nothing for lessons to lower",
        ),
        (60, 40, 30, 30, v.HELP, "failed checks per turn are 33.3% lower with lessons; the rule needs 20%"),
    ],
)
def test_the_rule(
    turns_with: int, failed_with: int, turns_without: int, failed_without: int, decision: str, reason: str
) -> None:
    result = v.judge(arms(turns_with, failed_with, turns_without, failed_without))
    assert (result.decision, result.reason) == (decision, reason)


def test_the_rule_is_printed_with_its_constants() -> None:
    assert v.RULE == (
        "Rule (fixed in advance): lessons are said to help only when each arm has at least 30 turns "
        "AND the failed-check rate per turn is at least 20% lower with lessons than without; "
        "otherwise no effect is claimed. The rule decides; the 95% interval informs."
    )
    assert (v.MIN_TURNS_PER_ARM, v.MIN_RELATIVE_DROP, v.CONFIDENCE) == (30, 0.20, 0.95)


def attribution_turns(with_failed: list[int], without_failed: list[int], slug: str) -> list[v.Turn]:
    out = [turn(i, v.WITH, f, (slug,)) for i, f in enumerate(with_failed)]
    return out + [turn(len(out) + i, v.WITHOUT, f, (slug,)) for i, f in enumerate(without_failed)]


@pytest.mark.parametrize(
    ("with_failed", "without_failed", "flag"),
    [
        (
            [1] * 5,
            [0] * 5,
            "with-arm does worse: 1.00 failed checks per turn with it (5 turns) vs 0.00 without (5 turns)",
        ),
        ([0] * 5, [1] * 5, None),
        ([1] * 4, [0] * 5, None),  # too few turns to flag
        ([1] * 5, [1] * 5, None),  # equal is not worse
        (
            [2, 0, 0, 0, 0, 0],
            [0] * 5 + [1],
            "with-arm does worse: 0.33 failed checks per turn with it (6 turns) vs 0.17 without (6 turns)",
        ),
    ],
)
def test_attribution_flags_lessons_whose_with_arm_does_worse(
    with_failed: list[int], without_failed: list[int], flag: str | None
) -> None:
    (item,) = v.attribute(attribution_turns(with_failed, without_failed, "pytest-hang"))
    assert item.slug == "pytest-hang"
    assert (item.with_arm.turns, item.with_arm.failed) == (len(with_failed), sum(with_failed))
    assert (item.without_arm.turns, item.without_arm.failed) == (len(without_failed), sum(without_failed))
    assert item.flag == flag


def test_attribution_counts_a_turn_once_per_lesson_and_keeps_lessons_apart() -> None:
    turns = [
        turn(0, v.WITH, 2, ("a", "b", "a")),
        turn(1, v.WITHOUT, 1, ("a",)),
        turn(2, v.WITHOUT, 0, ()),
    ]
    got = {
        a.slug: (a.with_arm.turns, a.with_arm.failed, a.without_arm.turns, a.without_arm.failed)
        for a in v.attribute(turns)
    }
    assert got == {"a": (1, 2, 1, 1), "b": (1, 2, 0, 0)}


def test_running_rates_are_cumulative_per_arm_in_assignment_order() -> None:
    turns = [turn(2, v.WITH, 0), turn(0, v.WITH, 2), turn(1, v.WITHOUT, 1), turn(3, v.WITHOUT, 0)]
    got = [(p.order, p.arm, p.turns, p.rate) for p in v.running(turns)]
    assert got == [(0, v.WITH, 1, 2.0), (1, v.WITHOUT, 1, 1.0), (2, v.WITH, 2, 1.0), (3, v.WITHOUT, 2, 0.5)]
    for point in v.running(turns):
        assert point.low <= point.rate <= point.high


def test_report_for_no_effect_says_the_honest_move_is_bank_off() -> None:
    result = v.judge(
        arms(30, 30, 30, 30) + [turn(60, v.WITH, 0, ("lint-first",)), turn(61, v.WITHOUT, 0, ("lint-first",))]
    )
    assert v.report_lines(result) == [
        v.RULE,
        "",
        "Verdict: NO EFFECT (failed checks per turn are the same with and without lessons).",
        "  with        31 turns     31 checks     30 failed   0.97 failed/turn     0 recovered",
        "  without     31 turns     31 checks     30 failed   0.97 failed/turn     0 recovered",
        "Rate ratio with/without: 1.00 (95% exact conditional interval 0.58 to 1.72); "
        "permutation test p = 1.000 (2000 shuffles).",
        "No effect is claimed, so the honest move is `bank off`.",
        "",
        "Per lesson (turns it was or would have been injected in; failed checks per turn):",
        "  lint-first: with 1 turns 0.00, without 1 turns 0.00",
        "0 lesson(s) flagged (flags need 5+ turns in each arm and 20% more failed checks per turn with the lesson).",
    ]


def test_report_for_too_few_turns_also_offers_to_keep_testing() -> None:
    lines = v.report_lines(v.judge(arms(3, 0, 3, 3)))
    assert (
        lines[2]
        == "Verdict: NO EFFECT (too few turns: with has 3, without has 3; the rule needs 30 in each arm)."
    )
    assert lines[-2:] == [
        "No effect is claimed, so the honest move is `bank off`.",
        "(Or keep `bank test` on until each arm has 30 turns.)",
    ]


def test_report_when_lessons_help_does_not_suggest_bank_off() -> None:
    result = v.judge(arms(40, 10, 40, 40))
    assert result.decision == v.HELP
    assert not any("bank off" in line for line in v.report_lines(result))
    assert "permutation test p < 0.001 (2000 shuffles)." in v.report_lines(result)[5]
    assert v.status_line(result) == (
        "trial: lessons help — 40 turns with, 40 without; "
        "failed checks per turn are 75.0% lower with lessons; the rule needs 20%"
    )


def test_chart_is_deterministic_svg_with_both_arms_and_the_interval() -> None:
    turns = arms(35, 20, 35, 35)
    result = v.judge(turns)
    first = chart.svg(result, v.running(turns))
    assert first == chart.svg(v.judge(turns), v.running(turns))
    assert first.startswith('<svg xmlns="http://www.w3.org/2000/svg"')
    assert first.endswith("</svg>\n")
    assert first.count("<polyline") == 2 and first.count("<polygon") == 2
    assert "rate ratio 0.57 (" in first
    assert "LESSONS HELP" in first


def test_chart_without_turns_says_so() -> None:
    empty = chart.svg(v.judge([]), [])
    assert "no trial turns yet" in empty
    assert "<polyline" not in empty


@pytest.mark.parametrize(
    ("with_failed", "without_failed", "flagged"),
    [
        ((2, 2, 2, 2, 2), (2, 2, 2, 2, 2), False),  # the same: no flag
        ((3, 2, 2, 2, 2), (2, 2, 2, 2, 2), False),  # 10% worse: noise, no flag
        ((3, 3, 2, 2, 2), (2, 2, 2, 2, 2), True),  # exactly 20% worse: flag
        ((1, 0, 0, 0, 0), (0, 0, 0, 0, 0), True),  # any failure against none
        ((0, 0, 0, 0, 0), (0, 0, 0, 0, 0), False),
        ((9, 9, 9, 9), (0, 0, 0, 0, 0), False),  # only 4 turns with it: too few to say
    ],
)
def test_a_lesson_is_flagged_only_when_clearly_worse(
    with_failed: tuple[int, ...], without_failed: tuple[int, ...], flagged: bool
) -> None:
    turns = [v.Turn("s", f"w{n}", v.WITH, n, 3, f, lessons=("x",)) for n, f in enumerate(with_failed)]
    turns += [
        v.Turn("s", f"o{n}", v.WITHOUT, 10 + n, 3, f, lessons=("x",)) for n, f in enumerate(without_failed)
    ]
    (item,) = v.attribute(turns)
    assert (item.flag is not None) == flagged
