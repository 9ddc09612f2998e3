"""How the scan reads a command and a tool result: the check it ran and whether its status was masked,
what it was narrowed to, whether a command may have fixed something, how the result ended, its error lines."""

from __future__ import annotations

import pytest

from lessonbank.scan import outcomes

# ---- which command is a check ------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "key", "category", "masked", "targets"),
    [
        ("pytest", "pytest", "test", False, ()),
        ("python -m pytest tests/ -v --tb=short", "pytest", "test", False, ("tests",)),
        ('cd "C:\\x" && python -m pytest tests/test_a.py -k slow', "pytest", "test", False,
         ("-k slow", "tests/test_a.py")),
        ("timeout 60 uv run pytest -x", "pytest", "test", False, ()),
        ("pnpm test", "pnpm test", "test", False, ()),
        ("pnpm --filter web test", "pnpm test", "test", False, ("--filter web",)),
        ("pnpm --filter web test -- __tests__/x.test.ts", "pnpm test", "test", False,
         ("--filter web", "__tests__/x.test.ts")),
        ("pdflatex -interaction=nonstopmode p.tex > log 2>&1 && echo ok || echo failed", "pdflatex p.tex", "build",
         True, ()),
        ("make && ./t; echo done", "make", "build", True, ()),
        ("pnpm vitest run a.test.ts --reporter=verbose", "vitest", "test", False, ("a.test.ts",)),
        ("npm run build &> out.log", "npm build", "build", False, ()),
        ("npm run lint", "npm lint", "lint", False, ()),
        ("make -j8 2>&1 | head -100", "make", "build", True, ()),
        ("make test", "make test", "test", False, ()),
        ("make > build.log 2>&1", "make", "build", False, ()),
        ("set -o pipefail; make | tee log", "make", "build", False, ()),
        ("pytest -q || true", "pytest", "test", True, ()),
        ("pytest -q; echo done", "pytest", "test", True, ()),
        ("make &", "make", "build", True, ()),
        ("(cd sub && make)", "make", "build", False, ()),
        ("cargo test --lib", "cargo test", "test", False, ()),
        ("go vet ./...", "go vet", "lint", False, ("./...",)),
        ("gcc -I include test_a.c lib.a -o t && ./t", "gcc test_a.c", "build", False, ()),
        ("ruff check tooling", "ruff check", "lint", False, ("tooling",)),
        ("mypy", "mypy", "lint", False, ()),
        ("tsc --noEmit", "tsc", "lint", False, ()),
        ("make -C build test", "make -C build test", "test", False, ()),
        ("make -j4 lint", "make lint", "lint", False, ()),
        ("ninja -C out", "ninja -C out", "build", False, ()),
        ("./gradlew clean build", "gradlew build", "build", False, ()),
        ("mvn -q clean install", "mvn install", "build", False, ()),
        ("bazel test //...", "bazel test", "test", False, ("//...",)),
        ("cmake --build build -j8", "cmake --build", "build", False, ()),
        ("javac -d out src/Main.java src/Util.java", "javac Main.java Util.java", "build", False, ()),
        ("py.test -x", "py.test", "test", False, ()),
        ("cargo +nightly test", "cargo test", "test", False, ()),
        ("yarn workspace web test", "yarn test", "test", False, ()),
        ("npm t", "npm t", "test", False, ()),
        ("(cd sub && make) || true", "make", "build", True, ()),
        ("if pytest; then echo ok; fi", "pytest", "test", True, ()),
        ('bash -c "pytest -q"', "pytest", "test", True, ()),
        ("echo $(pytest -q)", "pytest", "test", True, ()),
        ("make |& tee log", "make", "build", True, ()),
        ("pytest\n", "pytest", "test", False, ()),
    ],
)  # fmt: skip
def test_check_of(command: str, key: str, category: str, masked: bool, targets: tuple[str, ...]) -> None:
    check = outcomes.check_of(command)
    assert check is not None
    assert (check.key, check.category, check.masked, check.targets) == (key, category, masked, targets)


@pytest.mark.parametrize(
    "command",
    ["ls -la", "git status", "cat pytest.ini", "make clean", "ruff format .", "black src", "pip install pytest",
     "echo 'make test'", "npm install", "python3 -c 'import sys; sys.exit(1)'", "", "npx vite", "webpack serve",
     "bazel run //app", "cmake -E make_directory out", "npx playwright install", 'git commit -m "fix make"'],
)  # fmt: skip
def test_not_a_check(command: str) -> None:
    assert outcomes.check_of(command) is None


