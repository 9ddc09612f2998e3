"""`bank check --format github`: one GitHub Actions error annotation per problem."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import run


def test_problems_become_annotations(bank: Path) -> None:
    lessons = bank / "lessons"
    (lessons / "no-front.md").write_text("just text\n", encoding="utf-8")
    (lessons / "broken-yaml.md").write_text("---\nid: [oops\n---\n", encoding="utf-8")

    result = run(bank, "check", "--format", "github")

    assert result.exit_code == 1
    lines = result.output.splitlines()
    assert lines[0].startswith("::error file=lessons/broken-yaml.md,line=3::frontmatter is not valid YAML: ")
    assert lines[1:] == [
        "::error file=lessons/no-front.md,line=1::no frontmatter: the file must start with a '---' line",
        "Error: 2 problem(s) in 2 lesson file(s)",
    ]


def test_a_clean_bank_says_ok_in_either_format(bank: Path) -> None:
    assert run(bank, "check", "--format", "github").output == "ok: 0 lesson file(s), no problems\n"
