"""The small regex matcher agrees with `re`, and the literals it keys candidates by are really required."""

from __future__ import annotations

import random
import re

import pytest

from lessonbank.index import compiled_read
from lessonbank.matching import regex_compiler, regex_engine

PATTERNS = [
    r"\bpytest\b", r"pytest(?!.*--timeout)", r"^git\s+push\b.*--force", r"(?i)NPM (test|run test)",
    r"\bgo\s+(test|vet|build)\b", r"a*b", r"(a|ab)(c|bcd)(d*)", r"^$", r"\B", r"x\B", r"(?m)^foo$",
    r"foo$", r"[^a-z]+\d", r"(?i)[A-Z]{2,3}x", r"(ab)*c", r"(a*)*b", r"(a?){3}b", r".*", r"(?s)a.b",
    r"a.b", r"\w+@\w+", r"[\s,]+", r"(?i)[^a]", r"\Aab", r"ab\Z", r"(?=abc)a", r"a(?!b)", r"(?:x|y)+z",
    r"\d{2,}?", r"rm\s+-rf?\s+/", r"\.py$", r"cargo (test|check|clippy)", r"(?x) py test  # comment",
    r"[-+]?\d+", r"[\]a]", r"a{2}", r"a{2,}", r"a{,2}b", r"(a|b|)+c", r"(?i)k", r"(?i)s+", r"(?a)\w+",
    r"\s\S", r"(?i)[^\W\d]", r"(?i)[Z-a]", r"^\s*$", r"(?m)t$", r"\bgit\b(?!.*--no-verify).*commit",
    # where a match can start, and where `.*` gives back to: a literal, a set, a category, a branch
    r"\bcargo\b.*\s\-\-all\b", r"\b(?:pytest|go)\s+\w", r"(?i)\bnpm\b.*[S-U]e", r"x.*[a-c0-2]y", r".*\d",
    r"a.*(?:b|\sc)", r"(?i).*\bTEST", r"(?=\S)\s*-", r"\b(?:|a)b", r"(?:a+)+\s\d",
]  # fmt: skip
ALPHABET = "abcdxyz ABK_-.\n/0129@,+]\tpytesgoumr\x1c"


def _subjects(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    fixed = ["", "pytest", "python -m pytest -x", "pytest --timeout 5", "git push origin --force",
             "npm Test", "NPM run test", "go test ./...", "foo\nbar", "foo\n", "abcd", "ab\n",
             "git commit -m x", "git commit --no-verify -m x", "rm -rf /", "a.py", "ab", "a\nb", "axb",
             "cargo clippy --all"]  # fmt: skip
    return fixed + ["".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 14))) for _ in range(count)]


@pytest.mark.parametrize("pattern", PATTERNS)
def test_mini_matcher_agrees_with_re(pattern: str) -> None:
    program, _ = regex_compiler.compile_pattern(pattern)
    assert program is not None, "every pattern in this table is in the supported subset"
    compiled_re = re.compile(pattern)
    wrong = [s for s in _subjects(11, 1500) if regex_engine.search(program, pattern, s) != bool(compiled_re.search(s))]
    assert wrong == []


def _random_pattern(rng: random.Random, depth: int = 0) -> str:
    atoms = ["a", "b", "x", ".", r"\d", r"\w", r"\s", "[ab]", "[^a ]", r"\b", "^", "$", " "]
    parts = []
    for _ in range(rng.randint(1, 4)):
        roll = rng.random()
        if roll < 0.15 and depth < 2:
            inner = "|".join(_random_pattern(rng, depth + 1) for _ in range(rng.randint(1, 3)))
            parts.append(f"(?:{inner})" if rng.random() < 0.5 else f"({inner})")
        elif roll < 0.22 and depth < 2:
            parts.append(f"(?{rng.choice('=!')}{_random_pattern(rng, depth + 1)})")
        else:
            parts.append(rng.choice(atoms))
        if rng.random() < 0.3 and parts[-1] not in (r"\b", "^", "$"):
            parts[-1] += rng.choice(["*", "+", "?", "{1,2}", "*?", "{2}"])
    return ("(?i)" if rng.random() < 0.2 else "") + "".join(parts)


