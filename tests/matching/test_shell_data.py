"""The data words of the tools that read some of their arguments as data (matching/shell_data.py)."""

from __future__ import annotations

import pytest

from lessonbank.matching import shell_data, shell_words


def test_every_data_tool_has_its_reading_in_shell_data() -> None:
    # git reads by subcommand ("git grep", "git log"); every other name has its own entry.
    assert shell_words.DATA_NAMES - {"git"} == set(shell_data.SPECS) - {"git grep", "git log"}


@pytest.mark.parametrize(
    ("texts", "data"),
    [
        (["grep", "-rn", "pytest", "src"], [2]),
        (["grep", "-e", "a", "-e", "b", "src"], [2, 4]),
        (["rg", "-g", "*.py", "pytest"], [3]),
        (["sed", "-i", "", "s/a/b/", "f"], [3]),
        (["git", "log", "--grep", "fix", "-S", "x"], [3, 5]),
        (["git", "-C", "repo", "grep", "-e", "x"], [5]),
        (["git", "status", "x"], []),
        (["find", ".", "-name", "*.py", "-exec", "grep", "-l", "pytest", "{}", "+"], [3, 7]),
        (["which", "pytest", "ruff"], [1, 2]),
        (["perl", "-e", "print 1", "file"], [2]),
        (["sudo", "grep", "x", "f"], [2]),
    ],
)
def test_data_words(texts: list[str], data: list[int]) -> None:
    drop: set[int] = set()
    shell_data.data_words(texts, 0, len(texts), drop)
    assert sorted(drop) == data
