"""The executable parts of shell commands: what a command trigger may match, and what it must not."""

from __future__ import annotations

import pytest

from lessonbank.kernel import shell


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("pytest -x tests/", [["pytest", "-x", "tests/"]]),
        (
            "cd app && python -m pytest -q 2>&1 | tail -5",
            [["cd", "app"], ["python", "-m", "pytest", "-q"], ["tail", "-5"]],
        ),
        ('git commit -m "fix pytest hang"', [["git", "commit"]]),
        ("git commit -m pytest", [["git", "commit"]]),
        ("git commit --message=pytest", [["git", "commit"]]),
        ('git commit -am "pytest hang" && git push', [["git", "commit", "-am"], ["git", "push"]]),
        ('gh pr create --title "run pytest" --body "pytest -x"', [["gh", "pr", "create"]]),
        ('echo "now run pytest"', [["echo"]]),
        ("echo pytest; printf '%s' pytest", [["echo"], ["printf"]]),
        ("cat <<EOF > notes.md\npytest hangs\nEOF\nls", [["cat"], ["ls"]]),
        ("cat <<-'EOF'\n\tpytest\n\tEOF\nmake", [["cat"], ["make"]]),
        ('python3 - <<"PY"\nimport subprocess\nsubprocess.run(["pytest"])\nPY', [["python3", "-"]]),
        ("bash <<EOF\npytest -x\nEOF", [["bash"], ["pytest", "-x"]]),
        ('bash -c "pytest -q && ruff check ."', [["pytest", "-q"], ["ruff", "check", "."], ["bash", "-c"]]),
        ("xargs -n1 sh -c 'pytest \"$0\"'", [["pytest", "$0"], ["xargs", "-n1", "sh", "-c"]]),
        ("python3 -c 'import sys; sys.exit(1)'", [["python3", "-c"]]),
        ('grep -rn "pytest hang" src', [["grep", "-rn", "src"]]),
        ("grep pytest log.txt", [["grep", "pytest", "log.txt"]]),
        ('PYTHONPATH=src timeout 60 pytest -k "a and not b" > out.txt', [["timeout", "60", "pytest", "-k"]]),
        ("for f in a b; do pytest $f; done", [["pytest", "$f"]]),
        ("if pytest; then echo ok; fi", [["pytest"], ["echo"]]),
        (
            "x=$(git ls-files | grep test); pytest $x",
            [["git", "ls-files"], ["grep", "test"], ["pytest", "$x"]],
        ),
        ("echo $(pytest -q)", [["pytest", "-q"], ["echo"]]),
        ("echo `pytest`", [["pytest"], ["echo"]]),
        ("diff <(sort a) <(sort b)", [["sort", "a"], ["sort", "b"], ["diff", "<(…)", "<(…)"]]),
        ("ls \\\n  -la  # list pytest files", [["ls", "-la"]]),
        ("npm test -- --watch=false", [["npm", "test", "--", "--watch=false"]]),
        ("exec 3>&1 2>/dev/null; make test", [["exec"], ["make", "test"]]),
        ("cmd <<< 'pytest here'", [["cmd"]]),
        ("eval pytest -x", [["pytest", "-x"], ["eval"]]),
        ("", []),
    ],
)
def test_segments(command: str, expected: list[list[str]]) -> None:
    assert shell.segments(command) == expected


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
    assert shell.command_start(command) == start


def test_unterminated_quotes_and_heredocs_do_not_raise() -> None:
    assert shell.segments("echo 'open") == [["echo"]]
    assert shell.segments('pytest "open') == [["pytest", "open"]]
    assert shell.segments("cat <<EOF\nno end") == [["cat"]]
    assert shell.segments("echo $(pytest") == [["pytest"], ["echo"]]


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("pytest -q", [(["pytest", "-q"], "", 0, False)]),
        ("pytest -q || true", [(["pytest", "-q"], "||", 0, False), (["true"], "", 0, False)]),
        ("make 2>&1 | tail", [(["make"], "|", 0, False), (["tail"], "", 0, False)]),
        ("make |& tee log", [(["make"], "|&", 0, False), (["tee", "log"], "", 0, False)]),
        ("make &", [(["make"], "&", 0, False)]),
        ("pytest\nls", [(["pytest"], "\n", 0, False), (["ls"], "", 0, False)]),
        ("(cd sub && make) || true",
         [(["cd", "sub"], "&&", 0, False), (["make"], ")||", 0, False), (["true"], "", 0, False)]),
        ("cd a && (make)", [(["cd", "a"], "&&(", 0, False), (["make"], ")", 0, False)]),
        ("echo $(pytest -q) > out.txt", [(["pytest", "-q"], "", 1, False), (["echo"], "", 0, True)]),
        ('bash -c "make; make test"',
         [(["make"], ";", 1, False), (["make", "test"], "", 1, False), (["bash", "-c"], "", 0, False)]),
        ("cat a >> b; rg x 2>/dev/null", [(["cat", "a"], ";", 0, True), (["rg", "x"], "", 0, False)]),
        ("make > build.log 2>&1", [(["make"], "", 0, True)]),
        ('git commit -m "x" && make', [(["git", "commit"], "&&", 0, False), (["make"], "", 0, False)]),
    ],
)  # fmt: skip
def test_commands_carry_their_operators_depth_and_writes(
    command: str, expected: list[tuple[list[str], str, int, bool]]
) -> None:
    assert [(c.words, c.after, c.depth, c.writes) for c in shell.commands(command)] == expected


@pytest.mark.parametrize(
    "command",
    ["pytest -x tests/", 'bash -c "pytest -q && ruff check ."', "echo $(pytest -q)", "for f in a b; do pytest $f; done",
     "cat <<EOF > notes.md\npytest hangs\nEOF\nls", "diff <(sort a) <(sort b)", "if pytest; then echo ok; fi"],
)  # fmt: skip
def test_commands_and_segments_cut_a_command_the_same_way(command: str) -> None:
    assert [c.words for c in shell.commands(command)] == shell.segments(command)
