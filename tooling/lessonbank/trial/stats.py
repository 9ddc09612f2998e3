"""The trial's verdict: the rule fixed in advance, applied by session to per-turn records. Pure.

The records are the ones `bank trial export` writes and `bank trial analyze` reads, one per turn:
session, turn, arm, checks, failed, ended_failing, lessons. Sessions are the unit: they were
randomized, and a lesson handed over stays in the session's context. The primary measure is failed
checks per check run; the share of turns that end with a check still failing and checks per turn
are reported beside it (a lesson that only makes the agent run fewer checks does not lower the
primary measure). The test and the interval are in trial.inference.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from lessonbank.trial import inference

# The rule, fixed before any data is seen. Changing these after a trial started is cheating.
MIN_PLANNED = 30  # sessions in each arm: the smallest planned size allowed
DEFAULT_PLANNED = 60
MIN_DROP = 0.20  # the smallest drop in failed checks per check run worth calling help
# One-sided: "lessons help". 4%, not 5%, chosen before any trial ran: the permutation test's false
# positive rate is at most its level when lessons change nothing, and only close to it when they
# change the number of checks, so at 5% the simulated no-effect rates sat at 5% and scattered
# above it by chance. A rejection at 4% is a rejection at 5%, so the rule still holds.
ALPHA = 0.04
HARM_ALPHA = 0.025  # one-sided the other way: "lessons harm"
CONFIDENCE = 0.95
SHUFFLES = 2000
SHUFFLE_SEED = 20261129
# Fewer analysed sessions than this with a failed check (both arms together): too few to tell.
MIN_FAILING_SESSIONS = 10
# Per lesson (exploratory): tested only with this many sessions in each arm; flagged only when the
# Holm-adjusted one-sided p-value (with-arm worse) across all tested lessons is at most LESSON_ALPHA.
LESSON_MIN_SESSIONS = 5
LESSON_ALPHA = 0.05

WITH = "with"
WITHOUT = "without"
ARMS = (WITH, WITHOUT)
COLLECTING = "collecting"
HELPS = "helps"
NO_EFFECT = "no effect"
HARMS = "harms"
METHOD = (
    f"session-level studentized permutation test, one-sided at {ALPHA:.0%}, {SHUFFLES} shuffles; "
    f"{CONFIDENCE:.0%} interval calibrated by the same shuffles on a session-robust standard error"
)
METHOD_SHORT = f"session permutation (studentized), one-sided at {ALPHA:.0%}; session-robust ratio interval"


def rule_text(planned: int) -> str:
    """The rule as printed with every report."""
    return (
        f"Rule (fixed before the trial started): sessions, not turns, are compared. After {planned} "
        f"sessions in each arm (the planned size), lessons are said to help only if a one-sided "
        f"session-level permutation test finds fewer failed checks per check run with lessons at the "
        f"{ALPHA:.0%} level (set below 5%, so that lessons that change nothing are said to help in "
        f"under 5% of trials) AND the estimated drop is at least {MIN_DROP:.0%}; they are said to harm if "
        f"the same test finds more at the {HARM_ALPHA:.1%} level; otherwise no effect is claimed. "
        f"Before {planned} there is no verdict, and sessions after the first {planned} of an arm are "
        f"not analysed, so looking early or often cannot change the answer."
    )


@dataclass(frozen=True)
class TurnRecord:
    """One turn of a trial session: the export's and `analyze`'s record."""

    session: str
    turn: str
    arm: str
    checks: int
    failed: int
    ended_failing: bool
    lessons: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """The record as `bank trial export` writes it (its fields in order, the lessons a list)."""
        return {**asdict(self), "lessons": list(self.lessons)}


def record_from_json(data: object) -> TurnRecord:
    """A record from its JSON object; ValueError naming the problem when it is not one."""
    if not isinstance(data, dict):
        raise ValueError("a record must be a JSON object")
    kinds = {"session": str, "turn": str, "arm": str, "checks": int, "failed": int, "ended_failing": bool}
    for name, kind in kinds.items():
        value = data.get(name)
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise ValueError(f"{name} must be {'a string' if kind is str else kind.__name__}, got {value!r}")
    lessons = data.get("lessons", [])
    if not isinstance(lessons, list) or not all(isinstance(s, str) for s in lessons):
        raise ValueError(f"lessons must be a list of slugs, got {lessons!r}")
    if data["arm"] not in ARMS:
        raise ValueError(f"arm must be with or without, got {data['arm']!r}")
    if not 0 <= data["failed"] <= data["checks"]:
        raise ValueError(f"need 0 <= failed <= checks, got {data['failed']} of {data['checks']}")
    return TurnRecord(
        data["session"], data["turn"], data["arm"], data["checks"], data["failed"],
        data["ended_failing"], tuple(lessons),
    )  # fmt: skip


@dataclass(frozen=True)
class Session:
    """One session's totals."""

    session: str
    arm: str
    turns: int
    checks: int
    failed: int
    ended_failing: int
    lessons: frozenset[str]


