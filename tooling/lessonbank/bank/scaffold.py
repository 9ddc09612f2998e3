"""`bank init` and `bank schedule`: a new bank's files (never overwritten) and its weekly groom.

`init` writes bank.toml, the lessons/ and rules/ folders, the .gitignore line for the state
folder and the generated INDEX.md and BANK.md. The weekly groom is scheduled from here too, as
text that runs the `bank groom` command (no import of `groom`): the GitHub Actions workflow
`bank init --ci` writes, and the crontab line `bank schedule` prints, on one shared schedule.
It imports `bank.render` (jinja2, only where a file is rendered: `bank schedule` needs none),
`bank.store`, `config` and `errors`.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

from lessonbank.bank.store import Bank, write_atomic
from lessonbank.config import default_toml
from lessonbank.errors import BankError
from lessonbank.state import statedir

STATE_IGNORE = ".lessonbank/"
CRON = "0 6 * * 1"
WORKFLOW = ".github/workflows/bank-groom.yml"


def init(root: Path, ci: bool = False, dry_run: bool = False) -> list[tuple[str, str]]:
    """Scaffold a bank at `root`; return (relative path, action) with exists for files left alone."""
    results: list[tuple[str, str]] = []
    for rel, text in (("bank.toml", default_toml()), ("lessons/.gitkeep", ""), ("rules/.gitkeep", "")):
        target = root / rel
        results.append((rel, "exists" if target.exists() else write_atomic(target, text, dry_run)))
    results.append((".gitignore", ignore_state(root, dry_run)))
    if not dry_run:
        from lessonbank.bank import render

        bank = Bank.open(root)
        for name, action in render.regenerate(bank):
            if name in render.GENERATED:
                results.append((name, action))
    if ci:
        results.append((WORKFLOW, write_ci_workflow(root, dry_run=dry_run)))
    return results


def ignore_state(root: Path, dry_run: bool) -> str:
    """Make sure git ignores the bank's local state folder (session state, logs, caches)."""
    path = root / ".gitignore"
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    if any(line.strip() in (STATE_IGNORE, ".lessonbank", "/.lessonbank/") for line in text.splitlines()):
        return "unchanged"
    if text and not text.endswith("\n"):
        text += "\n"
    return write_atomic(path, text + STATE_IGNORE + "\n", dry_run)


def workflow_text(root: Path) -> str:
    """The GitHub Actions workflow that grooms weekly on a branch and opens a pull request."""
    from lessonbank.bank import render

    bank_templates = root / "templates"
    env = render.environment(bank_templates)
    env.filters["gha"] = lambda expr: "${{ " + str(expr) + " }}"
    context = {
        "cron": CRON,
        "install": install_source(root) or "lessonbank",
        "branch_prefix": "bank-groom/",
    }
    return render.render_template(env, "groom-workflow.yml.j2", context).rstrip("\n") + "\n"


def install_source(root: Path) -> str:
    """What the groom workflow installs: `groom.install` from bank.toml, `-e .` in lessonbank's own
    repository, else "" (unknown: lessonbank is not on PyPI, so a plain `lessonbank` would fail)."""
    from lessonbank.config import parse

    toml = root / "bank.toml"
    if toml.is_file():
        configured = parse(toml.read_text(encoding="utf-8"), str(toml)).get("groom.install")
        if configured:
            return str(configured)
    pyproject = root / "pyproject.toml"
    dogfood = pyproject.is_file() and 'name = "lessonbank"' in pyproject.read_text(encoding="utf-8")
    return "-e ." if dogfood else ""


def install_hint(direct_url: str | None = None) -> str:
    """What to set groom.install to, read from how this lessonbank was installed (PEP 610), for `bank init --ci`."""
    import json
    from importlib import metadata

    try:
        text = direct_url if direct_url is not None else metadata.distribution("lessonbank").read_text("direct_url.json")
        data = json.loads(text or "{}")
    except (metadata.PackageNotFoundError, ValueError):
        data = {}
    url, vcs = str(data.get("url") or ""), data.get("vcs_info") or {}
    if vcs.get("vcs") == "git" and url:
        ref = vcs.get("commit_id") or vcs.get("requested_revision") or ""
        return f'set groom.install = "git+{url}{"@" + ref if ref else ""}" in bank.toml (how this copy was installed)'
    if url.startswith("file://"):
        return (f"this copy was installed from a local folder ({url.removeprefix('file://')}), which the runner "
                'cannot reach: set groom.install in bank.toml to a git URL, e.g. "git+https://github.com/<you>/lessonbank@v0.1.0"')  # fmt: skip
    return 'set groom.install in bank.toml to a git URL, e.g. "git+https://github.com/<you>/lessonbank@v0.1.0"'


def write_ci_workflow(root: Path, dry_run: bool = False) -> str:
    """Write .github/workflows/bank-groom.yml: create, unchanged, or exists (a changed file is kept)."""
    target = (root / WORKFLOW).resolve()
    if root.resolve() not in target.parents:
        raise BankError(f"{WORKFLOW} leads outside {root}")
    text = workflow_text(root)
    if target.exists() and write_atomic(target, text, dry_run=True) != "unchanged":
        return "exists"  # like `bank init`, never overwrite what a person may have edited
    return write_atomic(target, text, dry_run=dry_run)


def crontab_line(root: Path, python: str | None = None) -> str:
    """The crontab line that grooms this bank weekly on a dated branch, logging to the state folder."""
    exe = shlex.quote(python or sys.executable)
    where = shlex.quote(str(root))
    # cron treats a bare % as a newline: each one is escaped.
    branch = '"bank-groom/$(date +\\%Y-\\%m-\\%d)"'
    return f"{CRON} cd {where} && {exe} -m lessonbank groom --branch {branch} >> {statedir.STATE}/{statedir.GROOM_LOG} 2>&1"
