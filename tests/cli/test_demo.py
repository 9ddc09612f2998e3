"""`bank demo` end to end: every feature's step runs on the bundled example."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from lessonbank.cli import main


def test_demo_runs_every_step(tmp_path: Path) -> None:
    root = tmp_path / "demo"
    result = CliRunner().invoke(main, ["demo", "--dir", str(root)])
    assert result.exit_code == 0, result.output
    headers = [ln for ln in result.output.splitlines() if ln[:2] in {f"{n}." for n in range(1, 10)}]
    assert headers == [
        "1. Capture through the gates",
        "2. Recall: the hooks, as Claude Code runs them",
        "3. Scan: lessons from an old transcript",
        "4. Groom: a lesson seen in two sessions graduates into a rule",
        "5. Proof: an on/off trial through the real hooks, and the ledger",
    ]
    assert "redacted before writing: 1 stripe key" in result.output
    assert "groom again: nothing to change" in result.output
    assert result.output.endswith(f"The demo bank is at {root.resolve()}: try `cd {root.resolve()} && bank list`.\n")
    assert not (root / ".lessonbank" / "hook.log").exists()


def test_demo_refuses_a_folder_that_is_not_empty(tmp_path: Path) -> None:
    (tmp_path / "x").write_text("mine", encoding="utf-8")
    result = CliRunner().invoke(main, ["demo", "--dir", str(tmp_path)])
    assert result.exit_code == 1
    assert result.output == f"Error: {tmp_path} is not empty: pass a new folder to `bank demo --dir`\n"
