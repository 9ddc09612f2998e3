"""A lesson holding a secret is reported by `bank check` and never promoted or committed by groom."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import git, run

SECRET = "Rd1sP4ssw0rdQx"
LESSON = f"""\
---
id: 01JGR00M0000000000000000S1
slug: flush-the-cache-before-the-suite
title: Flush the cache before the suite
type: gotcha
when: the integration suite runs against a warm src/cache.py cache
do: run redis-cli -a {SECRET} flushall before pytest
promote-to: rule:testing
triggers:
  tools: [Bash]
  commands: ['\\bpytest\\b']
  paths: []
  keywords: [cache]
tags: ['tool:pytest']
seen: 3
sessions: [s1, s2, s3]
priority: 6
confidence: 0.8
source: typed
status: active
created: '2026-11-01'
updated: '2026-11-01'
verify:
  paths: [src/cache.py]
---
"""


def _banked(bank: Path) -> Path:
    (bank / "src").mkdir()
    (bank / "src/cache.py").write_text("CACHE = {}\n", encoding="utf-8")
    (bank / "tests").mkdir()
    (bank / "tests/test_cache.py").write_text("import pytest\n\n\ndef test_cache():\n    assert True\n", encoding="utf-8")
    path = bank / "lessons/flush-the-cache-before-the-suite.md"
    path.write_text(LESSON, encoding="utf-8")
    git(bank, "add", "-A")
    git(bank, "commit", "-qm", "a lesson with a password in it")
    return path


def test_check_reports_a_secret_in_a_hand_written_lesson(bank: Path) -> None:
    _banked(bank)
    result = run(bank, "check")
    assert result.exit_code == 1
    assert "lessons/flush-the-cache-before-the-suite.md:7: holds a secret (cli password)" in result.output
    assert SECRET not in result.output


def test_a_lesson_with_a_secret_is_never_injected(bank: Path) -> None:
    _banked(bank)
    run(bank, "index")
    assert SECRET not in (bank / "INDEX.md").read_text(encoding="utf-8")


def test_groom_refuses_to_promote_it_and_commits_no_secret(bank: Path) -> None:
    _banked(bank)
    result = run(bank, "groom", "--commit")
    assert "cannot promote: it holds a secret (cli password, line 7)" in result.output
    assert SECRET not in result.output
    tracked = git(bank, "ls-files").split()
    for name in tracked:
        if name.startswith(("rules/", "AGENTS.md", "CLAUDE.md", ".claude/")):
            assert SECRET not in (bank / name).read_text(encoding="utf-8"), name
    assert SECRET not in git(bank, "log", "-p", "--all", "--", "rules", "AGENTS.md", "CLAUDE.md")
    assert SECRET not in git(bank, "log", "--format=%B")
