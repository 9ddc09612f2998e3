"""A destination naming the bank's own files or .git/, in any case or Unicode form, is refused.

On a case-insensitive file system (macOS's default) `doc:.GIT/x.md` is `.git/x.md`; on Linux a
lesson promoted into `LESSONS/` broke every later groom. Capture refuses them by every route,
and `bank check` reports a lesson file that names one.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lessonbank.bank.lesson import render
from tests.conftest import run
from tests.hook_support import lesson

OWN = [
    "doc:.GIT/x.md", "doc:.Git/hooks/x.md", "doc:LESSONS/x.md", "doc:Lessons/a/b.md", "doc:index.md",
    "doc:Bank.MD", "doc:.LESSONBANK/x.md", "doc:ＩＮＤＥＸ.md", "doc:ｌｅｓｓｏｎｓ/x.md", "doc:.ｇｉｔ/x.md",
    "doc:./INDEX.md", "doc:docs/../.git/x.md",
]  # fmt: skip


def files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and ".git" not in p.parts)


@pytest.mark.parametrize("dest", OWN)
def test_capture_refuses_the_banks_own_files_in_any_case_or_form(bank: Path, dest: str) -> None:
    before = files(bank)
    by_flags = run(bank, "capture", "--when", "writing the release notes", "--do", "list the fixes", "--promote-to", dest)
    by_json = run(bank, "capture", "--json", input=json.dumps({"when": "a", "do": "b", "promote_to": dest}))
    for result in (by_flags, by_json):
        assert result.exit_code == 1, result.output
        assert result.output.startswith("Error: refused:"), result.output
    assert files(bank) == before


@pytest.mark.parametrize("dest", OWN[:6])
def test_check_reports_a_lesson_file_naming_one(bank: Path, dest: str) -> None:
    item = lesson("release-notes", promote_to=dest, id="01JBQX0000000000000000000A")
    (bank / "lessons" / "release-notes.md").write_text(render(item), encoding="utf-8")
    result = run(bank, "check")
    assert result.exit_code == 1
    assert "lessons/release-notes.md:" in result.output


def test_an_ordinary_doc_in_capitals_is_still_allowed(bank: Path) -> None:
    result = run(bank, "capture", "--when", "writing the notes", "--do", "list fixes", "--promote-to", "doc:docs/RELEASE.md")
    assert result.exit_code == 0, result.output