def test_random_patterns_agree_with_re() -> None:
    rng = random.Random(3)
    subjects = _subjects(5, 200)
    checked = 0
    for _ in range(300):
        pattern = _random_pattern(rng)
        try:
            compiled_re = re.compile(pattern)
        except re.error:
            continue
        program, _ = regex_compiler.compile_pattern(pattern)
        for s in subjects:
            assert regex_engine.search(program, pattern, s) == bool(compiled_re.search(s)), (pattern, s)
        checked += 1
    assert checked == 229  # the figure the README quotes


@pytest.mark.parametrize(
    ("pattern", "runs"),
    [
        (r"\bpytest\b", ["pytest"]),
        (r"^git\s+push\b.*--force", ["git ", " push", "--force"]),  # \s stands as " "
        (r"^go\b(?=.*\s-race)(?=.*flaky)", [" -race", "flaky", "go"]),  # lookaheads count
        (r"py(test)+", ["py", "test"]),
        (r"(pytest|tox)", []),
        (r"npm (run )?test", ["npm ", "test"]),
        (r"a?b", ["b"]),
        (r"make(?!.*-j)", ["make"]),
    ],
)
def test_required_literals(pattern: str, runs: list[str]) -> None:
    assert regex_compiler.compile_pattern(pattern)[1] == runs


@pytest.mark.parametrize("pattern", PATTERNS)
def test_required_literals_occur_in_every_match(pattern: str) -> None:
    _, runs = regex_compiler.compile_pattern(pattern)
    compiled_re = re.compile(pattern)
    matched = [s for s in _subjects(13, 800) + ["\u212aelvin", "\u017f", "PIP \u0130NSTALL"] if compiled_re.search(s)]
    assert matched, "every pattern needs a subject it matches, or this test checks nothing for it"
    for s in matched:
        assert all(compiled_read.fold(run) in compiled_read.fold(s) for run in runs), (pattern, s)


@pytest.mark.parametrize(
    "pattern",
    [r"(a)\1", r"(?<=a)b", r"(?<!a)b", r"a++", r"(?>a)", r"(?i:a)b", r"(?i)\u00e9", r"(a)?(?(1)b|c)"],
)
def test_outside_the_subset_goes_to_re(pattern: str) -> None:
    program, _ = regex_compiler.compile_pattern(pattern)
    assert program is None
    for s in ["ab", "aab", "b", "AB", "\u00c9", "\u00e9"]:
        assert regex_engine.search(program, pattern, s) == bool(re.search(pattern, s))


def test_non_ascii_subjects_go_to_re() -> None:
    program, _ = regex_compiler.compile_pattern(r"(?i)kelvin")
    assert program is not None
    assert regex_engine.search(program, r"(?i)kelvin", "\u212aelvin") is True


def test_fold_covers_what_ignorecase_equates_with_ascii() -> None:
    # Every non-ASCII character that (?i) matches against an ASCII letter folds to that letter.
    for code in range(128, 0x3000):
        ch = chr(code)
        for letter in "abcdefghijklmnopqrstuvwxyz":
            if re.fullmatch("(?i)" + letter, ch):
                assert compiled_read.fold(ch) == letter, hex(code)


@pytest.mark.parametrize(
    ("pattern", "run"),
    [
        (r"ab[0-9]{20}c", ("0-9", 20)),
        (r"(?:x|y)[a-f]{32}(?![a-f])", ("a-f", 32)),  # a branch before it, a look-ahead after
        (r"[A-Z]{16}-(?P<v>[a-z0-9]{40})", ("a-z0-9", 40)),  # the longest
        (r"(?:k[a-z\-_]{20})+", ("a-z\\-_", 20)),  # inside a repeat taken at least once
        (r"[^\s'\"]{18}", ("^\\s'\"", 18)),
        (r"(?:[a-z]{40}|[0-9]{40})", ("", 0)),  # only a branch: not every path takes one
        (r"x(?:[a-z]{40})?", ("", 0)),  # optional
        (r"(?i:[a-z]{40})", ("", 0)),  # a group with flags of its own
        (r"[a-z]{8}", ("", 0)),  # too short to be worth a search
        (r"(?<=[a-z]{20})x", ("", 0)),  # a look-behind takes nothing
    ],
)
def test_required_run(pattern: str, run: tuple[str, int]) -> None:
    assert regex_compiler.required_run(pattern) == run
