"""`bank init`: the groom workflow installs lessonbank from where it really comes from."""

from __future__ import annotations

from pathlib import Path

import pytest
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
        "note: .github/workflows/bank-groom.yml installs `lessonbank`, which is not on PyPI: "
        f"{scaffold.install_hint()}, then delete the workflow and run `bank init --ci` again (or edit its Install step)"
    ) in result.output.splitlines()
    assert install_line(tmp_path) == "run: python -m pip install lessonbank"


@pytest.mark.parametrize(
    ("direct_url", "hint"),
    [
        ('{"url": "https://github.com/acme/lessonbank", "vcs_info": {"vcs": "git", "commit_id": "0123abc"}}',
         'set groom.install = "git+https://github.com/acme/lessonbank@0123abc" in bank.toml (how this copy was installed)'),
        ('{"url": "file:///src/lessonbank", "dir_info": {"editable": true}}',
         "this copy was installed from a local folder (/src/lessonbank), which the runner cannot reach: set "
         'groom.install in bank.toml to a git URL, e.g. "git+https://github.com/<you>/lessonbank@v0.1.0"'),
        ("", 'set groom.install in bank.toml to a git URL, e.g. "git+https://github.com/<you>/lessonbank@v0.1.0"'),
    ],
)
def test_init_ci_says_what_to_set_from_how_lessonbank_was_installed(direct_url: str, hint: str) -> None:
    assert scaffold.install_hint(direct_url) == hint


def test_init_ci_is_quiet_once_the_source_is_set(tmp_path: Path) -> None:
    (tmp_path / "bank.toml").write_text(f'[groom]\ninstall = "{URL}"\n', encoding="utf-8")
    result = CliRunner().invoke(main, ["init", str(tmp_path), "--ci"])
    assert result.exit_code == 0, result.output
    assert "note:" not in result.output
