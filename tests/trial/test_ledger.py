"""The records read and joined, the ledger summary and the trial's commands, over hand-written hook state."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from lessonbank.bank import frontmatter_edit
from lessonbank.bank.store import Bank
from lessonbank.cli import main
from lessonbank.errors import BankError
from lessonbank.kernel import arms as trial
from lessonbank.kernel import records
from lessonbank.kernel import statedir as hot_state
from lessonbank.trial import ledger, turns

PYTEST = [
    "--title", "pytest needs no randomly", "--when", "running pytest in this project",
    "--do", "pass -p no:randomly because the suite depends on test order", "--promote-to", "rule:testing",
    "--keywords", "pytest", "--trigger-tool", "Bash", "--trigger-command", r"\bpytest\b",
]  # fmt: skip
RUFF = [
    "--title", "ruff fix first", "--when", "linting with ruff check",
    "--do", "run ruff check --fix first and read only what remains", "--promote-to", "rule:lint",
    "--keywords", "ruff", "--trigger-tool", "Bash", "--trigger-command", r"\bruff\b",
]  # fmt: skip
DOCKER = [
    "--title", "compose needs the profile", "--when", "starting services with docker compose",
    "--do", "pass --profile dev or the worker service is left out", "--promote-to", "rule:docker",
    "--keywords", "compose",
]  # fmt: skip
HELM = [
    "--title", "helm chart version bump", "--when", "releasing a chart to the cluster",
    "--do", "bump the chart version together with the app version", "--promote-to", "rule:ops",
    "--keywords", "helm",
]  # fmt: skip


def cli(root: Path, *args: str, code: int = 0) -> str:
    result = CliRunner().invoke(main, ["--root", str(root), *args])
    assert result.exit_code == code, result.output
    return result.output


@pytest.fixture
def root(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    assert CliRunner().invoke(main, ["init", str(path)], catch_exceptions=False).exit_code == 0
    for flags in (PYTEST, RUFF, DOCKER, HELM):
        cli(path, "capture", *flags)
    helm = path / "lessons/helm-chart-version-bump.md"
    helm.write_text(frontmatter_edit.set_scalar(helm.read_text(encoding="utf-8"), "status", "disabled"), "utf-8")
    return path


def injection(
    session: str, turn: str, lesson: str, arm: str = "on", size: int = 100, **extra: object
) -> dict:
    row = {"session": session, "turn": turn, "lesson": lesson, "event": "PreToolUse", "bytes": size}
    return {**row, "arm": arm, "injected": arm != "without", **extra}


def check(turn: str, command: str, ok: bool, call: str = "") -> dict:
    return {"turn": turn, "command": command, "check": command.split()[0], "ok": ok, "tool_use_id": call}


def write_state(root: Path, rows: list[dict], checks: dict[str, list[dict]], extra_lines: str = "") -> None:
    state = root / ".lessonbank"
    state.mkdir(exist_ok=True)
    text = "".join(json.dumps(r) + "\n" for r in rows) + extra_lines
    (state / "ledger.jsonl").write_text(text, encoding="utf-8")
    for session, items in checks.items():
        folder = state / "sessions" / hot_state.safe_name(session)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "checks.jsonl").write_text("".join(json.dumps(c) + "\n" for c in items), encoding="utf-8")


def test_ledger_summary(root: Path) -> None:
    rows = [
        injection("s/1", "t1", "pytest-needs-no-randomly", size=120),
        injection("s/1", "t1", "ruff-fix-first", size=80),
        injection("s/1", "t2", "ruff-fix-first", arm="without", size=80),
        injection("s2", "u1", "pytest-needs-no-randomly", size=121, tool_use_id="call-9"),
    ]
    checks = {
        # s/1 (folder s_1): pytest failed after its lesson in t1 (matched by the lesson's trigger).
        "s/1": [
            check("t1", "pytest -q", False),
            check("t1", "pytest -q", True),
            check("t2", "ruff check", False),
        ],
        # s2: the very call the lesson was injected for failed.
        "s2": [check("u1", "python -m pytest", False, "call-9")],
    }
    write_state(root, rows, checks, extra_lines='{"torn": \n')
    assert cli(root, "ledger") == (
        "mode: on\n"
        "injected: 3 lesson texts, 321 bytes, ~81 tokens (estimated as bytes/4); "
        "logged only (trial's without arm): 1\n"
        "per lesson (injected / logged only / bytes / sessions / same check failed after):\n"
        "  pytest-needs-no-randomly: 2 / 0 / 241 / 2 / 2 of 2 turns\n"
        "  ruff-fix-first: 1 / 1 / 80 / 1 / 0 of 1 turns\n"
        "per session (injected / bytes / ~tokens / logged only):\n"
        "  s/1: 2 / 200 / ~50 / 1\n"
        "  s2: 1 / 121 / ~31 / 0\n"
        "never fired (1): compose-needs-the-profile\n"
        "skipped 1 unreadable line(s) in the local state\n"
    )
    data = json.loads(cli(root, "ledger", "--json"))
    assert (data["injected"], data["bytes"], data["tokens_estimate"], data["logged_only"]) == (3, 321, 81, 1)
    assert data["tokens_estimate_method"] == "bytes/4"
    assert data["never_fired"] == ["compose-needs-the-profile"]
    assert ledger.flagged_lessons(Bank.open(root)) == {
        "pytest-needs-no-randomly": "the check it is about still failed after it in 2 of the 2 turns it was injected in"
    }


def test_the_trial_reads_the_records_through_the_hooks_reader(root: Path) -> None:
    rows = [injection("s1", "t1", "ruff-fix-first"), {**injection("s1", "t2", "ruff-fix-first"), "bytes": "12"}]
    bad = ["[1, 2]", json.dumps({"session": "s1", "turn": "t3"}), json.dumps({**rows[0], "bytes": "many"})]
    write_state(
        root,
        rows,
        {"s1": [check("t1", "ruff check", False), {"turn": "t1", "check": "ruff"}, check("t1", "ruff", True)]},
        extra_lines="\n".join(["", *bad, "{torn"]) + "\n",
    )
    the_bank = Bank.open(root)
    read, skipped = turns.read_ledger(the_bank)
    assert skipped == 4  # blank lines are not counted
    assert [(r.turn, r.bytes, r.tool_use_id) for r in read] == [("t1", 100, ""), ("t2", 12, "")]
    assert [dataclasses.asdict(r) for r in read] == records.read_ledger(str(the_bank.state_dir))[0]
    assert [f.name for f in dataclasses.fields(turns.Injection)] == [f[0] for f in records.LEDGER_FIELDS]
    assert [f.name for f in dataclasses.fields(turns.CheckRun)][1:] == [f[0] for f in records.CHECK_FIELDS]
    runs, skipped = turns.read_checks(the_bank)
    assert (len(runs), skipped) == (2, 1)
    assert records.recovered([(r.check, r.ok) for r in runs]) == ["ruff"]


def test_a_record_file_that_cannot_be_read_stops_the_command(root: Path) -> None:
    (root / ".lessonbank" / "ledger.jsonl").mkdir(parents=True)
    with pytest.raises(BankError, match="cannot read .*ledger.jsonl"):
        turns.read_ledger(Bank.open(root))
    assert "cannot read" in cli(root, "ledger", code=1)


def test_trial_turns_join_assignments_checks_and_ledger(root: Path) -> None:
    state = str(root / ".lessonbank")
    rows, checks = [], {}
    # Lesson pytest: with arm worse (2 failures a turn) than without (none), 5 turns each.
    for n in range(10):
        session = f"session {n}"
        arm = trial.assign(state, session, "p")
        rows.append(injection(session, "p", "pytest-needs-no-randomly", arm=arm))
        failed = 2 if arm == "with" else 0
        checks[session] = [check("p", "pytest -q", False) for _ in range(failed)] + [
            check("p", "pytest -q", True)
        ]
    write_state(root, rows, checks)
    the_bank = Bank.open(root)
    joined = turns.trial_turns(the_bank)
    assert [(t.session, t.order) for t in joined] == [(f"session {n}", n) for n in range(10)]
    assert all(t.recovered == (t.arm == "with") for t in joined)
    assert all(t.lessons == ("pytest-needs-no-randomly",) for t in joined)
    assert ledger.flagged_lessons(the_bank) == {
        "pytest-needs-no-randomly": "with-arm does worse: 2.00 failed checks per turn with it (5 turns) "
        "vs 0.00 without (5 turns); the check it is about still failed after it in 5 of the 5 turns "
        "it was injected in"
    }
    report = cli(root, "trial", "report")
    assert "  pytest-needs-no-randomly: with 5 turns 2.00, without 5 turns 0.00  FLAG" in report
    assert (
        "1 lesson(s) flagged (flags need 5+ turns in each arm and 20% more failed checks per turn with the lesson)."
        in report
    )


def test_modes_and_a_running_trial_keeps_its_seed(root: Path) -> None:
    assert cli(root, "trial", "status") == (
        "mode: on\n"
        "trial: no effect — 0 turns with, 0 without; too few turns: with has 0, without has 0; "
        "the rule needs 30 in each arm\n"
    )
    assert cli(root, "on", "--dry-run") == (
        "create    .lessonbank/mode\n"
        "mode: on (was on): lessons are learned and injected (the default) (dry run: nothing written)\n"
    )
    assert not (root / ".lessonbank/mode").exists()
    assert cli(root, "test") == (
        "create    .lessonbank/trial/settings\n"
        "create    .lessonbank/mode\n"
        "mode: test (was on): each turn a lesson fits goes to the with or the without arm; "
        "without gets nothing, only a log\n"
        "trial: seed 20261129, permuted blocks of 2; no turns assigned yet; "
        "`bank trial status` shows the verdict so far\n"
    )
    assert ledger.read_mode(Bank.open(root)) == "test"
    trial.assign(str(root / ".lessonbank"), "s", "t")
    (root / "bank.toml").write_text("[trial]\nseed = 99\nblock_size = 6\n", encoding="utf-8")
    assert cli(root, "test").splitlines()[0] == "unchanged .lessonbank/mode"
    assert "trial: seed 20261129, permuted blocks of 2; resuming with 1 turns already assigned" in cli(
        root, "test"
    )
    assert cli(root, "off").startswith("update    .lessonbank/mode\nmode: off (was test)")
    (root / ".lessonbank/mode").write_text("sideways\n", encoding="utf-8")
    assert ledger.read_mode(Bank.open(root)) == "on"  # as the hooks read it


def test_report_chart_must_be_svg_and_json_is_strict(root: Path, tmp_path: Path) -> None:
    out = cli(root, "trial", "report", "--chart", str(tmp_path / "c.png"), code=2)
    assert "only SVG charts are written" in out
    chart = tmp_path / "c.svg"
    assert cli(root, "trial", "report", "--chart", str(chart), "--dry-run").endswith(
        f"create    {chart} (dry run: nothing written)\n"
    )
    assert not chart.exists()
    state = str(root / ".lessonbank")
    rows, arms = [], []
    for n in range(4):
        arms.append(trial.assign(state, "s", str(n)))
        rows.append(injection("s", str(n), "ruff-fix-first", arm=arms[-1]))
    # Two failures with, none without: an infinite rate ratio becomes the string "inf".
    failing = [n for n in range(4) if arms[n] == "with"]
    write_state(root, rows, {"s": [check(str(n), "ruff check", False) for n in failing]})
    data = json.loads(cli(root, "trial", "report", "--json", "--chart", str(chart)))
    assert data["rate_ratio"]["estimate"] == "inf" and data["rate_ratio"]["high"] == "inf"
    assert data["chart"] == {"path": str(chart), "action": "create"}
    assert data["rule"]["min_turns_per_arm"] == 30 and data["rule"]["min_relative_drop"] == 0.2
    assert chart.read_text(encoding="utf-8").count("<polyline") == 2


def test_groom_reports_the_lessons_the_ledger_flags(root: Path) -> None:
    import subprocess

    rows = [injection("s1", str(n), "pytest-needs-no-randomly") for n in range(2)]
    write_state(root, rows, {"s1": [check(str(n), "pytest -q", False) for n in range(2)]})
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "bank"]):
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)
    out = cli(root, "groom", "--dry-run")
    assert (
        "flagged: pytest-needs-no-randomly: the check it is about still failed after it in 2 of the 2 "
        "turns it was injected in\n"
    ) in out


@pytest.mark.parametrize(
    ("text", "mode"), [("test\n", "test"), ("Test", "test"), (" OFF ", "off"), ("maybe", "on")]
)
def test_the_cli_reads_the_mode_as_the_hooks_do(root: Path, text: str, mode: str) -> None:
    (root / ".lessonbank").mkdir(exist_ok=True)
    (root / ".lessonbank" / "mode").write_text(text, encoding="utf-8")
    assert ledger.read_mode(Bank.open(root)) == hot_state.mode(str(root / ".lessonbank")) == mode
