"""Nothing a repository holds is imported by a hook's child process: a top-level `click.py`,
`yaml.py`, `git/` or `jinja2/`, PYTHONPATH pointing into it, or a PYTHONSTARTUP script."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from lessonbank.hooks import child, discover
from tests.hook_support import CALC_LESSON, HOOK, lesson, make_bank, payload

SHADOWS = ("click.py", "yaml.py", "frontmatter.py", "git/__init__.py", "jinja2/__init__.py", "lessonbank/__init__.py")


@pytest.fixture
def hostile(tmp_path: Path) -> tuple[Path, Path]:
    """(a bank whose repository shadows every dependency with code that leaves a mark, the mark)."""
    root = tmp_path / "repo"
    make_bank(root, [lesson("something-else", commands=["make"])])
    mark = tmp_path / "ran"
    for name in SHADOWS:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"open({str(mark)!r}, 'a').write({name!r} + '\\n')\n", encoding="utf-8")
    (root / "startup.py").write_text(f"open({str(mark)!r}, 'a').write('startup\\n')\n", encoding="utf-8")
    return root, mark


def _env(root: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(root), "PYTHONSTARTUP": str(root / "startup.py"), "PYTHONSAFEPATH": ""}


def test_capture_at_stop_imports_nothing_from_the_repository(hostile: tuple[Path, Path]) -> None:
    root, mark = hostile
    data = payload("Stop", root, last_assistant_message="Fixed it.\n\n" + CALC_LESSON)
    done = subprocess.run(HOOK, input=json.dumps(data).encode(), capture_output=True, timeout=120, cwd=root, env=_env(root))
    assert done.returncode == 0, done.stderr
    assert not mark.exists(), mark.read_text()
    assert len(list((root / "lessons").glob("*.md"))) == 2  # the block was captured by the real CLI


def test_the_scheduled_scan_imports_nothing_from_the_repository(hostile: tuple[Path, Path]) -> None:
    root, mark = hostile
    done = subprocess.run(
        discover.command(str(root)), capture_output=True, timeout=120, cwd=root, env=child.environment() | {
            "PYTHONPATH": str(root), "PYTHONSTARTUP": str(root / "startup.py")}, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert not mark.exists(), mark.read_text()


def test_the_child_environment_carries_no_python_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", "/somewhere")
    monkeypatch.setenv("PYTHONHOME", "/elsewhere")
    assert not [k for k in child.environment() if k.startswith("PYTHON")]
    assert child.command("list")[1] == "-I"


def test_a_template_cache_committed_in_the_repository_is_never_loaded(tmp_path: Path) -> None:
    """Jinja loads its bytecode cache as code: one planted under .lessonbank/ must never be read."""
    import jinja2

    from lessonbank.bank import render
    from lessonbank.bank.store import Bank

    root = tmp_path / "repo"
    make_bank(root, [lesson("something-else", commands=["make"])])
    mark = tmp_path / "ran"
    planted = root / ".lessonbank" / "compiled-templates"
    planted.mkdir(parents=True, exist_ok=True)
    # The bytecode the old layout would have loaded for each packaged template: code that leaves a mark.
    env = render.environment(root / "templates")
    cache = jinja2.FileSystemBytecodeCache(str(planted))
    for name in env.list_templates():
        source, filename, _ = env.loader.get_source(env, name)  # type: ignore[union-attr]
        bucket = cache.get_bucket(env, name, filename, source)
        bucket.code = compile(f"open({str(mark)!r}, 'a').write('ran')", filename, "exec")
        cache.set_bucket(bucket)
    (root / "lessons" / "something-else.md").write_text(
        (root / "lessons" / "something-else.md").read_text(encoding="utf-8") + "\nchanged\n", encoding="utf-8"
    )
    render.regenerate(Bank.open(root))
    assert not mark.exists()


@pytest.mark.parametrize(
    ("xdg", "home"),
    [("rel", "/nonexistent-home"), ("", "rel-home"), ("rel", "rel-home"), ("./rel", "/nonexistent-home")],
)
def test_the_committed_command_never_runs_a_launcher_the_repository_holds(tmp_path: Path, xdg: str, home: str) -> None:
    """A relative XDG_DATA_HOME or HOME is looked up nowhere: the shell in the repository would
    otherwise run the repository's own `rel/lessonbank/bank-hook`; the command exits 0, silent."""
    from lessonbank.install import launcher

    mark = tmp_path / "ran"
    for folder in ("rel/lessonbank", "rel-home/.local/share/lessonbank"):
        hook = tmp_path / folder / launcher.NAME
        hook.parent.mkdir(parents=True)
        hook.write_text(f"#!/bin/sh\necho ran >> {mark}\n", encoding="utf-8")
        hook.chmod(0o755)
    env = {"PATH": os.environ["PATH"], "HOME": home, **({"XDG_DATA_HOME": xdg} if xdg else {})}
    done = subprocess.run(["/bin/sh", "-c", launcher.COMMAND + " claude PreToolUse"], cwd=tmp_path, env=env, capture_output=True, timeout=30)
    assert (done.returncode, done.stdout, mark.exists()) == (0, b"", False)


def test_the_committed_command_runs_the_users_launcher(tmp_path: Path) -> None:
    """An absolute XDG_DATA_HOME, and else HOME's .local/share: the launcher there runs, with the agent and event."""
    from lessonbank.install import launcher

    for env_of, folder in (({"XDG_DATA_HOME": str(tmp_path / "data")}, tmp_path / "data"), ({}, tmp_path / "home/.local/share")):
        hook = folder / "lessonbank" / launcher.NAME
        hook.parent.mkdir(parents=True)
        hook.write_text('#!/bin/sh\necho "$@"\n', encoding="utf-8")
        hook.chmod(0o755)
        env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path / "home"), **env_of}
        done = subprocess.run(["/bin/sh", "-c", launcher.COMMAND + " claude PreToolUse"], cwd=tmp_path, env=env, capture_output=True, timeout=30)
        assert (done.returncode, done.stdout) == (0, b"claude PreToolUse\n")


def test_capture_s_git_calls_run_no_fsmonitor_or_hook_a_folder_configures(tmp_path: Path) -> None:
    """A folder's own .git/config (not carried by a clone, but by a folder unpacked or copied) can
    name an fsmonitor command `git ls-files` would start: capture's calls switch it off."""
    from lessonbank.capture import repository

    root = tmp_path / "repo"
    root.mkdir()
    mark = tmp_path / "ran"
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    (root / "a.txt").write_text("x\n", encoding="utf-8")
    subprocess.run(["git", "add", "a.txt"], cwd=root, check=True)
    monitor = root / "monitor.sh"
    monitor.write_text(f"#!/bin/sh\necho ran >> {mark}\n", encoding="utf-8")
    monitor.chmod(0o755)
    subprocess.run(["git", "config", "core.fsmonitor", str(monitor)], cwd=root, check=True)
    assert repository.tracked(root) == frozenset({"a.txt"})
    assert repository.contains(root, "x") is True
    assert not mark.exists()


def test_capture_reads_no_tracked_link_nor_fifo(tmp_path: Path) -> None:
    from lessonbank.capture import repository

    root = tmp_path / "repo"
    root.mkdir()
    (tmp_path / "secret.txt").write_text("outside\n", encoding="utf-8")
    os.symlink(tmp_path / "secret.txt", root / "link.txt")
    os.mkfifo(root / "fifo.txt")
    (root / "plain.txt").write_text("inside\n", encoding="utf-8")
    assert [repository.read(root, name) for name in ("link.txt", "fifo.txt", "plain.txt")] == [None, None, "inside\n"]
