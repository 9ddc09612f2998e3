"""The records read and joined, the ledger summary and the trial's commands, over hand-written hook state."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from lessonbank.bank import frontmatter_edit
from lessonbank.bank.store import Bank
from lessonbank.cli import main
from lessonbank.errors import BankError
from lessonbank.state import arms, records, statedir
from lessonbank.trial import ledger, report, turns

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
    helm.write_text(
        frontmatter_edit.set_scalar(helm.read_text(encoding="utf-8"), "status", "disabled"), "utf-8"
    )
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
        folder = state / "sessions" / statedir.safe_name(session)
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
    rows = [
        injection("s1", "t1", "ruff-fix-first"),
        {**injection("s1", "t2", "ruff-fix-first"), "bytes": "12"},
    ]
    bad = ["[1, 2]", json.dumps({"session": "s1", "turn": "t3"}), json.dumps({**rows[0], "bytes": "many"})]
    write_state(
        root,
        rows,
        {
            "s1": [
                check("t1", "ruff check", False),
                {"turn": "t1", "check": "ruff"},
                check("t1", "ruff", True),
            ]
        },
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


def test_trial_records_join_assignments_checks_and_ledger(root: Path) -> None:
    state = str(root / ".lessonbank")
    rows, checks = [], {}
    for n in range(10):
        session = f"session {n}"
        arm = arms.assign(state, session)
        # Turn p: the lesson fits; with lessons pytest fails twice and then passes, without it passes.
        rows.append(injection(session, "p", "pytest-needs-no-randomly", arm=arm))
        failed = 2 if arm == "with" else 0
        checks[session] = [check("p", "pytest -q", False) for _ in range(failed)] + [
            check("p", "pytest -q", True)
        ]
        # Turn q: no lesson fits, ruff fails and is left failing.
        checks[session] += [check("q", "ruff check", False)]
    arms.assign(state, "never fitted")  # assigned at SessionStart, but no lesson ever fitted it
    checks["never fitted"] = [check("p", "pytest -q", False)]
    rows.append(injection("not in the trial", "p", "ruff-fix-first"))
    arms.assign(state, "spans bank on")  # in the trial, but also handed lessons in `on` mode
    rows += [
        injection("spans bank on", "p", "ruff-fix-first", arm="without"),
        injection("spans bank on", "q", "ruff-fix-first"),
    ]
    write_state(root, rows, checks)
    the_bank = Bank.open(root)
    joined = turns.trial_records(the_bank)
    arm_of = dict(turns.assignments(the_bank))
    assert [(r.session, r.turn) for r in joined] == [(f"session {n}", t) for n in range(10) for t in "pq"]
    for record in joined:
        assert record.arm == arm_of[record.session]
        if record.turn == "p":
            with_arm = record.arm == "with"
            assert (record.checks, record.failed, record.ended_failing) == (
                3 if with_arm else 1,
                2 if with_arm else 0,
                False,
            )
            assert record.lessons == ("pytest-needs-no-randomly",)
        else:
            assert (record.checks, record.failed, record.ended_failing, record.lessons) == (1, 1, True, ())
    # Ten sessions are short of any planned size: no harm test, only the same-failure flag.
    n = sum(1 for n in range(10) if arm_of[f"session {n}"] == "with")
    assert ledger.flagged_lessons(the_bank) == {
        "pytest-needs-no-randomly": f"the check it is about still failed after it in {n} of the {n} turns it was injected in"
    }
    exported = cli(root, "trial", "export").splitlines()
    assert [json.loads(line) for line in exported] == [r.to_json() for r in joined]
    assert json.loads(exported[0]) == {
        "session": "session 0", "turn": "p", "arm": arm_of["session 0"], "checks": joined[0].checks,
        "failed": joined[0].failed, "ended_failing": False, "lessons": ["pytest-needs-no-randomly"],
    }  # fmt: skip
    document = json.loads(cli(root, "trial", "export", "--json"))
    assert document == {"planned": 60, "records": [r.to_json() for r in joined]}


def test_modes_start_resume_and_reset_are_logged(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seeds = iter([1111, 2222])
    monkeypatch.setattr(arms, "fresh_seed", lambda: next(seeds))
    assert cli(root, "trial", "status") == (
        "mode: on\ntrial: collecting 0/60 sessions with lessons, 0/60 without; no verdict before 60 in each arm\n"
    )
    assert cli(root, "on", "--dry-run") == (
        "create    .lessonbank/mode\n"
        "mode: on (was on): lessons are learned and injected (the default) (dry run: nothing written)\n"
    )
    assert not (root / ".lessonbank/mode").exists()
    assert cli(root, "test", "--planned", "29", code=1) == (
        "Error: the planned size must be at least 30 sessions in each arm, got 29\n"
    )
    out = cli(root, "test", "--planned", "30")
    assert out.splitlines()[:4] == [
        "create    .lessonbank/trial/settings",
        "create    .lessonbank/mode",
        "mode: test (was on): each new session goes to the with or the without arm; without gets no lessons, only a log",
        "trial: started, planned 30 sessions in each arm; a fresh random seed (kept in .lessonbank/trial/settings, "
        "not shown) and blocks of 2, 4 or 6 sessions",
    ]
    assert "1111" not in out
    assert out.splitlines()[4:] == report.power_lines(30)
    assert "  <- this trial" in out.splitlines()[6] and out.splitlines()[6].split()[0] == "30"
    assert (root / ".lessonbank/trial/settings").read_text(encoding="utf-8") == "seed=1111\nplanned=30\n"
    assert ledger.read_mode(Bank.open(root)) == "test"
    arms.assign(str(root / ".lessonbank"), "s")
    assert cli(root, "test", "--planned", "40", code=1) == (
        "Error: the running trial was planned for 30 sessions in each arm and keeps that size; "
        "`bank trial reset --planned 40` archives it and starts a new trial\n"
    )
    assert cli(root, "test") == (
        "unchanged .lessonbank/mode\n"
        "mode: test (was test): each new session goes to the with or the without arm; without gets no lessons, "
        "only a log\n"
        "trial: resuming, planned 30 sessions in each arm, 1 sessions assigned so far; `bank trial status` "
        "shows how far it is\n"
    )
    assert cli(root, "off").startswith("update    .lessonbank/mode\nmode: off (was test)")
    assert cli(root, "trial", "reset", "--planned", "45") == (
        "archive   .lessonbank/trial/archive/1\n"
        "create    .lessonbank/trial/settings\n"
        "trial: a new trial, planned 45 sessions in each arm, with a fresh seed; mode: off\n"
        "(sessions are assigned only in test mode: `bank test` runs it)\n"
    )
    folder = root / ".lessonbank/trial"
    assert sorted(p.name for p in (folder / "archive/1").iterdir()) == [
        "assignments.tsv",
        "count",
        "lock",
        "session-arms",
        "settings",
    ]
    assert (folder / "settings").read_text(encoding="utf-8") == "seed=2222\nplanned=45\n"
    assert turns.assignments(Bank.open(root)) == []
    log = ledger.read_log(Bank.open(root))
    digest = hashlib.sha256(b"1111").hexdigest()[:16]
    assert [{k: v for k, v in row.items() if k != "at"} for row in log] == [
        {"event": "start", "planned": 30, "seed_sha256": digest},
        {"event": "mode", "mode": "test", "was": "on"},
        {"event": "mode", "mode": "test", "was": "test"},
        {"event": "mode", "mode": "off", "was": "test"},
        {"event": "reset", "archived": ".lessonbank/trial/archive/1", "sessions": 1},
        {"event": "start", "planned": 45, "seed_sha256": hashlib.sha256(b"2222").hexdigest()[:16]},
    ]
    assert all(row["at"].endswith("Z") for row in log)
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
    rows, assigned = [], []
    for n in range(8):
        assigned.append(arms.assign(state, f"s{n}"))
        rows.append(injection(f"s{n}", "t", "ruff-fix-first", arm=assigned[-1]))
    # Failures with lessons, none without: an infinite ratio becomes the string "inf".
    write_state(root, rows, {f"s{n}": [check("t", "ruff check", assigned[n] == "without")] for n in range(8)})
    data = json.loads(cli(root, "trial", "report", "--json", "--chart", str(chart)))
    assert (data["verdict"], data["ratio"], data["drop"], data["p"], data["interval"]) == (
        "collecting",
        "inf",
        None,
        None,
        None,
    )
    assert data["chart"] == {"path": str(chart), "action": "create"}
    assert data["rule"]["min_planned"] == 30 and data["rule"]["min_drop"] == 0.2
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
    assert ledger.read_mode(Bank.open(root)) == statedir.mode(str(root / ".lessonbank")) == mode
