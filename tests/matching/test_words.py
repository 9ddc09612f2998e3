"""Tokens, stop words and stemming: the shared vocabulary of duplicate detection and recall."""

from __future__ import annotations

import pytest

from lessonbank.matching import words


@pytest.mark.parametrize(
    ("word", "stem"),
    [
        ("hangs", "hang"),
        ("hanging", "hang"),
        ("hanged", "hang"),
        ("running", "run"),
        ("stopped", "stop"),
        ("installs", "install"),
        ("libraries", "library"),
        ("matches", "match"),
        ("pushes", "push"),
        ("fixtures", "fixture"),
        ("class", "class"),
        ("status", "status"),
        ("analysis", "analysis"),
        ("tests", "test"),
        ("pytest", "pytest"),
        ("go", "go"),
        ("2026", "2026"),
    ],
)
def test_stem(word: str, stem: str) -> None:
    assert words.stem(word) == stem


def test_terms_drop_stop_words_punctuation_and_single_letters() -> None:
    assert words.terms("Why does `pytest -x` hang, and a test hangs?") == {"pytest", "hang", "test"}


def test_tokens_split_on_every_non_alphanumeric() -> None:
    assert words.tokens("src/app_main.py::Test-Case") == ["src", "app", "main", "py", "test", "case"]
    assert words.tokens("Cut short with… “quotes” — dashes, café") == [
        "cut", "short", "with", "quotes", "dashes", "café",
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("a", "b", "dice"),
    [({"a", "b"}, {"a", "b"}, 1.0), ({"a"}, {"b"}, 0.0), ({"a", "b"}, {"a", "c"}, 0.5), (set(), set(), 0.0)],
)
def test_dice(a: set[str], b: set[str], dice: float) -> None:
    assert words.dice(a, b) == dice


def test_words_does_not_import_re() -> None:
    import subprocess
    import sys

    tooling = words.__file__.rsplit("/lessonbank/", 1)[0]
    code = f"import sys; sys.path.insert(0, {tooling!r}); import lessonbank.matching.words, lessonbank.index.index_md; print('re' in sys.modules)"
    out = subprocess.run([sys.executable, "-I", "-S", "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "False", out.stderr
