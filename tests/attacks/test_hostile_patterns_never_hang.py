"""A hostile trigger cannot hang the hook, and no route lets one into the bank unflagged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lessonbank.bank.lesson import render
from lessonbank.index import index_md
from tests.conftest import run as bank_cli
from tests.hook_support import bash, context, lesson, make_bank, payload
from tests.hook_support import run as hook
from tests.matching.test_hostile_patterns import HOSTILE, HOSTILE_GLOBS

# Patterns reported to hang the hook, and a command of the length that held it past 10 s.
REPORTED = [r"(a+)+$", r"(x+x+)+y", r"^(a|a)*b", r"(a+)+\1b"]
LONG = "a" * 22 + "!"


def lesson_files(root: Path) -> list[str]:
    return sorted(p.name for p in (root / "lessons").glob("*.md"))


@pytest.mark.parametrize("pattern", REPORTED + HOSTILE[::9])
def test_capture_by_flags_refuses_a_hostile_command_regex(bank: Path, pattern: str) -> None:
    before = lesson_files(bank)
    result = bank_cli(
        bank, "capture", "--when", "running the build script here", "--do", "call make first",
        "--trigger-command", pattern, "--promote-to", "rule:build",
    )  # fmt: skip
    assert result.exit_code == 1
    assert result.output.startswith("Error: refused: triggers.commands[0]"), result.output
    assert lesson_files(bank) == before


@pytest.mark.parametrize("glob", HOSTILE_GLOBS)
def test_capture_by_json_refuses_a_hostile_glob(bank: Path, glob: str) -> None:
    data = {"when": "editing the generated files", "do": "regenerate them", "promote_to": "rule:gen", "paths": [glob]}
    result = bank_cli(bank, "capture", "--json", input=json.dumps(data))
    assert result.exit_code == 1
    assert "refused: triggers.paths[0]" in result.output


def test_capture_by_blocks_refuses_a_hostile_trigger(bank: Path) -> None:
    block = "#lesson\ntool: Bash\ntrigger: (x+x+)+y\nmistake: the build hung\nfix: call make first\npromote-to: rule:build\n#/lesson"
    result = bank_cli(bank, "capture", "--blocks", input=block)
    assert result.exit_code == 1
    assert "(x+x+)+y" in result.output


def test_a_hand_written_hostile_lesson_is_flagged_and_left_out_of_the_index(bank: Path) -> None:
    bad = lesson("hostile", commands=[r"(a+)+$"], paths=["**/**/x"], id="01JBQX0000000000000000000A")
    (bank / "lessons" / "hostile.md").write_text(render(bad), encoding="utf-8")
    checked = bank_cli(bank, "check")
    assert checked.exit_code == 1
    assert "lessons/hostile.md:" in checked.output and "(a+)+$" in checked.output
    indexed = bank_cli(bank, "index")
    assert indexed.exit_code == 0
    assert "warning: skipped lessons/hostile.md:" in indexed.output
    assert "hostile" not in (bank / "INDEX.md").read_text(encoding="utf-8")


# Not flagged (no repeat nests another) but polynomial: the step budget is what stops it.
SLOW = r"a*a*a*a*a*a*a*a*b"


def test_the_hook_answers_when_a_hostile_trigger_is_in_the_index_all_the_same(tmp_path: Path) -> None:
    """INDEX.md edited by hand (or by an old version): the hook's index leaves the flagged
    triggers out, the step budget ends a slow one (logged), and the call answers."""
    root = tmp_path / "proj"
    make_bank(root, [lesson("ordinary", commands=["make"]), lesson("other", commands=["pytest"])])
    index = root / "INDEX.md"
    text = index.read_text(encoding="utf-8")
    rows = [ln for ln in text.splitlines() if ln.startswith("| [ordinary]")]
    for n, pattern in enumerate([*REPORTED, SLOW]):
        cells = index_md.split_row(rows[0])
        cells[0] = f"[hostile-{n}](lessons/hostile-{n}.md)"
        cells[5] = index_md.escape(pattern)
        text = text.replace(rows[0], rows[0] + "\n" + index_md.row_line(cells))
    index.write_text(text, encoding="utf-8")
    for n, subject in enumerate((LONG, "x" * 30, "a" * 200 + "!", "a" * 100_000)):
        assert context(hook(bash(root, subject, session_id=f"s{n}"))) == ""
    log = (root / ".lessonbank" / "hook.log").read_text(encoding="utf-8")
    assert f"lesson hostile-{len(REPORTED)}: command trigger {SLOW!r} gave up after" in log
    assert "hostile-0" not in log  # flagged: never run at all
    # An ordinary trigger in the same index still fires.
    assert "ordinary" in context(hook(bash(root, "make all", session_id="s9")))


def test_a_path_as_long_as_linux_allows_still_matches(tmp_path: Path) -> None:
    """PATH_MAX is 4096: such a path is under the hook's cut, and its glob still fires."""
    root = tmp_path / "proj"
    make_bank(root, [lesson("py", paths=["**/*.py"]), lesson("many-stars", paths=["*a*a*a*a*a*b"])])
    data = payload("PreToolUse", root, tool_name="Edit", tool_input={"file_path": str(root / ("a/" * 1900 + "x.py"))})
    done = hook(data)
    assert done.returncode == 0
    assert "py" in context(done)


def test_a_non_ascii_command_cannot_hang_the_re_fallback(tmp_path: Path) -> None:
    """`re` runs what the small matcher cannot (here: any non-ASCII command); its clock stops a
    polynomial trigger no static check flags, and the hook answers with the other lessons."""
    root = tmp_path / "proj"
    make_bank(root, [lesson("slow", commands=[r"a*a*a*a*b"]), lesson("ordinary", commands=["aaa"], priority=9)])
    done = hook(bash(root, "a" * 300 + " é"))
    assert "ordinary" in context(done)
    log = (root / ".lessonbank" / "hook.log").read_text(encoding="utf-8")
    assert "lesson slow: command trigger 'a*a*a*a*b' gave up after 15 ms of `re` in this call" in log
