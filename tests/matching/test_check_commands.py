"""Which Bash commands are checks, and their names: one answer, whether the hooks or the scan ask."""

from __future__ import annotations

from pathlib import Path

import pytest

from lessonbank.hooks import post_tool
from lessonbank.matching import check_commands, shell
from lessonbank.scan import outcomes
from lessonbank.state import records, statedir

# Real-world commands and the check each runs ("": not a check), across languages and tools.
COMMANDS = [
    # Python tests
    ("pytest -x tests/", "pytest"),
    ("python -m pytest -q", "pytest"),
    ("python3 -m pytest tests/test_api.py -k login", "pytest"),
    ("uv run python -m pytest", "pytest"),
    ("poetry run pytest tests/unit", "pytest"),
    (".venv/bin/pytest --cov=src", "pytest"),
    ("py.test", "pytest"),
    ("cd app && PYTHONPATH=. pytest 2>&1 | tail -3", "pytest"),
    ("timeout 120 pytest", "pytest"),
    ("gtimeout 60 pytest", "pytest"),
    ("sudo -u web pytest", "pytest"),
    ("conda run -n env pytest", "pytest"),
    ("python -X dev -m pytest", "pytest"),
    ("tox -e py311", "tox"),
    ("nox -s tests", "nox"),
    ("python -m unittest discover -s tests", "unittest"),
    ("nosetests", "nose"),
    ("behave", "behave"),
    # JavaScript and TypeScript
    ("npm test", "npm test"),
    ("npm t", "npm test"),
    ("npm run test -- --watch=false", "npm test"),
    ("npm run lint", "npm lint"),
    ("npm run build -- --prod", "npm build"),
    ("npm run format:check", "npm format:check"),
    ("npm run check-types", "npm check-types"),
    ("env CI=1 npm test", "npm test"),
    ("pnpm typecheck", "pnpm typecheck"),
    ("pnpm --filter web test", "pnpm test"),
    ("pnpm -F api lint", "pnpm lint"),
    ("pnpm vitest run src/a.test.ts", "vitest"),
    ("yarn test:unit", "yarn test:unit"),
    ("yarn workspace web test", "yarn test"),
    ("yarn jest --ci", "jest"),
    ("bun test", "bun test"),
    ("bun run build", "bun build"),
    ("npx jest --ci", "jest"),
    ("npx vitest run", "vitest"),
    ("bunx vitest", "vitest"),
    ("npm exec -- jest", "jest"),
    ("dotenv -e .env -- jest", "jest"),
    ("mocha", "mocha"),
    ("npx tsc --noEmit", "tsc"),
    ("vue-tsc --noEmit", "tsc"),
    ("npx eslint src", "eslint"),
    ("pnpm exec eslint .", "eslint"),
    ("stylelint 'src/**/*.css'", "stylelint"),
    ("biome check .", "biome"),
    ("npx prettier --check .", "prettier"),
    ("npx playwright test", "playwright"),
    ("npx cypress run", "cypress"),
    ("vite build", "vite build"),
    ("npx vite build", "vite build"),
    ("webpack --mode production", "webpack"),
    # Rust, Go, C and C++, JVM, .NET, Swift, Elixir, Ruby, PHP, Deno, Zig, Bazel, Docker, LaTeX
    ("cargo test --all", "cargo test"),
    ("cargo +nightly test", "cargo test"),
    ("cargo clippy -- -D warnings", "cargo clippy"),
    ("cargo build --release", "cargo build"),
    ("cargo check", "cargo check"),
    ("cargo fmt -- --check", "cargo fmt"),
    ("rustc main.rs", "rustc"),
    ("go test ./...", "go test"),
    ("go test -run TestX ./pkg/...", "go test"),
    ("go vet ./...", "go vet"),
    ("go build ./...", "go build"),
    ("golangci-lint run", "golangci-lint"),
    ("make", "make"),
    ("make test", "make test"),
    ("make -C build test", "make test"),
    ("make -j4 lint", "make lint"),
    ("make -j 8", "make"),
    ("gmake check", "make check"),
    ("ninja -C build", "ninja"),
    ("cmake --build build", "cmake --build"),
    ("cmake -S . -B build", "cmake"),
    ("ctest --output-on-failure", "ctest"),
    ("meson test -C build", "meson test"),
    ("gcc -Wall -o app main.c util.c", "gcc"),
    ("g++ -std=c++17 main.cpp -o main", "g++"),
    ("clang -c foo.c", "clang"),
    ("nvcc kernel.cu -o kernel", "nvcc"),
    ("javac -d out src/Main.java", "javac"),
    ("./gradlew build", "gradle build"),
    ("./gradlew clean build", "gradle build"),
    ("./gradlew :app:test", "gradle :app:test"),
    ("mvn -q verify", "mvn verify"),
    ("mvn clean install", "mvn install"),
    ("./mvnw package", "mvn package"),
    ("dotnet test", "dotnet test"),
    ("dotnet build", "dotnet build"),
    ("dotnet format --verify-no-changes", "dotnet format"),
    ("swift test", "swift test"),
    ("swiftc main.swift", "swiftc"),
    ("xcodebuild test -scheme App", "xcodebuild"),
    ("msbuild App.sln", "msbuild"),
    ("mix test", "mix test"),
    ("mix compile", "mix compile"),
    ("mix credo", "mix credo"),
    ("mix format --check-formatted", "mix format"),
    ("bundle exec rspec", "rspec"),
    ("rspec spec/models", "rspec"),
    ("bundle exec rubocop", "rubocop"),
    ("vendor/bin/phpunit", "phpunit"),
    ("deno test", "deno test"),
    ("deno lint", "deno lint"),
    ("deno fmt --check", "deno fmt"),
    ("zig build", "zig build"),
    ("bazel test //...", "bazel test"),
    ("bazel build //src:app", "bazel build"),
    ("docker build -t app .", "docker build"),
    ("pdflatex paper.tex", "pdflatex"),
    ("latexmk -pdf paper.tex", "latexmk"),
    # Python linters, type checkers, format checks
    ("ruff check .", "ruff"),
    ("ruff check --fix .", "ruff"),
    ("uvx ruff check .", "ruff"),
    ("ruff format --check .", "ruff"),
    ("mypy tooling", "mypy"),
    ("python3.12 -m mypy src", "mypy"),
    ("dmypy run -- src", "mypy"),
    ("pyright", "pyright"),
    ("basedpyright", "pyright"),
    ("flake8", "flake8"),
    ("pylint src", "pylint"),
    ("black --check .", "black"),
    ("isort --check-only .", "isort"),
    ("isort --check .", "isort"),
    ("find . -name '*.py' | xargs mypy", "mypy"),
    # shell, containers, hooks, task runners, test scripts
    ("shellcheck scripts/*.sh", "shellcheck"),
    ("hadolint Dockerfile", "hadolint"),
    ("pre-commit run --all-files", "pre-commit"),
    ("pre-commit", "pre-commit"),
    ("just test", "just test"),
    ("just lint", "just lint"),
    ("./run_tests.sh", "run_tests.sh"),
    ("./test.sh", "test.sh"),
    ("bats tests/", "bats"),
    # a check whose exit status is masked is still that check
    ("pytest -q || true", "pytest"),
    ("make -j8 2>&1 | head -100", "make"),
    ("(cd sub && make) || true", "make"),
    ('bash -c "pytest -q"', "pytest"),
    ("echo $(pytest -q)", "pytest"),
    # look-alikes: install, run, serve, clean, format in place, or only mention a check
    ("make clean", ""),
    ("make install", ""),
    ("make dev", ""),
    ("npm install", ""),
    ("npm ci", ""),
    ("npm run dev", ""),
    ("npm start", ""),
    ("yarn add -D vitest", ""),
    ("npx prettier --write .", ""),
    ("npx playwright install chromium", ""),
    ("npx cypress open", ""),
    ("npx vite", ""),
    ("webpack serve", ""),
    ("cargo fmt", ""),
    ("cargo run", ""),
    ("cargo bench", ""),
    ("go run main.go", ""),
    ("go fmt ./...", ""),
    ("cmake -E make_directory out", ""),
    ("mvn dependency:tree", ""),
    ("mvn clean", ""),
    ("dotnet run", ""),
    ("mix format", ""),
    ("bazel run //src:server", ""),
    ("deno fmt", ""),
    ("docker run app", ""),
    ("ruff format .", ""),
    ("black .", ""),
    ("isort .", ""),
    ("biome format --write .", ""),
    ("pre-commit install", ""),
    ("just deploy", ""),
    ('git commit -m "make pytest pass"', ""),
    ("git commit -m pytest", ""),
    ("echo pytest", ""),
    ("echo 'make test'", ""),
    ("printf 'npm test'", ""),
    ("python3 -c 'import sys; sys.exit(1)'", ""),
    ("ls -la", ""),
    ("cat pytest.ini", ""),
    ("pip install pytest", ""),
    ("grep -rn pytest .", ""),
    ("which pytest", ""),
    ("hypothesis write json.dumps", ""),
]


