"""`bank init`: the groom workflow installs lessonbank from where it really comes from."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from lessonbank.bank import scaffold
from lessonbank.cli import main

URL = "git+https://example.invalid/team/lessonbank@v0.1.0"


def install_line(root: Path) -> str:
    text = (root / scaffold.WORKFLOW).read_text(encoding="utf-8")
    return next(line.strip() for line in text.splitlines() if "pip install" in line)


def test_the_workflow_installs_what_groom_install_names(tmp_path: Path) -> None:
    (tmp_path / "bank.toml").write_text(f'[groom]\ninstall = "{URL}"\n', encoding="utf-8")
    scaffold.init(tmp_path, ci=True)
    assert install_line(tmp_path) == f"run: python -m pip install {URL}"


def test_lessonbanks_own_repository_installs_itself(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "lessonbank"\n', encoding="utf-8")
    assert scaffold.install_source(tmp_path) == "-e ."


def test_init_ci_says_when_the_install_source_is_unknown(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["init", str(tmp_path), "--ci"])
    assert result.exit_code == 0, result.output
    assert (
        "note: .github/workflows/bank-groom.yml installs `lessonbank`, which is not on PyPI: point its "
        "Install step at a git URL (or set groom.install in bank.toml before `bank init --ci`)"
    ) in result.output.splitlines()
    assert install_line(tmp_path) == "run: python -m pip install lessonbank"


def test_init_ci_is_quiet_once_the_source_is_set(tmp_path: Path) -> None:
    (tmp_path / "bank.toml").write_text(f'[groom]\ninstall = "{URL}"\n', encoding="utf-8")
    result = CliRunner().invoke(main, ["init", str(tmp_path), "--ci"])
    assert result.exit_code == 0, result.output
    assert "note:" not in result.output