def sessions_of(records: Iterable[TurnRecord]) -> list[Session]:
    """Records summed by session, in the order sessions first appear (a session keeps its first arm)."""
    order: dict[str, list[TurnRecord]] = {}
    for record in records:
        order.setdefault(record.session, []).append(record)
    out = []
    for name, items in order.items():
        out.append(
            Session(
                session=name,
                arm=items[0].arm,
                turns=len(items),
                checks=sum(r.checks for r in items),
                failed=sum(r.failed for r in items),
                ended_failing=sum(1 for r in items if r.ended_failing),
                lessons=frozenset(s for r in items for s in r.lessons),
            )
        )
    return out


@dataclass(frozen=True)
class Arm:
    """One arm's totals over its analysed sessions."""

    sessions: int = 0
    turns: int = 0
    checks: int = 0
    failed: int = 0
    ended_failing: int = 0

    @property
    def failed_per_check(self) -> float | None:
        return self.failed / self.checks if self.checks else None

    @property
    def ended_failing_share(self) -> float | None:
        return self.ended_failing / self.turns if self.turns else None

    @property
    def checks_per_turn(self) -> float | None:
        return self.checks / self.turns if self.turns else None

    def to_json(self) -> dict[str, Any]:
        return {
            "sessions": self.sessions,
            "turns": self.turns,
            "checks": self.checks,
            "failed": self.failed,
            "turns_ended_failing": self.ended_failing,
            "failed_per_check": self.failed_per_check,
            "share_of_turns_ended_failing": self.ended_failing_share,
            "checks_per_turn": self.checks_per_turn,
        }


def totals(sessions: Iterable[Session]) -> Arm:
    items = list(sessions)
    return Arm(
        sessions=len(items),
        turns=sum(s.turns for s in items),
        checks=sum(s.checks for s in items),
        failed=sum(s.failed for s in items),
        ended_failing=sum(s.ended_failing for s in items),
    )


@dataclass(frozen=True)
class Lesson:
    """One lesson, exploratory: the analysed sessions it fitted, by arm, and its corrected harm test."""

    slug: str
    with_arm: Arm
    without_arm: Arm
    ratio: float | None = None
    p_harm: float | None = None  # one-sided, uncorrected (None: not tested)
    p_adjusted: float | None = None  # Holm across the tested lessons
    flag: str | None = None


@dataclass(frozen=True)
class Verdict:
    """The decision under the rule and everything behind it."""

    verdict: str
    reason: str
    planned: int
    counts: dict[str, int]  # sessions in the data, by arm
    with_arm: Arm  # the analysed sessions (the first `planned` of each arm, or all while collecting)
    without_arm: Arm
    comparison: inference.Comparison
    too_few: bool = False
    lessons: list[Lesson] = field(default_factory=list)

    @property
    def drop(self) -> float | None:
        ratio = self.comparison.ratio
        return None if ratio is None or math.isinf(ratio) else 1.0 - ratio

    @property
    def beyond_plan(self) -> int:
        return sum(self.counts.values()) - self.with_arm.sessions - self.without_arm.sessions


