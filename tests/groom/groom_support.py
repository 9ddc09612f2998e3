"""What the groom tests share: a bank with a small project in a real git repository, its six-lesson
scenario (one lesson per destination kind, one stale, one waiting, one whose anchor changed), and
helpers that write, commit and compare files."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from lessonbank.bank.lesson import Lesson, render
from lessonbank.cli import main
from tests.conftest import git

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "groom"
IDS = {
    "db-timeout": "01JGR00M0000000000000000A1",
    "pytest-tty": "01JGR00M0000000000000000B2",
    "db-migrations": "01JGR00M0000000000000000C3",
    "old-api": "01JGR00M0000000000000000D4",
    "fresh": "01JGR00M0000000000000000E5",
    "anchored": "01JGR00M0000000000000000F6",
    "late": "01JGR00M0000000000000000G7",
}
PROJECT = {
    "src/db.py": "def connect(timeout=None):\n    return None\n",
    "tests/test_db.py": "import pytest\n\n\ndef test_connect():\n    assert True\n",
    "docs/testing.md": "# Testing\n\nHand-written intro: run the suite with `make test`.\n",
    "CLAUDE.md": "# Project memory\n\nHand-written: keep answers short.\n",
    "AGENTS.md": "# Agents\n\nHand-written: read the README first.\n",
}
ANCHORED = """\
---
id: {id}
slug: anchored
title: Close the pool before forking
type: gotcha
when: forking a worker while src/db.py holds an open pool
do: call pool.close() before os.fork()
promote-to: rule:testing
# checked by hand on the first incident
owner: db-team
triggers:
  tools: []
  commands: []
  paths: []
  keywords: [fork, pool]
tags: ['area:db']
seen: 3
sessions: [s1, s2, s3]
priority: 6
confidence: 0.8
source: typed
status: active   # was fine last time
created: '2026-11-01'
updated: '2026-11-01'
verified:
  at: '2026-11-01'
  commit: {commit}
verify:
  paths: [src/db.py]
---

The incident: a forked worker inherited the pool and both wrote to one socket.
"""


def golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("UPDATE_GOLDEN"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8"), f"differs from {path}"


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def lesson_text(slug: str, promote_to: str, seen: int = 2, **kw: Any) -> str:
    fields: dict[str, Any] = {
        "id": IDS.get(slug) or "01JGR00M" + hashlib.sha1(slug.encode()).hexdigest()[:18].upper(),
        "slug": slug,
        "title": slug.replace("-", " ").capitalize(),
        "when": "calling connect() from a test",
        "do": "pass timeout=5 so a dead database fails fast",
        "promote_to": promote_to,
        "seen": seen,
        "sessions": [f"s{i}" for i in range(1, seen + 1)],
        "created": "2026-11-01",
        "updated": "2026-11-01",
        "verified": {"by": "tester"},  # a person vouches: with nothing to check it is promoted, not held
    }
    fields.update(kw)
    return render(Lesson(**fields))


def add_lesson(root: Path, slug: str, promote_to: str, **kw: Any) -> Path:
    path = root / "lessons" / f"{slug}.md"
    path.write_text(lesson_text(slug, promote_to, **kw), encoding="utf-8")
    return path


def commit_all(root: Path, message: str) -> str:
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message)
    return git(root, "rev-parse", "HEAD").strip()


def files_of(root: Path) -> dict[str, bytes]:
    out = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_file() and not rel.startswith((".git/", ".lessonbank/")):
            out[rel] = path.read_bytes()
    return out


@pytest.fixture
def bank(repo: Path) -> Path:
    assert CliRunner().invoke(main, ["init", str(repo)]).exit_code == 0
    write(repo, PROJECT)
    commit_all(repo, "project")
    write(repo, {"src/db.py": PROJECT["src/db.py"] + "\n\ndef retry():\n    return connect(timeout=1)\n"})
    commit_all(repo, "db: retry")
    return repo


@pytest.fixture
def scenario(bank: Path) -> Path:
    """Six lessons: one per destination kind, one stale, one waiting, one with a changed anchor."""
    project = git(bank, "log", "--format=%H", "-1", "HEAD~1").strip()
    add_lesson(
        bank, "db-timeout", "rule:testing", commands=[r"\bpytest\b"], tags=["tool:pytest"],
        verify={"match": [r"def connect\("], "glob": "src/**/*.py"},
    )  # fmt: skip
    add_lesson(
        bank, "pytest-tty", "skill:pytest", seen=3, title="pytest hangs waiting for a TTY",
        when="pytest runs in a non-interactive shell", do="run it with stdin from /dev/null",
        tags=["tool:pytest", "severity:hang"], verified={"by": "ci-team"},
        body="# pytest hangs waiting for a TTY\n\nSeen twice in CI.\n\n## Evidence\n\n```sh\n# hung here\npytest -x\n```\n",
    )  # fmt: skip
    add_lesson(
        bank, "db-migrations", "doc:docs/testing.md", title="Reset the test database per run",
        when="tests share one database", do="drop and recreate it in a session fixture", verified={"by": "db-team"},
    )  # fmt: skip
    add_lesson(bank, "old-api", "rule:testing", verify={"match": [r"legacy_connect\("]})
    add_lesson(bank, "fresh", "rule:testing", seen=1)
    (bank / "lessons" / "anchored.md").write_text(ANCHORED.format(id=IDS["anchored"], commit=project))
    commit_all(bank, "lessons")
    return bank


def normalise(text: str, root: Path) -> str:
    for sha in git(root, "log", "--all", "--format=%H").split():
        text = text.replace(sha[:7], "<sha>")
    return text