def _through_the_hooks(command: str, state_dir: Path) -> str:
    """What the PostToolUse hook records for a Bash call running `command` ("" when it records nothing)."""
    payload = {
        "hook_event_name": "PostToolUse",
        "exit_status": 0,
        "tool_name": "Bash",
        "tool_input": {"command": command},
        "session_id": "s1",
        "prompt_id": "p1",
        "tool_use_id": "t1",
    }
    post_tool.post_tool_use(payload, str(state_dir.parent), str(state_dir), "on")
    rows, _ = records.read_checks(statedir.Session(str(state_dir), "s1").dir)
    return rows[-1]["check"] if rows else ""


def _through_the_scan(command: str) -> str:
    """The name of the check the scan sees in `command` ("" when it sees none)."""
    check = outcomes.check_of(command)
    return check.name if check is not None else ""


def test_the_table_is_big_and_says_each_command_once() -> None:
    commands = [command for command, _ in COMMANDS]
    assert len(commands) == len(set(commands))
    assert sum(1 for _, name in COMMANDS if name) >= 60
    assert sum(1 for _, name in COMMANDS if not name) >= 30


@pytest.mark.parametrize(("command", "name"), COMMANDS)
def test_the_hooks_and_the_scan_name_the_same_check(command: str, name: str, tmp_path: Path) -> None:
    state_dir = tmp_path / ".lessonbank"
    state_dir.mkdir()
    assert check_commands.check_name(command) == name
    assert _through_the_hooks(command, state_dir) == name
    assert _through_the_scan(command) == name


