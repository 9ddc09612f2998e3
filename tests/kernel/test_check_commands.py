"""Which Bash commands are checks, and their normalized names."""

from __future__ import annotations

import pytest

from lessonbank.kernel import check_commands as checks


@pytest.mark.parametrize(
    ("command", "name"),
    [
        ("pytest -x tests/", "pytest"),
        ("python -m pytest -q", "pytest"),
        ("uv run python -m pytest", "pytest"),
        ("poetry run pytest tests/unit", "pytest"),
        (".venv/bin/pytest", "pytest"),
        ("cd app && PYTHONPATH=. pytest 2>&1 | tail -3", "pytest"),
        ("timeout 120 pytest", "pytest"),
        ("tox -e py311", "tox"),
        ("nox -s tests", "nox"),
        ("npm test", "npm test"),
        ("npm run lint", "npm lint"),
        ("npm run build -- --prod", "npm build"),
        ("pnpm typecheck", "pnpm typecheck"),
        ("yarn test:unit", "yarn test:unit"),
        ("bun test", "bun test"),
        ("npm install", ""),
        ("npm run dev", ""),
        ("npx jest --ci", "jest"),
        ("npx vitest run", "vitest"),
        ("npx tsc --noEmit", "tsc"),
        ("cargo test --all", "cargo test"),
        ("cargo clippy -- -D warnings", "cargo clippy"),
        ("cargo run", ""),
        ("go test ./...", "go test"),
        ("go vet ./...", "go vet"),
        ("go run main.go", ""),
        ("make", "make"),
        ("make -C build test", "make test"),
        ("make -j4 lint", "make lint"),
        ("./gradlew build", "gradle build"),
        ("mvn -q verify", "mvn verify"),
        ("ruff check .", "ruff"),
        ("mypy tooling", "mypy"),
        ("ruff check . && mypy", "ruff + mypy"),
        ("eslint src", "eslint"),
        ("black --check .", "black"),
        ("black .", ""),
        ('git commit -m "make pytest pass"', ""),
        ("echo pytest", ""),
        ("python3 -c 'import sys; sys.exit(1)'", ""),
        ("ls -la", ""),
    ],
)
def test_check_name(command: str, name: str) -> None:
    assert checks.check_name(command) == name


@pytest.mark.parametrize(
    ("command", "is_check"),
    [
        ("pytest -q", True),
        ("make", True),
        ("make test", True),
        ("make -C build test", True),
        ("make clean", False),
        ("make dev", False),
        ("make install", False),
        ("pnpm --filter web test", True),
        ("pnpm -F api lint", True),
        ("npm run build", True),
        ("npm install", False),
        ("cargo test", True),
        ("go vet ./...", True),
        ("git status", False),
        ("ls -la", False),
    ],
)
def test_the_hooks_and_the_scan_agree_on_what_a_check_is(command: str, is_check: bool) -> None:
    """The trial's ledger (hooks) and `bank scan` must count the same commands as checks."""
    from lessonbank.scan import outcomes as mining

    assert bool(checks.check_name(command)) is is_check
    assert (mining.check_of(command) is not None) is is_check
