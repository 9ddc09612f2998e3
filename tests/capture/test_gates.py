"""The capture gates as pure functions: each refuses what it must and admits the rest."""

from __future__ import annotations

import pytest

from lessonbank.bank.lesson import Lesson
from lessonbank.capture import gates
from lessonbank.capture.draft import Draft
from lessonbank.errors import GateRefusal

BANKED = Lesson(
    id="01JBQX0000000000000000000A",
    slug="pytest-tty-hang",
    title="pytest hangs waiting for a TTY",
    when="pytest runs in a non-interactive shell and waits for input",
    do="run pytest with stdin from /dev/null so it never waits on a TTY",
    promote_to="rule:testing",
)


def cand(when: str, do: str, promote_to: str = "rule:testing", title: str = "") -> Draft:
    return Draft(when=when, do=do, promote_to=promote_to, title=title)


@pytest.mark.parametrize(
    ("when", "do", "duplicate"),
    [
        # A paraphrase of the banked lesson: the same words in another order and tense.
        (
            "pytest waits for input in a non-interactive shell",
            "give pytest stdin from /dev/null so it never waits for a TTY",
            True,
        ),
        (
            "running pytest in a non-interactive shell hangs waiting on input",
            "run it with stdin from /dev/null",
            True,
        ),
        # Same tool, different lesson.
        (
            "pytest cannot import the package under test",
            "install it in editable mode with pip install -e .",
            False,
        ),
        ("jest keeps running after the tests finish", "pass --forceExit or close open handles", False),
    ],
)
def test_duplicate_threshold(when: str, do: str, duplicate: bool) -> None:
    banked = [(BANKED.slug, " ".join(sorted(gates.lesson_terms(BANKED.when, BANKED.do))))]
    found = gates.find_duplicate(cand(when, do), banked, threshold=0.6)
    assert (found == BANKED.slug) is duplicate


@pytest.mark.parametrize(
    "value",
    ["", "testing", "wiki:testing", "doc:../../etc/x.md", "doc:/abs/path.md", "rule:UPPER"],
)
def test_destination_gate_refuses_with_the_valid_forms(value: str) -> None:
    with pytest.raises(GateRefusal) as info:
        gates.destination(value)
    assert info.value.gate == "destination"
    assert str(info.value).startswith("refused: ")


@pytest.mark.parametrize(
    ("text", "refused"),
    [
        ("I prefer tabs over spaces", True),
        ("we'd rather see terse answers", True),
        ("my style is to name variables in French", True),
        ("answer me in a casual tone", False),
        ("respond in a casual tone", True),
        ("I really like emoji in commit messages", True),
        ("pytest -x stops at the first failure, which is what CI wants", False),
        ("the linter prefers double quotes; run ruff format before committing", False),
    ],
)
def test_preference_gate(text: str, refused: bool) -> None:
    c = cand("writing code in this repo", text)
    if refused:
        with pytest.raises(GateRefusal, match="memory file"):
            gates.preference(c)
    else:
        gates.preference(c)


def test_already_written_in_destination() -> None:
    rule = "# Testing\n\n## TTY\n\nWhen pytest runs in a non-interactive shell it waits for input:\nrun pytest with stdin from /dev/null so it never waits on a TTY.\n\n## Other\n\nUnrelated words.\n"
    assert gates.already_written(cand(BANKED.when, BANKED.do), rule, 0.8)
    assert not gates.already_written(cand("jest keeps running", "pass --forceExit"), rule, 0.8)


def test_scrub_redacts_and_counts() -> None:
    clean, found = gates.scrub(
        {
            "when": "deploy with AKIAABCDEFGHIJKLMNOP",
            "do": "curl https://bob:hunter22@host/x and ghp_" + "a" * 36,
        }
    )
    assert "AKIA" not in clean["when"] and "hunter22" not in clean["do"] and "ghp_" not in clean["do"]
    assert {r.kind: r.count for r in found} == {"aws access key": 1, "github token": 1, "password in url": 1}