@pytest.mark.parametrize(
    ("command", "fix"),
    [("pip install -r requirements-dev.txt", True), ("export PATH=/opt/bin:$PATH", True), ("ls -la", False),
     ("git status", False), ("git checkout -- a.py", True), ("sed -n 1,5p a", False), ("sed -i s/a/b/ f", True),
     ("cat a > b", True), ("rg foo | head", False), ("rg foo 2>/dev/null | head", False),
     ("echo x >> notes.md", True), ("ls\npip install x", True), ("echo $(date)", False),
     ("env FOO=1 pip install x", True), ("cd sub && ls", False)],
)  # fmt: skip
def test_is_fix_action(command: str, fix: bool) -> None:
    assert outcomes.is_fix_action(command) is fix


@pytest.mark.parametrize(
    ("text", "is_error", "expected"),
    [
        ("Exit code 1\nboom", True, ("fail", 1, False)),
        ("Exit code 0", False, ("ok", 0, False)),
        ("42", False, ("ok", 0, False)),
        ("raw stderr", True, ("fail", 1, False)),
        ("This command requires approval", True, ("denied", None, False)),
        ("Claude requested permissions to write to /a, but you haven't granted it yet.", True,
         ("denied", None, False)),
        ("Permission to use Bash with command rm -rf / has been denied.", True, ("denied", None, False)),
        ("Permission for this tool use was denied. The tool use was rejected (eg. if it was a file edit", True,
         ("denied", None, False)),
        ("The user doesn't want to proceed with this tool use. The tool use was rejected", True,
         ("rejected", None, False)),
        ("[Request interrupted by user for tool use]", True, ("interrupted", None, False)),
        ("<tool_use_error>File has not been read yet.</tool_use_error>", True, ("invalid", None, False)),
        ("Command timed out after 2m 0.0s", True, ("fail", None, True)),
        ("Chunk ID: 1\nWall time: 1 seconds\nProcess exited with code 2\nOutput:\n", False, ("fail", 2, False)),
        ("Process exited with code 0\nOutput:\nok", False, ("ok", 0, False)),
    ],
)  # fmt: skip
def test_result_status(text: str, is_error: bool, expected: tuple[str, int | None, bool]) -> None:
    assert outcomes.result_status(text, is_error) == expected


def test_error_lines_prefer_the_failure_over_code_and_noise() -> None:
    output = (
        "web:test: /* assert on the output */\n"
        "web:test:  ✓ __tests__/a.test.ts (3 tests)\n"
        "web:test:  FAIL  __tests__/b.test.ts > b > loads\n"
        "web:test: AssertionError: expected [] to have a length of 3\n"
    )
    assert outcomes.error_lines(output, limit=2) == [
        "FAIL  __tests__/b.test.ts > b > loads",
        "AssertionError: expected [] to have a length of 3",
    ]
    assert outcomes.error_lines("all\nquiet\nhere", limit=2) == ["quiet", "here"]


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        ("ok\n  ! missing peer dep\nterror: x", ["! missing peer dep", "terror: x"]),  # `^ *! `; `error:` mid-word
        ("a × b\n × 2 tests failed", ["× 2 tests failed"]),  # a mark counts only at the start of a line
        ("// Error in a comment\n\x1b[31mError\x1b[0m: real", ["Error: real"]),  # code skipped, ANSI dropped
        ("first Error\nError again, same line kept once\nfirst Error", ["first Error", "Error again, same line kept once"]),
        ("all good\nassert x == 1\nexpected 2", ["assert x == 1", "expected 2"]),  # no strong line: the weak ones
    ],
)  # fmt: skip
def test_error_lines_table(output: str, expected: list[str]) -> None:
    assert outcomes.error_lines(output) == expected


def test_signature_flattens_paths_and_numbers() -> None:
    a = outcomes.signature("/home/a/src/x.c:12:3: error: 'y' undeclared")
    b = outcomes.signature("C:\\work\\src\\x.c:40:9: error: 'y' undeclared")
    assert a == b == "x.c:N:N: error: 'y' undeclared"


def test_display_drops_cd_prefixes() -> None:
    assert outcomes.display('cd "C:\\a b" && cd sub && pytest -q') == "pytest -q"


def test_a_check_has_the_name_the_hooks_give_it_and_its_tool() -> None:
    check = outcomes.check_of("cd web && ./node_modules/.bin/jest --ci 2>&1 | tail -20")
    assert check is not None
    assert (check.name, check.tool, check.masked, check.destination) == ("jest", "jest", True, "rule:testing")
    check = outcomes.check_of("./mvnw -q verify")
    assert check is not None
    assert (check.name, check.key, check.tool) == ("mvn verify", "mvnw verify", "mvn")


def test_the_first_check_of_a_command_is_the_one_reported() -> None:
    check = outcomes.check_of("ruff check . && mypy src && pytest -q")
    assert check is not None
    assert (check.name, check.masked) == ("ruff", False)