def _compare(with_sessions: Sequence[Session], without_sessions: Sequence[Session]) -> inference.Comparison:
    return inference.compare(
        [s.failed for s in with_sessions],
        [s.checks for s in with_sessions],
        [s.failed for s in without_sessions],
        [s.checks for s in without_sessions],
        SHUFFLES,
        SHUFFLE_SEED,
        CONFIDENCE,
    )


def planned_sessions(sessions: Sequence[Session], planned: int) -> dict[str, list[Session]]:
    """Each arm's sessions in order, cut at `planned` (the analysed ones)."""
    by_arm: dict[str, list[Session]] = {arm: [] for arm in ARMS}
    for session in sessions:
        if session.arm in by_arm and len(by_arm[session.arm]) < planned:
            by_arm[session.arm].append(session)
    return by_arm


def check_planned(planned: int) -> int:
    """A planned size the rule accepts, returned; ValueError naming the minimum when it is too small."""
    if planned < MIN_PLANNED:
        raise ValueError(
            f"the planned size must be at least {MIN_PLANNED} sessions in each arm, got {planned}"
        )
    return planned


def decide(sessions: Sequence[Session], planned: int, lessons: bool = True) -> Verdict:
    """Apply the rule: collecting before `planned` sessions in each arm, else the verdict over the first ones."""
    check_planned(planned)
    counts = {arm: sum(1 for s in sessions if s.arm == arm) for arm in ARMS}
    by_arm = planned_sessions(sessions, planned)
    w, wo = totals(by_arm[WITH]), totals(by_arm[WITHOUT])
    if min(counts.values()) < planned:
        # No interval and no test before the planned size: only the plain ratio so far.
        ratio = _ratio(w, wo)
        comparison = inference.Comparison(ratio, None, None, None, None)
        reason = (
            f"{counts[WITH]}/{planned} sessions with lessons, {counts[WITHOUT]}/{planned} without; "
            f"no verdict before {planned} in each arm"
        )
        table = attribute(by_arm, test=False) if lessons else []
        return Verdict(COLLECTING, reason, planned, counts, w, wo, comparison, lessons=table)
    comparison = _compare(by_arm[WITH], by_arm[WITHOUT])
    table = attribute(by_arm, test=True) if lessons else []
    failing = sum(1 for arm in ARMS for s in by_arm[arm] if s.failed)
    verdict, reason, too_few = _rule(w, wo, failing, comparison)
    return Verdict(verdict, reason, planned, counts, w, wo, comparison, too_few, table)


def _ratio(w: Arm, wo: Arm) -> float | None:
    """Failed checks per check run, with over without (None when undefined)."""
    if w.failed_per_check is None or not wo.failed_per_check:
        return math.inf if w.failed and wo.checks and not wo.failed else None
    return w.failed_per_check / wo.failed_per_check


def _rule(w: Arm, wo: Arm, failing: int, comparison: inference.Comparison) -> tuple[str, str, bool]:
    """(verdict, plain reason, too few data) at the planned size."""
    if failing < MIN_FAILING_SESSIONS or not w.checks or not wo.checks:
        return (
            NO_EFFECT,
            f"too few to tell: {failing} session(s) had a failed check, the rule needs {MIN_FAILING_SESSIONS}",
            True,
        )
    ratio, p, p_harm = comparison.ratio, comparison.p_lower, comparison.p_higher
    assert ratio is not None and p is not None and p_harm is not None
    drop = 1.0 - ratio
    if p <= ALPHA and drop >= MIN_DROP - 1e-12:
        return (
            HELPS,
            f"{drop:.1%} fewer failed checks per check run with lessons, one-sided {p_text(p)}",
            False,
        )
    if p_harm <= HARM_ALPHA:
        return (
            HARMS,
            f"{-drop:.1%} more failed checks per check run with lessons, one-sided {p_text(p_harm)}",
            False,
        )
    if p <= ALPHA:
        return (
            NO_EFFECT,
            f"{drop:.1%} fewer failed checks per check run with lessons (one-sided {p_text(p)}), "
            f"but the rule needs a drop of {MIN_DROP:.0%}",
            False,
        )
    change = f"{drop:.1%} fewer" if drop >= 0 else f"{-drop:.1%} more"
    return (
        NO_EFFECT,
        f"{change} failed checks per check run with lessons, which chance alone can explain (one-sided {p_text(p)})",
        False,
    )


