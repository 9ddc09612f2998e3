"""Hostile triggers cannot hang a hook: the static check flags them, the matchers count their steps.

Generated hostile regexes (nested quantifiers, overlapping alternations, backreferences) and globs
run against adversarial subjects of 20-200 characters. Every one must be flagged by the static
check (so `bank check` and capture refuse it and `bank index` leaves it out), and the hooks'
matchers must give up within their step budget when one runs all the same. Bounds are on step
counts, never on wall time. Ordinary triggers from real lessons must not be flagged.
"""

from __future__ import annotations

import itertools
import random
from pathlib import Path
from types import SimpleNamespace

import pytest

from lessonbank.hooks import pre_tool
from lessonbank.index import compiled_build, compiled_pieces, compiled_read
from lessonbank.matching import budget, globs, regex_compiler, regex_engine
from lessonbank.matching.regex_hazard import hazard
from lessonbank.state import statedir

# Character classes whose letters overlap on the characters the subjects repeat.
ATOMS = ["a", r"\w", "[a-z]", ".", r"\S", "[ab]", "(?:a)", r"[^!]"]
NESTED = ["({0}+)+", "({0}*)*", "({0}+)*", "(?:{0}+){{2,}}", "({0}{{1,5}})+", "(({0})+)+", "({0}+{0}?)+"]
OVERLAPPING = ["({0}+{0}+)+", "({0}+{0}*{0})+", "({0}*b?{0}*)+", "({0}+{0}+x)+"]
# (`(a|\w)+` is no alternation once parsed: `re` merges single characters into one set `[a\w]`.)
ALTERNATIONS = ["({0}|{0})*", "({0}|{0}{0})+", "(?:{0}|{0}?)+", "(aa|{0}{0})+", "({0}|b|{0}a)*"]
BACKREFERENCES = [r"({0}+)\1", r"(?P<g>{0})(?P=g)+", r"({0})?(?(1)b|c)", r"({0}+)+\1b"]
AROUND = [("", "$"), ("^", "b"), (r"\b", "!"), ("git ", "y"), ("", r"\b$")]


def _hostile() -> list[str]:
    out = []
    for template, atom in itertools.product(NESTED + OVERLAPPING + ALTERNATIONS + BACKREFERENCES, ATOMS):
        core = template.format(atom)
        before, after = AROUND[len(out) % len(AROUND)]
        out.append(before + core + after)
    # The ones reported to hang the hook, exactly.
    return out + [r"(a+)+$", r"(x+x+)+y", r"^(a|a)*b", r"(a+)+\1b", r"(.*,)*x", r"(\w+\s?)*$"]


HOSTILE = _hostile()


