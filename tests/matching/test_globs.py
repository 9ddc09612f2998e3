"""Path globs for lesson triggers: our own matcher (no fnmatch, no re)."""

from __future__ import annotations

import pytest

from lessonbank.matching import globs

CASES = [
    ("migrations/**", "migrations/0001_init.py", True),
    ("migrations/**", "app/migrations/0001_init.py", False),
    ("migrations/", "migrations/x/y.sql", True),
    ("**/migrations/*.py", "migrations/0001.py", True),
    ("**/migrations/*.py", "app/db/migrations/0001.py", True),
    ("**/migrations/*.py", "app/db/migrations/sub/0001.py", False),
    ("src/**/*.ts", "src/a.ts", True),
    ("src/**/*.ts", "src/a/b/c.ts", True),
    ("src/**/*.ts", "src/a/b/c.tsx", False),
    ("src/*.ts", "src/a/b.ts", False),
    ("*.lock", "poetry.lock", True),
    ("*.lock", "deep/dir/yarn.lock", True),
    ("*.lock", "lockfile", False),
    ("Cargo.toml", "crates/x/Cargo.toml", True),
    ("Cargo.toml", "crates/x/cargo.toml", False),
    ("docs/*.md", "docs/guide.md", True),
    ("docs/*.md", "docs/.hidden.md", True),
    ("test_?.py", "tests/test_a.py", True),
    ("test_?.py", "tests/test_ab.py", False),
    ("[abc]*.py", "b_tool.py", True),
    ("[!abc]*.py", "b_tool.py", False),
    ("[a-c]x", "bx", True),
    ("[a-c]x", "dx", False),
    ("*.{yml,yaml}", ".github/workflows/ci.yaml", True),
    ("*.{yml,yaml}", "ci.yml", True),
    ("*.{yml,yaml}", "ci.json", False),
    ("{src,lib}/**/*.rs", "lib/a/b.rs", True),
    ("{src,lib}/**/*.rs", "bin/a.rs", False),
    ("a\\*b", "a*b", True),
    ("a\\*b", "axb", False),
    ("./setup.py", "setup.py", True),
    ("**", "anything/at/all", True),
    ("a/**/b", "a/b", True),
    ("a/**/b", "a/x/y/b", True),
    ("a/**/b", "a/xb", False),
    ("a**b", "a/b", False),
    ("a**b", "axxb", True),
]


@pytest.mark.parametrize(("glob", "path", "expected"), CASES)
def test_glob(glob: str, path: str, expected: bool) -> None:
    assert globs.match(globs.compile_glob(glob), path) is expected


def test_literals_are_what_every_match_contains() -> None:
    for glob, path, expected in CASES:
        if not expected:
            continue
        for tokens in globs.compile_glob(glob)[1]:
            if globs.match((globs.compile_glob(glob)[0], (tokens,)), path):
                assert all(lit in path for lit in globs.literals(tokens)), (glob, path)


def test_unclosed_class_is_a_literal() -> None:
    assert globs.match(globs.compile_glob("a[b"), "a[b")
