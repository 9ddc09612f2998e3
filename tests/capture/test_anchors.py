"""Verify anchors at capture, from every route, and groom checking them: what a lesson names that still exists."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from lessonbank.bank import anchors
from lessonbank.bank.lesson import parse
from tests.conftest import git, run

PACKAGE = {"name": "shop", "scripts": {"test": "vitest run", "e2e": "playwright test", "lint": "eslint ."}}


@pytest.fixture
def project(bank: Path) -> Path:
    """A bank in a repository with a package.json, a Makefile, a pyproject.toml and some code, all committed."""
    (bank / "package.json").write_text(json.dumps(PACKAGE), encoding="utf-8")
    (bank / "Makefile").write_text("all: build\n\ncheck build: deps\n\ttrue\n", encoding="utf-8")
    (bank / "pyproject.toml").write_text("[tool.ruff]\nline-length = 100\n", encoding="utf-8")
    (bank / "src").mkdir()
    (bank / "src" / "cart.ts").write_text("export function totalWithTax() { return 1 }\n", encoding="utf-8")
    git(bank, "add", "-A")
    git(bank, "commit", "-q", "-m", "project")
    return bank


def only_lesson(root: Path) -> dict:
    [path] = sorted((root / "lessons").glob("*.md"))
    return parse(path.read_text(encoding="utf-8")).verify


def test_mentions_read_files_scripts_keys_and_code() -> None:
    text = ("run `npm run e2e` and `make check` after editing src/cart.ts; keep `tool.ruff.line-length` at 100 "
            "and call `totalWithTax()`, not `npm install`")  # fmt: skip
    assert [(m.kind, m.name, m.runner) for m in anchors.mentions(text)] == [
        ("script", "e2e", "npm"), ("script", "check", "make"), ("key", "tool.ruff.line-length", ""),
        ("code", "totalWithTax", ""), ("path", "src/cart.ts", ""),
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("file", "text", "name", "expected"),
    [
        ("package.json", json.dumps(PACKAGE), "e2e", True),
        ("package.json", json.dumps(PACKAGE), "build", False),
        ("Makefile", "all: build\ncheck build: deps\n\ttrue\nX := 1\n", "check", True),
        ("Makefile", "X := 1\n", "X", False),
        ("pyproject.toml", "[tool.ruff]\nline-length = 100\n", "tool.ruff.line-length", True),
        ("tsconfig.json", '{"compilerOptions": {"strict": true}}', "compilerOptions.strict", True),
        ("tsconfig.json", "not json", "compilerOptions.strict", False),
    ],
)
def test_defined_reads_scripts_targets_and_keys(file: str, text: str, name: str, expected: bool) -> None:
    assert anchors.defined(file, text, name) is expected


def test_a_typed_lesson_gets_the_anchors_its_words_name(project: Path) -> None:
    done = run(project, "add", "before pushing => run `npm run e2e` and `make check`; the tax is in src/cart.ts, "
               "see `totalWithTax()` and `tool.ruff.line-length`", "--promote-to", "rule:testing")  # fmt: skip
    assert done.exit_code == 0, done.output
    assert only_lesson(project) == {
        "defines": ["package.json:e2e", "Makefile:check", "pyproject.toml:tool.ruff.line-length"],
        "match": ["totalWithTax"],
        "paths": ["src/cart.ts"],
    }


def test_a_lesson_block_gets_them_too_and_what_the_repository_lacks_is_left_out(project: Path) -> None:
    block = ("#lesson\nwhen: releasing\ndo: run `npm run release` then `pnpm lint`; docs/missing.md explains\n"
             "promote-to: rule:release\n#/lesson\n")  # fmt: skip
    done = run(project, "capture", "--blocks", input=block)
    assert done.exit_code == 0, done.output
    assert only_lesson(project) == {"defines": ["package.json:lint"]}


def test_an_authors_own_verify_is_kept(project: Path) -> None:
    lesson = {"when": "running e2e", "do": "run `npm run e2e` headless", "promote_to": "rule:testing",
              "verify": {"defines": ["package.json:test"]}}  # fmt: skip
    assert run(project, "capture", "--json", input=json.dumps(lesson)).exit_code == 0
    assert only_lesson(project) == {"defines": ["package.json:test"]}


def test_groom_deletes_a_lesson_about_a_deleted_script_naming_it(project: Path) -> None:
    for session in ("s1", "s2"):
        done = run(project, "capture", "--when", "before pushing", "--do", "run `npm run e2e` headless",
                   "--promote-to", "rule:testing", "--session", session)  # fmt: skip
        assert done.exit_code == 0, done.output
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "lesson")
    plan = yaml.safe_load(run(project, "groom", "--dry-run", "--json").stdout)
    assert [(d["decision"], d["reason"]) for d in plan] == [
        ("promote", "seen in 2 sessions; re-verified: verify.defines `e2e` still defined in package.json"),
    ]
    scripts = {k: v for k, v in PACKAGE["scripts"].items() if k != "e2e"}
    (project / "package.json").write_text(json.dumps({**PACKAGE, "scripts": scripts}), encoding="utf-8")
    git(project, "commit", "-q", "-am", "drop e2e")
    plan = yaml.safe_load(run(project, "groom", "--dry-run", "--json").stdout)
    assert [(d["decision"], d["reason"]) for d in plan] == [
        ("delete", "verify.defines `e2e` is no longer defined in package.json"),
    ]


def test_the_stop_hooks_block_gets_anchors_too(project: Path) -> None:
    from tests.hook_support import payload
    from tests.hook_support import run as hook

    block = "Done.\n\n#lesson\nwhen: changing the tax\ndo: edit src/cart.ts and run `make check`\npromote-to: rule:tax\n#/lesson\n"
    done = hook(payload("Stop", project, last_assistant_message=block))
    assert done.returncode == 0, done.stderr
    assert only_lesson(project) == {"defines": ["Makefile:check"], "paths": ["src/cart.ts"]}
