"""An invalid lesson file is left out of the index with a warning, and `bank check` names what is wrong."""

from __future__ import annotations

from pathlib import Path

import pytest

from lessonbank.bank.lesson import render
from tests.attacks.attack_support import capture
from tests.conftest import run
from tests.hook_support import bash, context, lesson
from tests.hook_support import run as hook


def test_bank_index_leaves_invalid_lessons_out_with_a_warning(bank: Path) -> None:
    capture(bank, "running the test suite here", "pass -q to pytest", "--trigger-command", "pytest")
    path = bank / "lessons" / "running-the-test-suite-here.md"
    path.write_text(path.read_text(encoding="utf-8").replace("priority: 5", "priority: 99"), encoding="utf-8")
    line = path.read_text(encoding="utf-8").splitlines().index("priority: 99") + 1
    result = run(bank, "index")
    assert result.exit_code == 0
    assert f"warning: skipped lessons/running-the-test-suite-here.md:{line}: priority 99 must be 1-10" in result.output
    assert "running-the-test-suite-here" not in (bank / "INDEX.md").read_text(encoding="utf-8")
    assert context(hook(bash(bank, "pytest -x"))) == ""


@pytest.mark.parametrize(
    ("ident", "message"),
    [
        ("not-a-ulid", "id 'not-a-ulid' must be a ULID: 26 characters, got 10"),
        ("01JBQX000000000000000000IL", "id '01JBQX000000000000000000IL' must be a ULID: 'IL' not in"),
        ("81JBQX0000000000000000000A", "id '81JBQX0000000000000000000A' must be a ULID: it starts with 0-7 (128 bits)"),
    ],
)
def test_bank_check_validates_ids(bank: Path, ident: str, message: str) -> None:
    item = lesson("odd-id", id=ident)
    (bank / "lessons" / "odd-id.md").write_text(render(item), encoding="utf-8")
    result = run(bank, "check")
    assert result.exit_code == 1
    assert f"lessons/odd-id.md:2: {message}" in result.output


def test_bank_check_finds_ids_equal_but_for_case(bank: Path) -> None:
    for slug, ident in (("one", "01JBQX0000000000000000000A"), ("two", "01jbqx0000000000000000000a")):
        (bank / "lessons" / f"{slug}.md").write_text(render(lesson(slug, id=ident)), encoding="utf-8")
    result = run(bank, "check")
    assert result.exit_code == 1
    assert "duplicate id '01JBQX0000000000000000000A' (also in two.md)" in result.output