@pytest.mark.parametrize(("command", "name"), COMMANDS)
def test_the_scan_classifies_each_check_as_check_commands_does(command: str, name: str) -> None:
    check = outcomes.check_of(command)
    if not name:
        assert check is None
        return
    assert check is not None
    assert check.category in ("test", "build", "lint")
    assert check.tool == name.split()[0]


@pytest.mark.parametrize(
    ("command", "names"),
    [
        ("ruff check . && mypy", "ruff + mypy"),
        ("cmake .. && make -j4", "cmake + make"),
        ("gcc -o test_a test_a.c && ./test_a", "gcc + test_a"),
        ("pytest -q; pytest -q tests/slow", "pytest"),
        ("make test && echo $(cargo test)", "make test + cargo test"),
    ],
)
def test_a_command_running_several_checks_names_each_once(command: str, names: str) -> None:
    assert check_commands.check_name(command) == names
    assert _through_the_scan(command) == names.split(" + ")[0]  # the scan follows the first


@pytest.mark.parametrize(
    ("command", "category", "key"),
    [
        ("pytest -q", "test", "pytest"),
        ("py.test", "test", "py.test"),
        ("pnpm --filter web test", "test", "pnpm test"),
        ("npm t", "test", "npm t"),
        ("npm run build", "build", "npm build"),
        ("npm run type-check", "lint", "npm type-check"),
        ("make -C sub check", "test", "make -C sub check"),
        ("gcc -c b.c a.c", "build", "gcc a.c b.c"),
        ("cargo clippy", "lint", "cargo clippy"),
        ("./gradlew test", "test", "gradlew test"),
        ("ruff check src", "lint", "ruff check"),
        ("ruff format --check", "lint", "ruff format"),
    ],
)
def test_classify_gives_the_category_and_the_key_as_written(command: str, category: str, key: str) -> None:
    [words] = shell.segments(command)
    found = check_commands.classify(words)
    assert found is not None
    assert (found.category, found.key) == (category, key)


def test_the_scans_quick_look_lets_every_check_through() -> None:
    # outcomes looks for a known name before parsing; a name missing from check_commands.NAMES would hide a check
    for command, name in COMMANDS:
        if name:
            assert outcomes._may_be_check(command), command
