"""Guards: a lesson file's `guard: true` read by the hook, in the bank of the layer that holds it."""

from __future__ import annotations

from pathlib import Path

import pytest

from lessonbank.bank.lesson import parse, render
from lessonbank.hooks import guards
from lessonbank.index import layers
from tests.hook_support import lesson


@pytest.mark.parametrize(
    ("front", "flagged"),
    [
        ("guard: true", True),
        ("guard: True  # held back once", True),
        ("guard: yes", True),
        ("guard: false", False),
        ("guard: 'no'", False),
        ("title: guard: true", False),
        ("", False),
    ],
)
def test_the_frontmatter_says_whether_a_lesson_is_a_guard(front: str, flagged: bool) -> None:
    assert guards.flagged(f"---\nid: x\n{front}\nslug: y\n---\nguard: true in the body does not count\n") is flagged


def test_the_hook_reads_what_the_bank_writes(tmp_path: Path) -> None:
    text = render(lesson("held", guard=True))
    assert parse(text).guard and guards.flagged(text)
    assert not guards.flagged(render(lesson("plain")))
    assert not guards.flagged("guard: true\n")  # no frontmatter


def test_each_layer_is_read_in_its_own_bank(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    team = tmp_path / "data" / "lessonbank" / "teams" / "acme" / "lessons"
    team.mkdir(parents=True)
    (team / "held.md").write_text(render(lesson("held", guard=True)))
    assert layers.root_of("/p", "project") == "/p"
    assert layers.root_of("/p", "personal") == str(tmp_path / "data" / "lessonbank" / "personal")
    assert guards.is_guard("/p", "team:acme", "held")
    assert not guards.is_guard("/p", "personal", "held")  # no such file: not a guard
    assert not guards.is_guard("/p", "elsewhere", "held")


def test_a_lesson_file_linked_to_an_endless_one_is_read_only_so_far(tmp_path: Path) -> None:
    """A repository may commit lessons/x.md as a link to /dev/zero: the frontmatter is read, not the rest."""
    import subprocess
    import sys

    (tmp_path / "lessons").mkdir()
    (tmp_path / "lessons" / "x.md").symlink_to("/dev/zero")
    code = "import sys; from lessonbank.hooks import guards; print(guards.is_guard(sys.argv[1], 'project', 'x'))"
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, timeout=20)
    assert done.stdout.strip() == "False"


def test_a_slug_in_index_md_names_no_file_outside_lessons(tmp_path: Path) -> None:
    # INDEX.md is the repository's: a slug with a path in it must not read another file.
    outside = tmp_path / "secret.md"
    outside.write_text("---\nid: x\nguard: true\n---\n", encoding="utf-8")
    (tmp_path / "bank" / "lessons").mkdir(parents=True)
    assert guards.is_guard(str(tmp_path / "bank"), "project", "../../secret") is False
