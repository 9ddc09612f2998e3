"""Recurring shell errors: each kind recognised from its output, and the substring prefilter loses none."""

from __future__ import annotations

import re

import pytest

from lessonbank.scan import shellfail

SAMPLES = [
    ("/bin/bash: line 1: python: command not found", "", ("not-found", "python")),
    ("sh: 1: nvcc: not found", "", ("not-found", "nvcc")),
    ("/bin/bash: line 1: cd: build: No such file or directory", "", ("cd-relative", "build")),
    ("cat: src/main.c: No such file or directory", "", ("relative-path", "src/main.c")),
    ('CMake Error: The source directory "/p" does not appear to contain CMakeLists.txt.', "", ("cmake-build-dir", "")),
    (" ! [rejected]        main -> main (fetch first)", "", ("push-behind", "")),
    ("remote: error: GH013: Repository rule violations found", "", ("push-protection", "")),
    ("whoami: extra operand '/all'\nTry 'whoami --help' for more information.", "whoami /all", ("windows-switch", "")),
    ("sudo: a terminal is required to read the password", "", ("sudo", "")),
    ("t.c:3:5: error: stray '\\' in program", "", ("shell-written-source", "")),
    ("FAIL tests/a.test.ts: expected 1 to be 2", "", None),
    ("whoami: extra operand '/all'\nTry 'whoami --help' for more information.", "whoami --all", None),
]


@pytest.mark.parametrize(("output", "command", "expected"), SAMPLES)
def test_classify(output: str, command: str, expected: tuple[str, str] | None) -> None:
    assert shellfail.classify(output, command) == expected


@pytest.mark.parametrize(("output", "command", "expected"), SAMPLES)
def test_the_prefilter_drops_no_match(output: str, command: str, expected: tuple[str, str] | None) -> None:
    # Every kind whose regex matches the sample also finds one of its needles there.
    for kind in shellfail.KINDS:
        if kind.error.search(output):
            assert any(needle in output for needle in kind.needles), kind.name


@pytest.mark.parametrize(
    ("command", "fires"),
    [("git push origin main", True), ("git push --force origin main", True),
     ("git push --force-with-lease", True), ("git pull --rebase", False)],
)  # fmt: skip
def test_the_push_behind_lesson_fires_on_every_push_forced_ones_most_of_all(command: str, fires: bool) -> None:
    *_, trigger = shellfail.lesson("push-behind", "", "git push", "git pull --rebase && git push", [])
    assert bool(re.search(trigger, command)) is fires
