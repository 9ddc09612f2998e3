"""A command a repository's bank.toml names is never run on its say-so: only the user's own config
or an explicit flag can name it, and it is shown before it runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import run
from tests.e2e.test_distill_e2e import transcript


@pytest.fixture
def agent(tmp_path: Path) -> tuple[Path, Path]:
    """(a fake headless agent that leaves a mark and finds no lesson, the mark)."""
    mark = tmp_path / "ran"
    script = tmp_path / "fake-agent"
    script.write_text(f"#!/bin/sh\ntouch {mark}\necho 'no lesson'\n", encoding="utf-8")
    script.chmod(0o755)
    return script, mark


def _pending(bank: Path, tmp_path: Path) -> None:
    run(bank, "scan", "--path", str(transcript(tmp_path)))


def test_a_command_named_by_bank_toml_is_refused_and_never_runs(bank: Path, tmp_path: Path, agent: tuple[Path, Path]) -> None:
    script, mark = agent
    _pending(bank, tmp_path)
    (bank / "bank.toml").write_text(f'[scan]\ndistill_command = "{script} -p"\n', encoding="utf-8")
    result = run(bank, "review", "--distill", "--list")
    assert result.exit_code == 1
    assert result.output.startswith(f"Error: bank.toml asks --distill to run `{script} -p`; a repository cannot choose")
    assert f"--distill-with '{script} -p'" in result.output
    assert not mark.exists()


def test_the_flag_names_the_command_and_it_is_shown_before_it_runs(bank: Path, tmp_path: Path, agent: tuple[Path, Path]) -> None:
    script, mark = agent
    _pending(bank, tmp_path)
    result = run(bank, "review", "--distill-with", f"{script} -p", "--list")
    assert result.exit_code == 0, result.output
    assert f"distill: running `{script} -p <prompt>` (from --distill-with) for 1 candidate(s)" in result.output
    assert mark.exists()


def test_the_users_own_config_is_consent(bank: Path, tmp_path: Path, agent: tuple[Path, Path], isolated_home: Path) -> None:
    script, mark = agent
    _pending(bank, tmp_path)
    (bank / "bank.toml").write_text(f'[scan]\ndistill_command = "{script} -p"\n', encoding="utf-8")
    config = isolated_home / ".config" / "lessonbank" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(f'[scan]\ndistill_command = "{script} -p"\n', encoding="utf-8")
    result = run(bank, "review", "--distill", "--list")
    assert result.exit_code == 0, result.output
    assert "(from ~/.config/lessonbank/config.toml)" in result.output
    assert mark.exists()
