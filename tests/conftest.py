"""Shared fixtures: no test writes to the real $HOME or data folder, and git runs with an isolated identity."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from lessonbank.cli import main

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"


# The user's folders every test points elsewhere (the per-test values are set by isolated_home).
USER_FOLDERS = ("HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME")


@pytest.fixture(autouse=True, scope="session")
def isolated_session_home(tmp_path_factory: pytest.TempPathFactory) -> object:
    """The same isolation for module- and session-scoped fixtures, which run before isolated_home
    (a `bank install` there writes this machine's hook launcher into the user's data folder)."""
    home = tmp_path_factory.mktemp("session-home")
    saved = {k: os.environ.get(k) for k in USER_FOLDERS}
    os.environ.update(
        HOME=str(home), XDG_DATA_HOME=str(home / ".local/share"), XDG_CACHE_HOME=str(home / ".cache"),
        XDG_CONFIG_HOME=str(home / ".config"), XDG_STATE_HOME=str(home / ".local/state"),
    )
    yield home
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


@pytest.fixture(autouse=True)
def isolated_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """HOME and git's global config point into a temporary folder for every test."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    # The personal and team banks (index.layers) live under the data folder: in HOME here too.
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    # The secrets gate keeps detect-secrets' table in the user cache folder: in HOME too.
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    # The user's own settings (consent to run a command a bank.toml names, for one): in HOME too.
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_STATE_HOME", str(home / ".local" / "state"))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Test Author")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "author@example.invalid")
    monkeypatch.setenv("GIT_COMMITTER_NAME", "Test Author")
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", "author@example.invalid")
    monkeypatch.delenv("BANK_ROOT", raising=False)
    # No SessionStart in a test starts a background scan; tests/hooks/test_discover.py turns it on.
    monkeypatch.setenv("LESSONBANK_DISCOVER", "off")
    return home


def git(cwd: Path, *args: str) -> str:
    """Run git in `cwd` and return its stdout; fail the test on a non-zero exit."""
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, env=os.environ.copy())
    assert done.returncode == 0, f"git {' '.join(args)} failed: {done.stderr}"
    return done.stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A fresh git repository with one commit."""
    root = tmp_path / "project"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "README.md").write_text("# project\n", encoding="utf-8")
    git(root, "add", "README.md")
    git(root, "commit", "-q", "-m", "initial")
    return root


def run(root: Path, *args: str, input: str | None = None) -> Result:
    """`bank --root ROOT ARGS…` through click's CliRunner; exceptions propagate."""
    return CliRunner().invoke(main, ["--root", str(root), *args], input=input, catch_exceptions=False)


@pytest.fixture
def bank(repo: Path) -> Path:
    """A git repository with a fresh bank made by `bank init`."""
    result = CliRunner().invoke(main, ["init", str(repo)])
    assert result.exit_code == 0, result.output
    return repo
