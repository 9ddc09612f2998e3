"""The state folder's primitives: reading never raises, names never collide."""

from __future__ import annotations

from pathlib import Path

import pytest

from lessonbank.kernel import statedir


def test_read_text_of_a_folder_or_a_missing_file_is_none(tmp_path: Path) -> None:
    assert statedir.read_text(str(tmp_path)) is None
    assert statedir.read_text(str(tmp_path / "missing")) is None


def test_read_text_reads_a_file(tmp_path: Path) -> None:
    (tmp_path / "mode").write_text("test\n", encoding="utf-8")
    assert statedir.read_text(str(tmp_path / "mode")) == "test\n"


def test_safe_names_of_distinct_ids_differ() -> None:
    ids = ["a/b", "a_b", "a%2Fb", ".hidden", "", "ok-1.2"]
    names = [statedir.safe_name(i) for i in ids]
    assert len(set(names)) == len(ids)
    assert all("/" not in n and not n.startswith(".") for n in names)


@pytest.mark.parametrize("slug", ["plain-slug", "a b", ".hidden", "é-ü", "%41", "x/y", "50%"])
def test_claimed_slugs_undo_safe_names(tmp_path: Path, slug: str) -> None:
    session = statedir.Session(str(tmp_path), "s")
    assert session.claimed_slugs() == set()
    assert session.claim(slug, 5)
    assert session.claimed_slugs() == {slug}
