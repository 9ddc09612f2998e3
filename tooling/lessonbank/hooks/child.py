"""The `bank` command run from a hook (the scheduled scan, capture at Stop), isolated from the repository.

The hook runs in whatever repository the agent opened, so the child must import nothing from it:
`python -I` (no current folder or script folder on sys.path, no user site-packages, no PYTHON*
variables read) with this installation's own `tooling` folder put first, and every PYTHON*
variable dropped from the environment it passes on. A top-level `click.py`, `yaml.py` or `git/`
in the repository (GitPython's own repository has one) is never imported.
"""

# Run by the child: this installation's package first on sys.path, then the `bank` command.
BOOT = "import sys; sys.path.insert(0, sys.argv.pop(1)); from lessonbank.cli import main; main(prog_name='bank')"


def tooling() -> str:
    """The folder holding this installation's `lessonbank` package."""
    return __file__.rpartition("/")[0].rpartition("/")[0].rpartition("/")[0] or "."


def command(*args: str) -> list[str]:
    """argv running `bank ARGS…` with this interpreter and package, isolated."""
    import sys

    return [sys.executable, "-I", "-c", BOOT, tooling(), *args]


def environment() -> dict[str, str]:
    """This process's environment without any PYTHON* variable."""
    import os

    return {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
