"""What agents write in text: exit statuses and Gemini's hook-context blocks."""

from __future__ import annotations

import pytest

from lessonbank.matching import exit_status


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("fix the tests", "fix the tests"),
        ("<hook_context>lessonbank: …</hook_context>\nfix the tests", "fix the tests"),
        ("a <hook_context>x</hook_context> b <hook_context>y</hook_context> c", "a  b  c"),
        ("<hook_context>never closed", "<hook_context>never closed"),
    ],
)
def test_gemini_hook_context_blocks_are_taken_out(text: str, expected: str) -> None:
    assert exit_status.without_hook_context(text) == expected
