"""Names: ULIDs, slugs and the cut rule for titles."""

from __future__ import annotations

import pytest

from lessonbank.bank import names


def test_ids_sort_by_time_and_do_not_collide() -> None:
    a = names.new_id(now_ms=1_700_000_000_000, rand=b"\x00" * 10)
    b = names.new_id(now_ms=1_700_000_000_001, rand=b"\x00" * 10)
    assert len(a) == 26 and a < b
    assert len({names.new_id() for _ in range(2000)}) == 2000


@pytest.mark.parametrize(
    ("title", "slug"),
    [("Pytest hangs on a TTY!", "pytest-hangs-on-a-tty"), ("", "lesson"), ("a" * 80, "a" * 60)],
)
def test_slugify(title: str, slug: str) -> None:
    assert names.slugify(title) == slug


@pytest.mark.parametrize(
    ("text", "limit", "cut"),
    [
        ("cmake fails with an undefined reference", 20, "cmake fails"),
        ("pytest hangs on a tty", 40, "pytest hangs on a tty"),
        ("git push is rejected by the push protection", 30, "git push is rejected"),
        ("averyveryverylongword", 5, "avery"),
    ],
)  # fmt: skip
def test_a_cut_never_ends_on_a_word_that_leaves_the_sentence_hanging(text: str, limit: int, cut: str) -> None:
    assert names.cut_words(text, limit) == cut


def test_a_long_slug_is_cut_before_a_dangling_word() -> None:
    title = "After moving the package under src/, pytest fails with ModuleNotFoundError"
    assert names.slugify(title) == "after-moving-the-package-under-src-pytest-fails"
