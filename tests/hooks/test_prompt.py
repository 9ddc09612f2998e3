"""UserPromptSubmit: deterministic recall by shared words."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lessonbank.hooks import dispatch
from tests.hook_support import context, lesson, make_bank, payload, run, slugs

LESSONS = [
    lesson("flaky-pytest", title="Pytest is flaky on CI", when="tests fail only on CI",
           do="run pytest with -p no:randomly", keywords=["pytest", "flaky"], tags=["tool:pytest"], priority=6),
    lesson("db-fixture", title="Database fixture times out", when="the database fixture hangs",
           do="start postgres with make db first", keywords=["database", "postgres"], tags=["area:db"]),
    lesson("docs-build", title="Docs build needs sphinx", when="building the docs",
           do="install the docs extra first", keywords=["sphinx"], tags=["area:docs"]),
    lesson("tagged-only", title="Cache gets stale", when="the cache looks stale",
           do="clear .cache before rerunning", tags=["area:cache"]),
]  # fmt: skip


@pytest.fixture
def root(tmp_path: Path) -> Path:
    make_bank(tmp_path / "proj", LESSONS)
    return tmp_path / "proj"


def recall(root: Path, prompt: str, session: str) -> list[str]:
    data = payload("UserPromptSubmit", root, prompt=prompt, session_id=session)
    out = dispatch.handle(json.dumps(data).encode(), raise_errors=True)
    return slugs(json.loads(out)["hookSpecificOutput"]["additionalContext"]) if out else []


@pytest.mark.parametrize(
    ("prompt", "expected"),
    [
        ("please fix the failing pytest tests", ["flaky-pytest"]),  # keyword + "fail"/"test"
        ("pytest", []),  # a keyword alone is not enough
        ("the tests fail on CI", []),  # words but no keyword or tag
        ("why does the database fixture time out?", ["db-fixture"]),
        ("the cache is stale again", ["tagged-only"]),  # a tag value counts as a keyword
        ("Postgres hangs in the database tests", ["db-fixture"]),
        ("build the docs with sphinx", ["docs-build"]),
        ("the of and to with", []),
        ("", []),
    ],
)
def test_recall_rule(root: Path, prompt: str, expected: list[str]) -> None:
    assert recall(root, prompt, session=f"r-{prompt}") == expected


def test_best_first_capped_and_deterministic(tmp_path: Path) -> None:
    lessons = [
        lesson(f"deploy-{i}", title=f"deploy step {i}", when="deploying the service",
               do="check the release notes" + (" and the staging service" if i % 2 else ""),
               keywords=["deploy"], priority=5 + (i % 3))
        for i in range(6)
    ]  # fmt: skip
    root = tmp_path / "p"
    make_bank(root, lessons)
    prompt = "deploy the service to staging"
    first = recall(root, prompt, "a")
    assert first == ["deploy-5", "deploy-1", "deploy-3"]  # 3 shared words beat 2; then priority
    assert recall(root, prompt, "b") == first
    assert recall(root, prompt, "a") == ["deploy-2", "deploy-4", "deploy-0"]  # the rest, once each


def test_recall_as_a_process_with_the_real_payload(root: Path) -> None:
    done = run(payload("UserPromptSubmit", root))
    text = context(done)
    assert text.splitlines()[0].startswith("lessonbank: lessons this project learned that share words")
    assert slugs(text) == ["flaky-pytest"]
    assert json.loads(done.stdout)["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
