"""Helpers for the layer tests: team banks as bare git repositories in tmp_path, and a colleague's clone of one."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner, Result

from lessonbank.bank import lesson, render
from lessonbank.bank.store import Bank
from lessonbank.cli import main
from lessonbank.index import layers
from tests.conftest import git


def cli(*args: str, input: str | None = None) -> Result:
    """`bank ARGS…` (no --root) through CliRunner; exceptions propagate."""
    return CliRunner().invoke(main, list(args), input=input, catch_exceptions=False)


def team_remote(tmp_path: Path, name: str, lessons: list[lesson.Lesson] = ()) -> tuple[Path, Path]:  # type: ignore[assignment]
    """(bare repository, a colleague's working clone of it) holding a bank with `lessons`, pushed to main."""
    bare = tmp_path / f"{name}.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    work = tmp_path / f"{name}-colleague"
    git(tmp_path, "clone", "-q", str(bare), str(work))
    result = CliRunner().invoke(main, ["init", str(work)])
    assert result.exit_code == 0, result.output
    publish(work, lessons, "a team bank")
    return bare, work


def publish(work: Path, lessons: list[lesson.Lesson], message: str) -> None:
    """Write `lessons` into the colleague's clone, regenerate, commit everything and push main."""
    for item in lessons:
        (work / "lessons" / f"{item.slug}.md").write_text(lesson.render(item), encoding="utf-8")
    render.regenerate(Bank.open(work))
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", message)
    git(work, "push", "-q", "origin", "HEAD:main")


def merge_branch(work: Path, branch: str) -> None:
    """The colleague merges a pushed branch into main (what merging its pull request does)."""
    git(work, "fetch", "-q", "origin")
    git(work, "merge", "-q", "--no-edit", f"origin/{branch}")
    git(work, "push", "-q", "origin", "HEAD:main")


def clone_of(name: str) -> Path:
    """Where `bank remote add NAME` clones to."""
    data = layers.data_dir()
    assert data is not None
    return Path(layers.team_root(data, name))
