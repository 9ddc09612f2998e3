"""A bank.toml that cannot be read stops a command in one line; the hooks warn and use the defaults, alike."""

from __future__ import annotations

from pathlib import Path

from tests.attacks.attack_support import capture
from tests.conftest import run
from tests.hook_support import bash, context, lesson, make_bank
from tests.hook_support import run as hook


def test_a_non_utf8_bank_toml_is_one_line_for_commands_and_a_warning_for_hooks(bank: Path) -> None:
    capture(bank, "running the test suite here", "pass -q to pytest", "--trigger-command", "pytest")
    (bank / "bank.toml").write_bytes(b"# caf\xe9\n[recall]\nmax_lessons = 1\n")
    listed = run(bank, "list")
    assert listed.exit_code == 1
    assert listed.output == f"Error: {bank / 'bank.toml'}:1: not UTF-8 text (byte 0xe9); save it as UTF-8\n"
    warning = "bank.toml:1: not UTF-8 text; save it as UTF-8; the hooks use the default settings"
    debug = run(bank, "hook", "PreToolUse", "--command", "pytest -x")
    assert debug.exit_code == 0
    assert debug.output.startswith(f"warning: {warning}\n")
    assert "running-the-test-suite-here" in debug.output
    assert "running-the-test-suite-here" in context(hook(bash(bank, "pytest -x")))
    log = (bank / ".lessonbank" / "hook.log").read_text(encoding="utf-8")
    assert log.count("\n") == 1 and log.rstrip().endswith(f"config: {warning}")


def test_the_hook_and_bank_hook_apply_the_same_broken_settings_the_same_way(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    rows = [lesson(f"make-{n}", commands=["make"], priority=9 - n) for n in range(4)]
    make_bank(root, rows, toml="[recall]\nmax_lessons = 1\n")
    (root / "bank.toml").write_text('[recall]\nmax_lessons = "two"\n', encoding="utf-8")
    debug = run(root, "hook", "PreToolUse", "--command", "make all")
    assert debug.output.startswith("warning: bank.toml: recall.max_lessons must be a whole number, got 'two'")
    handed = context(hook(bash(root, "make all")))
    assert handed.count("- [make-") == 3  # the default max_lessons, not 1 and not nothing
    assert debug.output.count("- [make-") == 3
