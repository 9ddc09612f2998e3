"""The code snapshot groom checks against: the literal that guides each regex search, cached questions."""

from __future__ import annotations

import re

import pytest

from lessonbank.groom.snapshot import RepoView, Snapshot, compile_pattern, required_literal


@pytest.mark.parametrize(
    ("pattern", "literal"),
    [
        (r"\bfoo_bar\b", ("foo_bar", False)),
        (r"^import zzz", ("import zzz", False)),
        (r"def\s+connect\(", ("connect(", False)),
        (r"(?i)Connect", ("Connect", True)),
        (r"colou?r", ("colo", False)),
        (r"x|yyy", ("", False)),
        (r"ab", ("", False)),
        (r"a(bcde)f", ("bcde", False)),
        (r"(?i:abcdef)x", ("", False)),
        (r"(?i)caf\u00e9", ("", False)),
        (r"[", ("", False)),
    ],
)
def test_required_literal(pattern: str, literal: tuple[str, bool]) -> None:
    assert required_literal(pattern) == literal


def test_repo_view_answers_paths_globs_and_searches() -> None:
    files = {"src/db.py": "def connect():\n    pass\n", "docs/guide.md": "# Guide\n", "Makefile": "all:\n"}
    view = RepoView(Snapshot.from_files(files), {"make": [("Makefile", None)], "jest": [("package.json", None)]})
    assert view.exists("src") and view.exists("./src/db.py/") and not view.exists("sr")
    assert view.matching("*.md") == frozenset({"docs/guide.md"})
    assert view.any_path("src/**/*.py") and not view.any_path("*.rs")
    assert view.search(compile_pattern(r"^def connect\("), None)
    assert not view.search(compile_pattern(r"connect"), ["docs/*.md"])
    assert view.uses("make") and not view.uses("jest")
    assert compile_pattern(r"^x").flags & re.MULTILINE
