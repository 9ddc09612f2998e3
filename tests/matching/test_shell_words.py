"""The words of one simple command: the command past keywords, assignments and wrappers, and its code."""

from __future__ import annotations

import pytest

from lessonbank.matching import shell_words


@pytest.mark.parametrize(
    ("command", "start"),
    [
        (["sudo", "-u", "web", "pytest"], 3),
        (["env", "A=1", "-i", "pytest"], 3),
        (["timeout", "-s", "KILL", "60", "pytest"], 4),
        (["nice", "-n", "5", "make"], 3),
        (["gtimeout", "60", "pytest"], 2),
        (["pytest"], 0),
    ],
)
def test_command_start_skips_wrappers(command: list[str], start: int) -> None:
    assert shell_words.command_start(command) == start


def test_the_first_command_comes_after_keywords_and_assignments() -> None:
    words = [(w, False) for w in ("if", "!", "A=1", "B_2=x", "pytest", "C=3")]
    assert shell_words.first_command(words) == 4
    assert shell_words.first_command([("2X=1", False)]) == 0  # not a name: a command
    assert shell_words.first_command([("then", False)]) == 1  # nothing but keywords


@pytest.mark.parametrize(
    ("words", "reads"),
    [
        (["bash"], True),
        (["A=1", "sh", "-e", "-x"], True),
        (["bash", "-c"], False),
        (["bash", "script.sh"], False),
        (["cat"], False),
        ([], False),
    ],
)
def test_a_heredoc_is_a_script_when_a_shell_reads_it_from_stdin(words: list[str], reads: bool) -> None:
    assert shell_words.reads_script([(w, False) for w in words]) is reads


@pytest.mark.parametrize(
    ("texts", "hands"),
    [
        (["grep", "-rn", "x"], True),
        (["git", "log", "-S", "x"], True),
        (["git", "-C", "repo", "grep", "x"], True),
        (["git", "status"], False),
        (["git", "-c", "log=1", "commit"], False),
        (["cargo", "test"], False),
    ],
)
def test_only_a_data_tool_hands_its_words_to_shell_data(texts: list[str], hands: bool) -> None:
    assert shell_words.hands_data(texts, 0, shell_words.basename(texts[0])) is hands


@pytest.mark.parametrize(
    ("words", "kept"),
    [
        (["git", "commit", "-m", "fix it", "--amend"], ["git", "commit", "--amend"]),
        (["git", "commit", "--message=fix", "-q"], ["git", "commit", "-q"]),
        (["git", "commit", "-am", "fix"], ["git", "commit", "-am"]),
        (['git', 'commit', '-m"fix"'], ["git", "commit"]),
        (["gh", "pr", "create", "-t", "x", "-b", "y"], ["gh", "pr", "create"]),
        (["make", "-m", "x"], ["make", "-m", "x"]),  # no message options: every word is code
    ],
)
def test_messages_are_not_code(words: list[str], kept: list[str]) -> None:
    pairs = [(w, False) for w in words]
    assert shell_words.code_words(pairs, 0, 0, words[0], set()) == kept


def test_prose_and_data_words_are_not_code() -> None:
    pairs = [("grep", False), ("-rn", False), ("pytest hang", True), ("src", False), ("docs", False)]
    assert shell_words.code_words(pairs, 0, 0, "grep", {4}) == ["grep", "-rn", "src"]
