"""A payload of any size is cut before matching, and the hook still answers."""

from __future__ import annotations

from pathlib import Path

from lessonbank.hooks import dispatch
from tests.hook_support import bash, context, lesson, make_bank, payload
from tests.hook_support import run as hook


def test_a_50_mb_payload_is_cut_before_matching_and_still_answered(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    make_bank(root, [lesson("pytest-quiet", commands=[r"pytest(?!.*-q)"], paths=["**/*.py"], keywords=["pytest"])])
    big = "a" * 50_000_000
    assert "pytest-quiet" in context(hook(bash(root, "pytest " + big)))
    edit = payload("PreToolUse", root, tool_name="Edit", session_id="s2", tool_input={"file_path": f"{root}/{big}.py"})
    assert hook(edit).returncode == 0


def test_the_cut_keeps_the_first_max_text_characters_of_what_is_matched() -> None:
    internal = {"tool_input": {"command": "x" * (dispatch.MAX_TEXT + 5), "n": 3}, "prompt": "p" * (dispatch.MAX_TEXT * 2)}
    dispatch.cut(internal)
    assert internal == {"tool_input": {"command": "x" * dispatch.MAX_TEXT, "n": 3}, "prompt": "p" * dispatch.MAX_TEXT}