def attribute(by_arm: dict[str, list[Session]], test: bool) -> list[Lesson]:
    """Per lesson, over the analysed sessions it fitted: totals by arm; with `test`, the Holm-corrected harm test."""
    slugs = sorted({slug for arm in ARMS for s in by_arm[arm] for slug in s.lessons})
    rows = []
    for slug in slugs:
        mine = {arm: [s for s in by_arm[arm] if slug in s.lessons] for arm in ARMS}
        comparison = None
        if test and min(len(mine[WITH]), len(mine[WITHOUT])) >= LESSON_MIN_SESSIONS:
            comparison = _compare(mine[WITH], mine[WITHOUT])
        rows.append((slug, totals(mine[WITH]), totals(mine[WITHOUT]), comparison))
    tested = {
        i: row[3].p_higher for i, row in enumerate(rows) if row[3] is not None and row[3].p_higher is not None
    }
    adjusted = dict(zip(tested, inference.holm(list(tested.values())), strict=True))
    out = []
    for i, (slug, w, wo, comparison) in enumerate(rows):
        p_adj = adjusted.get(i)
        flag = None
        if p_adj is not None and p_adj <= LESSON_ALPHA:
            flag = (
                f"the trial shows harm: {fmt_num(w.failed_per_check)} failed checks per check run in the "
                f"{w.sessions} sessions it was handed to, {fmt_num(wo.failed_per_check)} in the "
                f"{wo.sessions} it was held back from (Holm-adjusted {p_text(p_adj)})"
            )
        out.append(
            Lesson(
                slug, w, wo,
                comparison.ratio if comparison else None,
                comparison.p_higher if comparison else None,
                p_adj, flag,
            )
        )  # fmt: skip
    return out


@dataclass(frozen=True)
class Point:
    """One arm's running failed checks per check run after its n-th session, with a session-robust band."""

    order: int
    arm: str
    sessions: int
    rate: float
    low: float
    high: float


def running(sessions: Sequence[Session], planned: int) -> list[Point]:
    """Each arm's cumulative failed checks per check run over its analysed sessions, in order."""
    z = 1.959963984540054
    seen: dict[str, list[Session]] = {arm: [] for arm in ARMS}
    points = []
    for order, session in enumerate(sessions):
        mine = seen.get(session.arm)
        if mine is None or len(mine) >= planned:
            continue
        mine.append(session)
        band = inference.log_rate_band([s.failed for s in mine], [s.checks for s in mine], z)
        if band is not None:
            points.append(Point(order, session.arm, len(mine), *band))
    return points


# --- figures as text (the flags and reasons here, the report in trial.report) ---


def fmt_num(value: float | None, digits: int = 2) -> str:
    """A figure for a report: n/a for none, inf for infinity, else fixed digits."""
    if value is None:
        return "n/a"
    if math.isinf(value):
        return "inf"
    return f"{value:.{digits}f}"


def p_text(value: float | None) -> str:
    """A p-value as text: "p < 0.001", never "p = 0.000" (the smallest a permutation test gives is 1/(shuffles+1))."""
    if value is not None and value < 0.001:
        return "p < 0.001"
    return f"p = {fmt_num(value, 3)}"
