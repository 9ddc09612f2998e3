"""`bank` starts on what it needs: `--help` imports no command module, `list` only the bank reader."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import click
import pytest

from lessonbank import cli
from lessonbank.bank import scaffold

# Runs `bank ARGS` as the console script does, then prints the modules it loaded on the last line.
SCRIPT = """
import json, sys
from lessonbank.cli import main
code = 0
try:
    main(sys.argv[1:], prog_name="bank")
except SystemExit as exc:
    code = exc.code
print("\\nMODULES " + json.dumps(sorted(sys.modules)))
sys.exit(code)
"""
HEAVY = ("git", "jinja2", "yaml", "frontmatter", "markdown_it", "numpy")


def loaded(args: list[str], cwd: Path) -> tuple[str, set[str]]:
    """(what `bank ARGS` printed, the modules it imported)."""
    env = dict(os.environ, COLUMNS="80")  # help text 78 wide, as in the comparison below
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, *args], cwd=cwd, capture_output=True, text=True, env=env
    )
    assert done.returncode == 0, done.stderr
    text, _, modules = done.stdout.rpartition("\nMODULES ")
    return text, set(json.loads(modules))


def _top(modules: set[str]) -> set[str]:
    return {name.partition(".")[0] for name in modules}


def test_help_imports_no_command_module_and_nothing_heavy(tmp_path: Path) -> None:
    text, modules = loaded(["--help"], tmp_path)
    assert "list      List the lessons as a table." in text
    assert sorted(m for m in modules if m.startswith("lessonbank.")) == [
        "lessonbank.cli",
        "lessonbank.cli.summaries",
    ]
    # answered before click is imported
    assert not _top(modules) & {*HEAVY, "click"}


@pytest.mark.parametrize("args", [["--help"], ["-h"], ["--version"]])
def test_the_quick_answers_are_clicks_to_the_byte(tmp_path: Path, args: list[str]) -> None:
    """`--help`, `-h` and `--version` answered without click print what click prints."""
    from click.testing import CliRunner

    from lessonbank.cli import app

    quick, modules = loaded(args, tmp_path)
    assert "click" not in _top(modules)
    done = CliRunner().invoke(app.main, args, prog_name="bank", terminal_width=78)
    assert done.exit_code == 0
    assert quick == done.output


def test_help_at_another_width_is_clicks_own(tmp_path: Path) -> None:
    env = dict(os.environ, COLUMNS="60")
    done = subprocess.run([sys.executable, "-c", SCRIPT, "--help"], cwd=tmp_path, capture_output=True, text=True, env=env)
    text, _, modules = done.stdout.rpartition("\nMODULES ")
    assert done.returncode == 0 and "click" in _top(set(json.loads(modules)))
    assert "list      List the lessons as a table." in text
    assert max(len(line) for line in text.splitlines()) <= 58


def test_list_on_an_empty_bank_loads_the_lessons_reader_only(tmp_path: Path) -> None:
    scaffold.init(tmp_path)
    text, modules = loaded(["list"], tmp_path)
    assert "(none)" in text
    assert "lessonbank.bank.store" in modules and "lessonbank.cli.commands" in modules
    assert not _top(modules) & {"git", "jinja2", "frontmatter", "markdown_it", "numpy"}
    packages = {".".join(m.split(".")[:2]) for m in modules if m.startswith("lessonbank.")}
    assert not packages & {"lessonbank.capture", "lessonbank.scan", "lessonbank.groom", "lessonbank.trial"}
    assert not {m for m in modules if m.startswith("lessonbank.cli.")} - {
        "lessonbank.cli.app",
        "lessonbank.cli.commands",
        "lessonbank.cli.output",
    }


@pytest.mark.parametrize("args", [["schedule"], ["config"]])
def test_light_commands_load_no_gitpython_nor_jinja2(tmp_path: Path, args: list[str]) -> None:
    scaffold.init(tmp_path)
    _, modules = loaded(args, tmp_path)
    assert not _top(modules) & {"git", "jinja2", "numpy"}


def test_the_generated_help_is_current() -> None:
    from lessonbank.cli import helptext

    assert helptext.TARGET.read_text(encoding="utf-8") == helptext.source(), (
        "a command's docstring or options changed: run `python -m lessonbank.cli.helptext`"
    )


def test_the_help_summaries_are_the_commands_own(tmp_path: Path) -> None:
    from lessonbank.cli import app, summaries

    lazy, _ = loaded(["--help"], tmp_path)
    ctx = click.Context(app.main, info_name="bank", terminal_width=78, help_option_names=["-h", "--help"])
    for name in cli.COMMANDS:
        command = app.main.get_command(ctx, name)
        assert command is not None
        first = (command.help or "").split("\n\n")[0].strip()
        assert " ".join(first.split()) == summaries.SUMMARIES[name]
    assert set(summaries.SUMMARIES) == set(cli.COMMANDS)
    # With every module imported, click's own listing says the same.
    assert app.main.get_help(ctx).strip() == lazy.strip()


@pytest.mark.parametrize("args", [["list"], ["stats"], ["check"]])
def test_whole_bank_commands_on_an_unchanged_bank_parse_nothing(tmp_path: Path, args: list[str]) -> None:
    """The derived cache answers: no lesson is parsed, so neither YAML nor Jinja is even imported."""
    from tests.hook_support import lesson, make_bank

    make_bank(
        tmp_path,
        [
            lesson("cached-one", id="01JBQX0000000000000000000A", commands=[r"\bmake\b"]),
            lesson("cached-two", id="01JBQX0000000000000000000B"),
        ],
    )
    subprocess.run([sys.executable, "-m", "lessonbank", "list"], cwd=tmp_path, check=True, capture_output=True)
    text, modules = loaded(args, tmp_path)
    assert "cached-one" in text or "2 lesson file(s)" in text or "lessons: 2" in text
    assert not _top(modules) & {"yaml", "jinja2", "git"}
    assert "lessonbank.bank.lesson" not in modules