def _subjects(seed: int) -> list[str]:
    """Long runs of what the hostile patterns repeat, each ending in a character that fails them."""
    rng = random.Random(seed)
    out = []
    for n in (20, 22, 60, 200):
        out += ["a" * n + "!", "a" * n, "git " + "a" * (n - 4) + "!", "ab" * (n // 2) + "!"]
    out += ["".join(rng.choice("aab") for _ in range(rng.randint(20, 200))) + "!" for _ in range(4)]
    return out


SUBJECTS = _subjects(12)

ORDINARY = [
    r"\bpytest\b(?!.*</dev/null)", r"\bgit\s+push\b", r"^npm (run )?test", r"^git\s+push\b.*--force",
    r"\bgo\s+(test|vet|build)\b", r"cargo (test|check|clippy)", r"rm\s+-rf?\s+/", r"(?i)NPM (test|run test)",
    r"\bgit\b(?!.*--no-verify).*commit", r"^(sudo\s+)?(apt|apt-get)\s+install", r"docker(-compose| compose)\s+up",
    r"\bpip3?\s+install\b(?!.*--require-hashes)", r"\bkubectl\s+(apply|delete)\b.*-n\s+prod", r"(?<=uv )pip install",
    r"\bterraform\s+(apply|destroy)\b(?!.*-target)", r"^make(\s+-j\d+)?\s+release", r"\.py$", r"\bjest\b(?!.*--forceExit)",
    r"(\s+-\S+)*\s+push", r"(\s+(-v|--verbose))*", r"(-[a-z]+\s+)*deploy", r"\w+(\.\w+)+", r"([a-z0-9-]+/)*x",
    r"(\S+\s+)*commit", r"(ab*)+", r"(?:x|y)+z", r".*foo.*bar", r"(ab|ac)*", r"\bhelm\s+upgrade\b.*--install",
    r"(\s+--?\w+(=\S+)?)*\s*$", r"\bpsql\b.*-c\s", r"^\s*yarn\s+(add|remove)\b", r"\bsed\s+-i\b", r"[-+]?\d+",
    r"\balembic\s+(upgrade|downgrade)\s+(head|-\d+)", r"git (checkout|switch) -[bc] \S+", r"\bmvn\b.*\b(-DskipTests)\b",
]  # fmt: skip

HOSTILE_GLOBS = [
    "**/**/**/**/*a*a*a*a*b", "**/**/x", "*a*a*a*a*a*a*a*b", "a*/*b*/*c*/*d*/**/*e*f*g",
    "{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}{m,n}", "src/{a,b,c,d,e}/{e,f,g,h}/{i,j,k,l}/*.py",
]  # fmt: skip
ORDINARY_GLOBS = ["migrations/**", "*.lock", "src/**/test_*.py", "**/*.{js,ts,tsx}", "docs/", "a/*/b/**/c*.md"]  # fmt: skip
GLOB_PATHS = ["a/" * 10 + "a" * 30, "a/" * 50 + "a" * 100, "a" * 200, "aaa/" * 40 + "b"]


@pytest.mark.parametrize("pattern", HOSTILE)
def test_the_static_check_flags_every_generated_hostile_pattern(pattern: str) -> None:
    reason = hazard(pattern)
    assert reason, pattern
    assert "\n" not in reason and ("exponential" in reason or "cannot be bounded" in reason)


@pytest.mark.parametrize("pattern", ORDINARY)
def test_ordinary_triggers_are_not_flagged(pattern: str) -> None:
    assert hazard(pattern) == ""


def test_the_reason_quotes_the_construct_and_says_how_to_rewrite_it() -> None:
    assert hazard(r"(a+)+$") == (
        "nested quantifier `(a+)+` can take exponential time: its inner `a+` can match the text of "
        "a whole pass; rewrite as `a+`"
    )
    assert hazard(r"^(a|a)*b").startswith("alternation under `(a|a)*` can take exponential time")
    assert hazard(r"(a+)\1").startswith("backreference `\\1` needs backtracking")


def test_the_mini_matcher_gives_up_within_its_step_budget() -> None:
    budget = 2000  # the property is the same for any budget; a small one keeps the test quick
    gave_up = runs = 0
    for pattern in HOSTILE:
        program, _ = regex_compiler.compile_pattern(pattern)
        if program is None:
            continue  # backreferences: no mini program; `bank index` leaves them out (below)
        for subject in SUBJECTS:
            found, steps = regex_engine.measure(program, subject, budget)
            runs += 1
            # A repeat scans its run of characters before the next step is counted.
            assert steps <= budget + len(subject) + 1, (pattern, subject)
            gave_up += found is None
    assert runs > 2000
    assert gave_up > 1000  # without the budget many of these take exponential time


def test_the_reported_patterns_hit_the_budget_instead_of_hanging() -> None:
    for pattern, subject in [(r"(a+)+$", "a" * 22 + "!"), (r"(x+x+)+y", "x" * 22), (r"^(a|a)*b", "a" * 22)]:
        program, _ = regex_compiler.compile_pattern(pattern)
        assert regex_engine.measure(program, subject, budget.steps(len(subject)))[0] is None
        with pytest.raises(budget.Exhausted, match=f"gave up after {budget.steps(len(subject))} matching steps"):
            regex_engine.search(program, pattern, subject)


def _row(slug: str, commands: list[str] = (), paths: list[str] = ()) -> SimpleNamespace:  # type: ignore[assignment]
    return SimpleNamespace(
        slug=slug, priority=5, confidence=0.5, full=f"{slug} full", summary=slug, tools=[],
        commands=list(commands), paths=list(paths), keywords=[], tags=[], title=slug, when="w", do="d",
    )  # fmt: skip


SETTINGS = {"max_lessons": 3, "max_bytes": 4000}


def test_the_index_leaves_hostile_triggers_out_so_the_hooks_never_run_them() -> None:
    rows = [_row(f"h{i}", commands=[p]) for i, p in enumerate(HOSTILE)]
    rows += [_row(f"g{i}", paths=[g]) for i, g in enumerate(HOSTILE_GLOBS)]
    rows += [_row("fine", commands=[r"\bgit\s+push\b"], paths=["*.lock"])]
    data = compiled_build.assemble([compiled_pieces.piece(r, {}) for r in rows], SETTINGS)
    kept = {entry[6] for seconds in data["pre"].values() for gid in seconds.values() for entry in data["groups"][gid]}
    assert kept == {r"\bgit\s+push\b", "*.lock"}


def test_a_slow_trigger_in_the_hook_is_dropped_and_logged(tmp_path: Path) -> None:
    # Not flagged (no repeat nests another), but polynomial: the budget is what stops it.
    slow = r"a*a*a*a*a*a*a*a*b"
    assert hazard(slow) == ""
    rows = [_row("slow", commands=[slow]), _row("push", commands=[r"\bgit\b"])]
    index = compiled_read.MemIndex(compiled_build.assemble([compiled_pieces.piece(r, {}) for r in rows], SETTINGS))
    session = statedir.Session(str(tmp_path), "s1")
    command = "git " + "a" * 120
    hits = pre_tool.matching(index, "Bash", {"command": command}, "/r", "/r", session)
    assert [slug for _, slug, _ in hits] == ["push"]
    log = (tmp_path / statedir.HOOK_LOG).read_text()
    assert "PreToolUse: lesson slow: command trigger 'a*a*a*a*a*a*a*a*b' gave up after" in log
    assert log.count("\n") == 1


@pytest.mark.parametrize("glob", HOSTILE_GLOBS)
def test_hostile_globs_are_flagged_and_bounded(glob: str) -> None:
    assert globs.hazard(glob)
    try:
        compiled = globs.compile_glob(glob)
    except globs.GlobError:
        return  # too many brace alternatives to expand at all
    for path in GLOB_PATHS:
        allowed = budget.steps(len(path))
        _, steps = globs.measure(compiled, path, allowed)
        assert steps <= allowed + len(path) + 1  # a wildcard pays for its choices before it makes them


@pytest.mark.parametrize("glob", ORDINARY_GLOBS)
def test_ordinary_globs_are_not_flagged(glob: str) -> None:
    assert globs.hazard(glob) == ""


def test_remembered_failures_keep_a_many_star_glob_polynomial() -> None:
    glob = "*a*a*a*a*a*a*a*b"  # flagged, but even so: without memory, C(200, 7) ways to place the stars
    compiled = globs.compile_glob(glob)
    found, steps = globs.measure(compiled, "a" * 200, 10**9)
    assert found is False and steps <= len(compiled[1][0]) * 201 * 201
    assert globs.measure(compiled, "a" * 200, budget.steps(200))[0] is None


def test_one_call_shares_one_budget_across_its_searches() -> None:
    program, _ = regex_compiler.compile_pattern(r"a*a*a*a*a*a*a*a*b")
    budget.new_call()
    try:
        outcomes = []
        for _ in range(20):
            try:
                regex_engine.search(program, "slow", "a" * 200)
                outcomes.append("matched")
            except budget.Exhausted as exc:
                outcomes.append(str(exc))
        spent = "skipped: this call's matching budget is spent"
        # the per-search budget ends each search until the call's allowance is gone
        assert outcomes[0] == f"gave up after {budget.steps(200)} matching steps"
        ran = -(-budget.CALL_BUDGET // budget.steps(200))  # searches until the allowance is gone
        assert outcomes[ran:] == [spent] * (20 - ran) and spent not in outcomes[:ran]
    finally:
        budget.end_call()
    with pytest.raises(budget.Exhausted, match="gave up after"):  # outside a call: its own budget only
        regex_engine.search(program, "slow", "a" * 200)


def test_the_re_fallback_of_a_call_is_stopped_by_its_clock() -> None:
    """A non-ASCII subject goes to `re`, which backtracks without counting: `a*a*a*a*b` over
    200 a's and an é takes seconds there. Inside a call it gives up at RE_SECONDS."""
    budget.new_call()
    try:
        with pytest.raises(budget.Exhausted, match="of `re` in this call"):
            regex_engine.search(None, r"a*a*a*a*b", "a" * 200 + "é")
        with pytest.raises(budget.Exhausted, match="matching time is spent"):
            regex_engine.search(None, r"caf.", "café")
    finally:
        budget.end_call()
    assert regex_engine.search(None, r"caf.", "café") is True  # outside a call: no clock


def test_globs_share_one_budget_per_call() -> None:
    compiled = globs.compile_glob("*a*a*a*a*a*a*a*b")
    budget.new_call()
    try:
        messages = []
        for _ in range(30):
            try:
                globs.match(compiled, "a" * 200)
            except budget.Exhausted as exc:
                messages.append(str(exc))
        assert messages[-1] == "skipped: this call's matching budget is spent"
    finally:
        budget.end_call()


def test_globs_and_regexes_draw_on_one_allowance_per_call() -> None:
    """Slow globs spend the call's steps, and then a regex search of the same call is skipped."""
    compiled = globs.compile_glob("*a*a*a*a*a*a*a*b")
    program, _ = regex_compiler.compile_pattern(r"a*a*a*a*a*a*a*a*b")
    budget.new_call()
    try:
        for _ in range(-(-budget.CALL_BUDGET // budget.steps(200))):
            with pytest.raises(budget.Exhausted, match="gave up after"):
                globs.match(compiled, "a" * 200)
        with pytest.raises(budget.Exhausted, match="skipped: this call's matching budget is spent"):
            regex_engine.search(program, "slow", "a" * 200)
    finally:
        budget.end_call()
    assert globs.match(compiled, "a" * 10 + "b")  # outside a call: each search has its own budget
