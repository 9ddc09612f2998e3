"""The scheduled groom's workflow, run as a runner runs it: its `run:` steps in bash with the env it sets.

The repository is a clone of a local bare origin; `gh` is a stub on PATH that records its
arguments; `bank` is this package. Expressions are given the values GitHub would give, step
outputs are read from $GITHUB_OUTPUT, and a step's `if:` is honoured. The install step is left
out (the package is already installed) and so are the `uses:` steps (the clone is the checkout).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from lessonbank.bank.scaffold import WORKFLOW, crontab_line, write_ci_workflow
from tests.conftest import git, run
from tests.groom.groom_support import golden

RUN_ID = "4242"
STUB_GH = '#!/bin/sh\nfor a in "$@"; do printf "%s\\n" "$a"; done > "$GH_LOG"\necho "https://github.com/o/r/pull/7"\n'


def expression(expr: str, outputs: dict[str, dict[str, str]]) -> str:
    expr = expr.strip()
    step = re.fullmatch(r"steps\.(\w+)\.outputs\.(\w+)", expr)
    if step:
        return outputs.get(step.group(1), {}).get(step.group(2), "")
    return {"github.run_id": RUN_ID, "github.token": "job-token"}[expr]


def substitute(text: str, outputs: dict[str, dict[str, str]]) -> str:
    return re.sub(r"\$\{\{(.*?)\}\}", lambda m: expression(m.group(1), outputs), text)


def condition(text: str, outputs: dict[str, dict[str, str]]) -> bool:
    left, op, right = re.fullmatch(r"(.+?)\s*(!=|==)\s*'(.*)'", text.strip()).groups()  # type: ignore[union-attr]
    value = expression(left, outputs)
    return value != right if op == "!=" else value == right


def run_workflow(root: Path, tmp: Path) -> tuple[list[str], dict[str, dict[str, str]]]:
    """Run the workflow's steps in `root`; return what each printed and the step outputs."""
    stubs = tmp / "bin"
    stubs.mkdir(exist_ok=True)
    (stubs / "gh").write_text(STUB_GH)
    (stubs / "gh").chmod(0o755)
    env = {**os.environ, "PATH": f"{stubs}:{Path(sys.executable).parent}:{os.environ['PATH']}",
           "GH_LOG": str(tmp / "gh.log")}  # fmt: skip
    env.pop("LESSONBANK_DISCOVER", None)
    steps: list[dict[str, Any]] = yaml.safe_load((root / WORKFLOW).read_text())["jobs"]["groom"]["steps"]
    outputs: dict[str, dict[str, str]] = {}
    printed = []
    for n, step in enumerate(steps):
        if "run" not in step or step.get("name") == "Install lessonbank":
            continue
        if "if" in step and not condition(step["if"], outputs):
            printed.append(f"skipped: {step['name']}")
            continue
        output_file = tmp / f"output-{n}"
        output_file.write_text("")
        step_env = {k: substitute(str(v), outputs) for k, v in (step.get("env") or {}).items()}
        done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]], cwd=root,
                              env={**env, **step_env, "GITHUB_OUTPUT": str(output_file)}, capture_output=True, text=True)  # fmt: skip
        assert done.returncode == 0, f"{step['name']}: {done.stdout}\n{done.stderr}"
        printed.append(done.stdout)
        if step.get("id"):
            outputs[step["id"]] = dict(line.split("=", 1) for line in output_file.read_text().splitlines() if "=" in line)
    return printed, outputs


@pytest.fixture
def clone(tmp_path: Path, bank: Path) -> Path:
    """The bank's repository pushed to a local bare origin, with the workflow `bank init --ci` writes."""
    origin = tmp_path / "origin.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(origin)], check=True)
    assert write_ci_workflow(bank) == "create"
    git(bank, "remote", "add", "origin", str(origin))
    git(bank, "add", "-A")
    git(bank, "commit", "-q", "-m", "bank and its workflow")
    git(bank, "push", "-q", "origin", "main")
    return bank


