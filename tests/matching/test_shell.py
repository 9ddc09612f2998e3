"""The executable parts of shell commands: what a command trigger may match, and what it must not
(the syntax in matching/shell.py, with shell_words and shell_data; each has its own tests too)."""

from __future__ import annotations

import pytest

from lessonbank.matching import shell


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
        ("grep pytest log.txt", [["grep", "log.txt"]]),
        ('PYTHONPATH=src timeout 60 pytest -k "a and not b" > out.txt', [["timeout", "60", "pytest", "-k"]]),
        ("for f in a b; do pytest $f; done", [["pytest", "$f"]]),
        ("if pytest; then echo ok; fi", [["pytest"], ["echo"]]),
        (
            "x=$(git ls-files | grep test); pytest $x",
            [["git", "ls-files"], ["grep"], ["pytest", "$x"]],
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
        ("cat a >> b; rg x 2>/dev/null", [(["cat", "a"], ";", 0, True), (["rg"], "", 0, False)]),
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


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("rg -n pytest docs/", [["rg", "-n", "docs/"]]),
        ("rg --type py -e pytest -e jest src", [["rg", "--type", "py", "-e", "-e", "src"]]),
        ("rg -A3 -g '*.py' pytest", [["rg", "-A3", "-g", "*.py"]]),
        ("rg --files | rg pytest", [["rg", "--files"], ["rg"]]),
        ("rg -r tox pytest .", [["rg", "-r", "."]]),
        ("grep -rn --include=*.py pytest .", [["grep", "-rn", "--include=*.py", "."]]),
        ("grep -f pats.txt src", [["grep", "-f", "pats.txt", "src"]]),
        ("grep -ie pytest src", [["grep", "-ie", "src"]]),
        ("grep --regexp=pytest -- -x", [["grep", "--", "-x"]]),
        ("ag -G py mypy", [["ag", "-G"]]),
        ("git grep -n pytest -- '*.py'", [["git", "grep", "-n", "--", "*.py"]]),
        ("git -C sub log -S pytest --grep=jest -Gmake HEAD", [["git", "-C", "sub", "log", "-S", "HEAD"]]),
        ("git show --author=ann HEAD", [["git", "show", "HEAD"]]),
        ("git commit -S -m x", [["git", "commit", "-S"]]),
        ("sed -i 's/pytest/tox/' tox.ini", [["sed", "-i", "tox.ini"]]),
        ("sed -i '' -e s/a/b/ f", [["sed", "-i", "", "-e", "f"]]),
        ("sed -f script.sed f", [["sed", "-f", "script.sed", "f"]]),
        ("awk -F: '{print $1}' /etc/passwd", [["awk", "-F:", "/etc/passwd"]]),
        ("awk -v n=1 /pytest/ log", [["awk", "-v", "n=1", "log"]]),
        ("perl -pi -e s/jest/vitest/ package.json", [["perl", "-pi", "-e", "package.json"]]),
        ("node -e 'require(1)' && node app.js", [["node", "-e"], ["node", "app.js"]]),
        (
            "find . -name '*jest*' -exec grep -l pytest {} +",
            [["find", ".", "-name", "-exec", "grep", "-l", "{}", "+"]],
        ),
        ("find . -name '*.py' -exec pytest {} \\;", [["find", ".", "-name", "-exec", "pytest", "{}", ";"]]),
        ("pkill -f pytest", [["pkill", "-f"]]),
        ("which pytest mypy", [["which"]]),
        ("xargs grep -l pytest", [["xargs", "grep", "-l"]]),
        ("sudo -u web rg pytest /srv", [["sudo", "-u", "web", "rg", "/srv"]]),
        ("pytest -k grep", [["pytest", "-k", "grep"]]),
    ],
)
def test_search_patterns_and_scripts_are_data(command: str, expected: list[list[str]]) -> None:
    assert shell.segments(command) == expected


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("RUST_BACKTRACE=1 cargo test", ["cargo test RUST_BACKTRACE=1"]),
        ("A=1 B=2 make -j8 && make", ["make -j8 A=1 B=2", "make"]),
        ("env DOCKER_BUILDKIT=1 docker build .", ["env DOCKER_BUILDKIT=1 docker build . DOCKER_BUILDKIT=1"]),
        ("sudo X=1 timeout 5 cmd", ["sudo X=1 timeout 5 cmd X=1"]),
        ('GIT_SSH_COMMAND="ssh -i key" git push', ["git push"]),
        ("if CI=1 pytest; then :; fi", ["pytest CI=1", ":"]),
        ("FOO=1", []),
        ("echo $(A=1 make)", ["make A=1", "echo"]),
        ("pytest -x", ["pytest -x"]),
    ],
)
def test_triggers_see_the_assignments_after_the_command(command: str, expected: list[str]) -> None:
    assert shell.trigger_texts(command) == expected


def test_assignments_leave_the_words_the_check_classifier_reads_alone() -> None:
    from lessonbank.matching import check_commands

    assert shell.segments("RUST_BACKTRACE=1 cargo test") == [["cargo", "test"]]
    assert check_commands.check_name("RUST_BACKTRACE=1 cargo test") == "cargo test"
    assert check_commands.check_name("rg -n pytest docs/ && pytest -x") == "pytest"
    assert [c.env for c in shell.commands("A=1 env B=2 make; make")] == [["A=1", "B=2"], []]


def test_a_command_without_a_data_tool_does_not_load_shell_data() -> None:
    import subprocess
    import sys
    from pathlib import Path

    package = Path(shell.__file__).resolve().parents[2]
    # What a Bash call's matching loads: the syntax and the words of a command, and the data
    # tools' tables only for a command that runs one (git only when its subcommand searches).
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); from lessonbank.matching import shell;"
        "shell.segments('cd src && python -m pytest -x 2>&1 | tail; git commit -m \"grep it\"');"
        "print(','.join(sorted(m for m in sys.modules if m.startswith('lessonbank'))));"
        "shell.segments('grep -rn pytest src');"
        "print('lessonbank.matching.shell_data' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-I", "-S", "-c", code, str(package)], capture_output=True, text=True)
    loaded = "lessonbank,lessonbank.matching,lessonbank.matching.shell,lessonbank.matching.shell_words"
    assert done.stdout.split() == [loaded, "True"], done.stderr
