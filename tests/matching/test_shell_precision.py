"""Precision and recall of command triggers on a labelled set, through the real PreToolUse path.

A bank of lessons with triggers written the way people write them (a tool and subcommand, negative
lookaheads that go quiet when the fix is already in the command, triggers keyed on an environment
assignment) meets commands an agent runs. Each is labelled with the lessons that must fire; every
other lesson must stay quiet. What matching/shell.py hands the triggers decides the score: the
assignments before a command belong to it, search patterns and scripts handed to grep, rg, git log,
sed, awk and the like are data.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lessonbank.hooks import dispatch
from tests.hook_support import bash, lesson, make_bank, slugs

TRIGGERS = {
    "cargo-test-backtrace": r"\bcargo\s+(\+\S+\s+)?test\b(?!.*RUST_BACKTRACE=)",
    "rust-backtrace-full": r"\bRUST_BACKTRACE=1\b",
    "docker-buildkit": r"\bdocker\s+build\b(?!.*DOCKER_BUILDKIT=1)",
    "node-heap": r"\bnpm\s+run\s+build\b(?!.*--max-old-space-size)",
    "go-static": r"\bgo\s+build\b(?!.*CGO_ENABLED=0)",
    "go-race": r"\bgo\s+test\b(?!.*-race)",
    "goflags-vendor": r"\bGOFLAGS=\S*-mod=vendor",
    "pytest-order": r"\bpytest\b(?!.*-p no:randomly)",
    "jest-exit": r"\bjest\b(?!.*--forceExit)",
    "mypy-cache": r"\bmypy\b",
    "no-force-push": r"^git\s+push\b.*(--force\b|\s-f\b)",
    "git-stash-untracked": r"\bgit\s+stash\b(?!.*(\s-u\b|--include-untracked|\s(list|pop|apply|show|drop)\b))",
    "git-add-all": r"\bgit\s+add\s+(-A|--all|\.)(\s|$)",
    "pip-outside-uv": r"(?<!uv )\bpip3?\s+install\b",
    "terraform-apply": r"\bterraform\s+apply\b(?!.*-target)",
    "kubectl-delete": r"\bkubectl\s+delete\b",
    "rm-rf": r"\brm\s+-(rf|fr)\b",
    "make-parallel": r"\bmake\b(?!.*\s-j)",
}

# (command, the lessons that must fire)
LABELLED: list[tuple[str, set[str]]] = [
    # Plain runs.
    ("cargo test", {"cargo-test-backtrace"}),
    ("cargo +nightly test --workspace", {"cargo-test-backtrace"}),
    ("cd crates/core && cargo test -- --nocapture", {"cargo-test-backtrace"}),
    ("cargo build --release", set()),
    ("docker build -t app .", {"docker-buildkit"}),
    ("npm run build", {"node-heap"}),
    ("npm run build -- --max-old-space-size=4096", set()),
    ("go build ./...", {"go-static"}),
    ("go test ./...", {"go-race"}),
    ("go test -race ./...", set()),
    ("pytest -x tests/", {"pytest-order"}),
    ("python -m pytest -q 2>&1 | tail -20", {"pytest-order"}),
    ("pytest -p no:randomly tests/", set()),
    ("npx jest --runInBand", {"jest-exit"}),
    ("npx jest --forceExit", set()),
    ("mypy tooling", {"mypy-cache"}),
    ("git push --force origin main", {"no-force-push"}),
    ("git push origin main", set()),
    ("git stash", {"git-stash-untracked"}),
    ("git stash -u", set()),
    ("git stash pop", set()),
    ("git add -A", {"git-add-all"}),
    ("git add tooling/x.py", set()),
    ("pip install requests", {"pip-outside-uv"}),
    ("uv pip install requests", set()),
    ("terraform apply", {"terraform-apply"}),
    ("terraform apply -target=module.db", set()),
    ("kubectl delete pod web-1", {"kubectl-delete"}),
    ("rm -rf build/", {"rm-rf"}),
    ("make", {"make-parallel"}),
    ("make -j8 all", set()),
    ("ls -la", set()),
    ("cat README.md", set()),
    # Assignments before a command belong to its invocation.
    ("RUST_BACKTRACE=1 cargo test", {"rust-backtrace-full"}),
    ("RUST_BACKTRACE=full cargo test", set()),
    ("RUST_BACKTRACE=1 cargo run --bin cli", {"rust-backtrace-full"}),
    ("RUST_LOG=debug cargo test", {"cargo-test-backtrace"}),
    ("DOCKER_BUILDKIT=1 docker build -t app .", set()),
    ("DOCKER_BUILDKIT=0 docker build -t app .", {"docker-buildkit"}),
    ("env DOCKER_BUILDKIT=1 docker build .", set()),
    ("sudo DOCKER_BUILDKIT=1 docker build .", set()),
    ("NODE_OPTIONS=--max-old-space-size=4096 npm run build", set()),
    ("NODE_ENV=production npm run build", {"node-heap"}),
    ("CGO_ENABLED=0 GOOS=linux go build -o app .", set()),
    ("GOOS=linux go build -o app .", {"go-static"}),
    ("GOFLAGS=-mod=vendor go test -race ./...", {"goflags-vendor"}),
    ("GOFLAGS=-mod=vendor go test ./...", {"goflags-vendor", "go-race"}),
    ("PYTHONPATH=src pytest -q", {"pytest-order"}),
    ("CI=true npx jest", {"jest-exit"}),
    ("GIT_TRACE=1 git push --force", {"no-force-push"}),
    ("TF_LOG=debug terraform apply", {"terraform-apply"}),
    ("cd app && DOCKER_BUILDKIT=1 docker build . && docker push app", set()),
    ("FOO=1 ls", set()),
    # Search patterns and scripts are data.
    ('rg -n "cargo test" docs/', set()),
    ("rg -n 'cargo\\s+test' docs/", set()),
    ("rg pytest", set()),
    ("rg -l jest src/", set()),
    ("rg -w mypy -g '*.toml'", set()),
    ("rg -e pytest -e jest tests/", set()),
    ("rg --type py pytest", set()),
    ("grep -rn pytest .", set()),
    ("grep -rln jest src", set()),
    ("grep -E 'pytest|jest' requirements.txt", set()),
    ("grep -A 3 mypy setup.cfg", set()),
    ("grep -c make Makefile", set()),
    ("ag mypy", set()),
    ("ack -l pytest", set()),
    ("git grep -n pytest", set()),
    ("git grep -e jest -- '*.json'", set()),
    ('git log --grep="docker build" --oneline', set()),
    ("git log --grep=jest --oneline", set()),
    ("git log -S pytest --oneline", set()),
    ("git log -Smypy -p", set()),
    ("git log -G 'make' --stat", set()),
    ("git diff -G mypy HEAD~3", set()),
    ("git log --oneline | grep pytest", set()),
    ("sed -i 's/pytest/tox/' tox.ini", set()),
    ("sed -n '/jest/p' package.json", set()),
    ("sed -e 's/mypy/pyright/g' -e 's/make/just/' ci.sh", set()),
    ("awk '/pytest/' log.txt", set()),
    ("perl -pi -e 's/jest/vitest/' package.json", set()),
    ("find . -name '*jest*'", set()),
    ("find . -path '*/pytest/*' -type f", set()),
    ("pgrep -f pytest", set()),
    ("which pytest", set()),
    ("rg -l pytest | xargs sed -i 's/pytest/tox/'", set()),
    # ... while what those commands run is still seen.
    ("grep -q pytest requirements.txt && pytest", {"pytest-order"}),
    ("cargo test 2>&1 | rg panicked", {"cargo-test-backtrace"}),
    ("find . -name '*.py' -exec pytest {} +", {"pytest-order"}),
    ("git ls-files | grep test_ | xargs pytest", {"pytest-order"}),
    ("rg --files | xargs rm -rf", {"rm-rf"}),
    ("git grep -l jest && npx jest", {"jest-exit"}),
    ('bash -c "grep -q x f && make"', {"make-parallel"}),
    ("git log -S pytest && git push --force", {"no-force-push"}),
    ("sed -i 's/a/b/' Cargo.toml && cargo test", {"cargo-test-backtrace"}),
    ("awk '{print $1}' deps.txt | xargs pip install", {"pip-outside-uv"}),
    ("which jest && npx jest", {"jest-exit"}),
    # Messages and echo were data already.
    ('git commit -m "make jest exit"', set()),
    ('echo "run pytest -x"', set()),
    ("echo pytest", set()),
]

TOML = "[recall]\nmax_lessons = 50\nmax_bytes = 1000000\n"


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("precision") / "proj"
    make_bank(home, [lesson(slug, commands=[rx]) for slug, rx in TRIGGERS.items()], toml=TOML)
    return home


def fired(root: Path, command: str, n: int) -> set[str]:
    out = dispatch.handle(
        json.dumps(bash(root, command, session_id=f"precision-{n}")).encode(), raise_errors=True
    )
    return set(slugs(json.loads(out)["hookSpecificOutput"]["additionalContext"])) if out else set()


def score(root: Path) -> tuple[float, float, list[str]]:
    """(precision, recall, the commands answered wrongly) over (command, lesson) pairs."""
    tp = fp = fn = 0
    wrong: list[str] = []
    for n, (command, expected) in enumerate(LABELLED):
        got = fired(root, command, n)
        tp += len(got & expected)
        fp += len(got - expected)
        fn += len(expected - got)
        if got != expected:
            wrong.append(f"{command!r}: fired {sorted(got)}, expected {sorted(expected)}")
    return tp / ((tp + fp) or 1), tp / ((tp + fn) or 1), wrong


def test_the_labelled_set_is_large_and_mixed() -> None:
    assert len(LABELLED) >= 80
    assert len({c for c, _ in LABELLED}) == len(LABELLED)
    positives = sum(1 for _, expected in LABELLED if expected)
    assert 30 <= positives <= len(LABELLED) - 30
    assert set().union(*(e for _, e in LABELLED)) == set(TRIGGERS)


def test_bash_precision_and_recall(root: Path) -> None:
    precision, recall, wrong = score(root)
    print(f"\nbash triggers on {len(LABELLED)} commands: precision {precision:.3f}, recall {recall:.3f}")
    assert precision >= 0.95, wrong
    assert recall == 1.0, wrong