def test_the_scheduled_groom_pushes_its_branch_and_opens_a_pull_request(clone: Path, tmp_path: Path) -> None:
    for session in ("s1", "s2"):
        done = run(clone, "capture", "--when", "editing the project readme", "--do", "keep README.md under 300 lines",
                   "--promote-to", "rule:docs", "--session", session)  # fmt: skip
        assert done.exit_code == 0, done.output
    git(clone, "add", "-A")
    git(clone, "commit", "-q", "-m", "a lesson seen twice")
    git(clone, "push", "-q", "origin", "main")
    printed, outputs = run_workflow(clone, tmp_path)
    branch = f"bank-groom/{datetime.now(UTC):%Y-%m-%d}-{RUN_ID}"
    assert outputs["groom"] == {"branch": branch}
    pushed = git(tmp_path / "origin.git", "log", "-1", "--format=%s", branch).strip()
    assert pushed == "bank groom: promote 1, delete 0, review 0"
    assert git(clone, "branch", "--show-current").strip() == "main"  # the checkout itself never moved
    args = (tmp_path / "gh.log").read_text().splitlines()
    assert args[:6] == ["pr", "create", "--head", branch, "--title", pushed]
    assert args[6] == "--body" and "editing-the-project-readme -> rules/docs.md: seen in 2 sessions; re-verified: verify.paths 1 of 1 tracked" in "\n".join(args[7:])


def test_nothing_to_groom_opens_no_pull_request(clone: Path, tmp_path: Path) -> None:
    printed, outputs = run_workflow(clone, tmp_path)
    assert outputs["groom"] == {}
    assert "bank groom changed nothing: no pull request" in printed[0]
    assert printed[-1] == "skipped: Open a pull request"
    assert not (tmp_path / "gh.log").exists()
    assert git(tmp_path / "origin.git", "branch", "--list", "bank-groom/*") == ""


def test_the_workflow_pins_its_actions_and_keeps_no_credentials(tmp_path: Path) -> None:
    write_ci_workflow(tmp_path)
    data = yaml.safe_load((tmp_path / WORKFLOW).read_text())
    uses = [s["uses"] for s in data["jobs"]["groom"]["steps"] if "uses" in s]
    assert all(re.fullmatch(r"actions/[\w-]+@[0-9a-f]{40}", u) for u in uses), uses
    assert data["jobs"]["groom"]["steps"][0]["with"]["persist-credentials"] is False
    assert data["permissions"] == {} and set(data["jobs"]["groom"]["permissions"]) == {"contents", "pull-requests"}


def test_schedule_prints_the_crontab_line(bank: Path) -> None:
    result = run(bank, "schedule")
    assert result.output == crontab_line(bank) + "\n"
    assert result.output == (
        f"0 6 * * 1 cd {bank} && {sys.executable} -m lessonbank groom "
        '--branch "bank-groom/$(date +\\%Y-\\%m-\\%d)" >> .lessonbank/groom.log 2>&1\n'
    )


def test_the_ci_workflow_is_written_once_and_a_hand_edit_is_kept(tmp_path: Path) -> None:
    assert write_ci_workflow(tmp_path, dry_run=True) == "create"
    assert not (tmp_path / ".github").exists()
    assert write_ci_workflow(tmp_path) == "create"
    assert write_ci_workflow(tmp_path) == "unchanged"
    path = tmp_path / ".github" / "workflows" / "bank-groom.yml"
    text = path.read_text()
    path.write_text(text.replace("0 6 * * 1", "0 5 * * 2"))
    assert write_ci_workflow(tmp_path) == "exists"
    assert "0 5 * * 2" in path.read_text()
    golden("bank-groom.yml", text)
    data = yaml.safe_load(text)
    assert data[True]["schedule"] == [{"cron": "0 6 * * 1"}]  # YAML 1.1 reads `on` as true
    steps = data["jobs"]["groom"]["steps"]
    assert 'bank groom --branch "$branch"' in steps[3]["run"]
    assert steps[4]["env"]["GH_TOKEN"] == "${{ github.token }}"
