"""bank.inert: `@` imports and raw HTML broken in lesson text, code and ordinary prose left alone."""

from __future__ import annotations

import pytest

from lessonbank.bank.inert import code_span, inert


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("see @/etc/passwd now", "see \\@/etc/passwd now"),
        ("@~/.ssh/id_rsa", "\\@~/.ssh/id_rsa"),
        ("(@README.md)", "(\\@README.md)"),
        ("line one\n@docs/x.md", "line one\n\\@docs/x.md"),
        ("<!-- hides the rest", "\\<!-- hides the rest"),
        ("<script>alert(1)</script>", "\\<script>alert(1)\\</script>"),
        ("<details><summary>x", "\\<details>\\<summary>x"),
        ("<?php", "\\<?php"),
        ("<!DOCTYPE html>", "\\<!DOCTYPE html>"),
        # already escaped: one backslash is enough; an escaped backslash does not escape the '<'
        ("\\<b>", "\\<b>"),
        ("\\\\<b>", "\\\\\\<b>"),
    ],
)
def test_imports_and_html_are_broken(text: str, expected: str) -> None:
    assert inert(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "mail ops@example.com first",
        "x < y and y > z",
        "a <= b, a <- b",
        "run `git log @{u}` and `<!-- x`",
        "```\n@/etc/passwd <script>\n```",
        "~~~sh\ncat <<EOF\n~~~",
        "plain prose, no markup",
        "a lone @ sign",
    ],
)
def test_code_and_prose_stay(text: str) -> None:
    assert inert(text) == text


def test_text_after_a_fence_is_escaped_again() -> None:
    assert inert("```\n@a\n```\n@b <i>") == "```\n@a\n```\n\\@b \\<i>"


@pytest.mark.parametrize(
    ("text", "expected"),
    [("ls -la", "`ls -la`"), ("a`b", "``a`b``"), ("`x", "`` `x ``"), ("a\nb", "`a b`")],
)
def test_code_span_holds_any_backticks(text: str, expected: str) -> None:
    assert code_span(text) == expected
