"""The on/off trial end to end: synthetic sessions through the real hook processes, spawned as installed.

A turn's trigger (a prompt or a Bash call a lesson fits) goes through the installed hook command,
which assigns the arm; the turn's checks are then drawn from a seeded RNG with that arm's failure
probability and fed back through the PostToolUse / PostToolUseFailure hooks.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from click.testing import CliRunner

from lessonbank.bank.store import Bank
from lessonbank.cli import main
from lessonbank.kernel import arms as trial
from lessonbank.kernel import statedir as state
from lessonbank.trial import ledger, simulate, turns
from lessonbank.trial import stats as v

# (slug, capture flags); the trigger of the turn that fits each, and the check that turn runs.
LESSONS = {
    "pytest-needs-no-randomly": [
        "--title", "pytest needs no randomly", "--when", "running pytest in this project",
        "--do", "pass -p no:randomly because the suite depends on test order",
        "--promote-to", "rule:testing", "--tags", "tool:pytest", "--keywords", "pytest,randomly",
        "--trigger-tool", "Bash", "--trigger-command", r"\bpytest\b",
    ],
    "ruff-fix-first": [
        "--title", "ruff fix first", "--when", "linting with ruff check",
        "--do", "run ruff check --fix first and read only what remains",
        "--promote-to", "rule:lint", "--tags", "tool:ruff", "--keywords", "ruff,lint",
        "--trigger-tool", "Bash", "--trigger-command", r"\bruff\b",
    ],
    "mypy-needs-the-stubs": [
        "--title", "mypy needs the stubs", "--when", "type-checking with mypy",
        "--do", "install types-PyYAML before mypy or it reports missing imports",
        "--promote-to", "rule:types", "--tags", "tool:mypy", "--keywords", "mypy,stubs",
        "--trigger-tool", "Bash", "--trigger-command", r"\bmypy\b",
    ],
    "start-postgres-first": [
        "--title", "start postgres first", "--when", "the database fixture times out",
        "--do", "start the local postgres with make db before running the suite",
        "--promote-to", "rule:database", "--tags", "area:database",
        "--keywords", "database,fixture,postgres",
    ],
    "compose-needs-the-profile": [
        "--title", "compose needs the profile", "--when", "starting services with docker compose",
        "--do", "pass --profile dev or the worker service is left out",
        "--promote-to", "rule:docker", "--tags", "tool:docker", "--keywords", "compose,profile",
        "--trigger-tool", "Bash", "--trigger-command", r"\bdocker\s+compose\b",
    ],
}  # fmt: skip
TRIGGERS = (
    (simulate.Trigger("PreToolUse", "pytest -q", "pytest -q"), "pytest-needs-no-randomly"),
    (simulate.Trigger("PreToolUse", "ruff check src", "ruff check src"), "ruff-fix-first"),
    (simulate.Trigger("PreToolUse", "mypy src", "mypy src"), "mypy-needs-the-stubs"),
    (
        simulate.Trigger("UserPromptSubmit", "the database fixture times out again", "pytest -q tests/db"),
        "start-postgres-first",
    ),
)
EXPECTED = {trigger: slug for trigger, slug in TRIGGERS}
# The design below, checked by test_design_power: 3 checks a turn that fail 90% of the time without
# lessons; 20 sessions of 4 fitted turns give 40 turns an arm.
FAIL_WITHOUT = 0.9
EFFECT_SESSIONS, EFFECT_CHECKS = 20, 3
NULL_SESSIONS, NULL_CHECKS = 16, 2


def bank(project: Path, *args: str) -> str:
    """Run `bank --root PROJECT ARGS` in process; fail the test on a non-zero exit; its output."""
    result = CliRunner().invoke(main, ["--root", str(project), *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def make_project(root: Path, slugs: list[str], extra: dict[str, list[str]] | None = None) -> Path:
    """A git project with a bank holding the given lessons and lessonbank's hooks installed."""
    root.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=root, check=True)
    CliRunner().invoke(main, ["init", str(root)], catch_exceptions=False)
    for slug in slugs:
        assert f"lessons/{slug}.md" in bank(root, "capture", *LESSONS[slug])
    for flags in (extra or {}).values():
        bank(root, "capture", *flags)
    bank(root, "install", "claude")
    return root


@pytest.fixture
def project(tmp_path: Path) -> Path:
    # A space in the path: the installed command must quote it.
    return make_project(tmp_path / "my project", list(LESSONS))


def run_trial(project: Path, sessions: int, checks: int, fail_with: float, seed: int) -> simulate.Run:
    bank(project, "test")
    names = [f"session-{i:02d}" for i in range(sessions)]
    fail = {"with": fail_with, "without": FAIL_WITHOUT}
    return simulate.simulate(project, names, [t for t, _ in TRIGGERS], fail, checks, seed)


def check_arms_and_ledger(project: Path, run: simulate.Run) -> None:
    """Balance, silence in the without arm, would-be injections logged, ledger totals = hook output."""
    the_bank = Bank.open(project)
    log = the_bank.state_dir / "hook.log"
    assert not log.exists(), log.read_text(encoding="utf-8")
    assert [t for t in run.turns if not t.arm] == []
    arms = [arm for _, _, arm in turns.assignments(the_bank)]
    assert len(arms) == len(run.turns)
    assert Counter(arms) == {"with": len(arms) // 2, "without": len(arms) // 2}
    # Permuted blocks of 2 (the default): the arms are balanced within one turn at every point.
    drift = [abs(arms[:n].count("with") - arms[:n].count("without")) for n in range(len(arms) + 1)]
    assert max(drift) <= 1
    rows, skipped = turns.read_ledger(the_bank)
    assert skipped == 0
    by_turn: dict[str, list[turns.Injection]] = {}
    for row in rows:
        by_turn.setdefault(row.turn, []).append(row)
    trigger_of = {t.text: t for t, _ in TRIGGERS}
    emitted_lessons, emitted_bytes = 0, 0
    for call in run.calls:
        turn = next(t for t in run.turns if t.turn == call.turn)
        if turn.arm == "without" or call.event.startswith("Post"):
            assert call.stdout == "", call  # the without arm gets no context at all
            continue
        shown = simulate.emitted(call.stdout)
        text = call.payload.get("prompt") or call.payload["tool_input"]["command"]
        assert [slug for slug, _ in shown] == [EXPECTED[trigger_of[text]]]
        assert [(r.lesson, r.bytes, r.injected, r.arm) for r in by_turn[call.turn]] == [
            (slug, size, True, "with") for slug, size in shown
        ]
        emitted_lessons += len(shown)
        emitted_bytes += sum(size for _, size in shown)
    for turn in run.turns:
        assert turn.arm in ("with", "without")
        if turn.arm == "without":
            (row,) = by_turn[turn.turn]
            assert (row.arm, row.injected, row.bytes > 0) == ("without", False, True)
    summary = json.loads(bank(project, "ledger", "--json"))
    assert (summary["injected"], summary["bytes"]) == (emitted_lessons, emitted_bytes)
    assert summary["logged_only"] == arms.count("without")
    assert summary["tokens_estimate"] == -(-emitted_bytes // 4)
    assert summary["never_fired"] == ["compose-needs-the-profile"]
    # The hooks recorded every simulated check against the turn's arm.
    judged, _ = ledger.judge(the_bank)
    for arm, totals in (("with", judged.with_arm), ("without", judged.without_arm)):
        outcomes = [c for t in run.turns if t.arm == arm for c in t.checks]
        assert (totals.checks, totals.failed) == (len(outcomes), outcomes.count(False))


def test_a_true_30_percent_drop_is_found(project: Path, tmp_path: Path) -> None:
    run = run_trial(project, EFFECT_SESSIONS, EFFECT_CHECKS, fail_with=0.7 * FAIL_WITHOUT, seed=11)
    check_arms_and_ledger(project, run)
    chart = tmp_path / "trial.svg"
    out = bank(project, "trial", "report", "--chart", str(chart))
    print(out)  # the figures quoted in the README come from this report (pytest -s)
    assert "Verdict: LESSONS HELP" in out
    assert "  with        40 turns" in out and "  without     40 turns" in out
    assert "bank off" not in out
    assert out.rstrip().endswith(f"create    {chart}")
    assert chart.read_text(encoding="utf-8").startswith("<svg")
    status = bank(project, "trial", "status").splitlines()
    assert status[0] == "mode: test"
    assert status[1].startswith(
        "trial: lessons help — 40 turns with, 40 without; failed checks per turn are "
    )
    data = json.loads(bank(project, "trial", "report", "--json"))
    assert data["decision"] == v.HELP
    assert (
        data["rate_ratio"]["high"] is not None and data["rate_ratio"]["low"] < data["rate_ratio"]["estimate"]
    )


def test_no_true_effect_gives_no_effect_and_says_bank_off(project: Path) -> None:
    run = run_trial(project, NULL_SESSIONS, NULL_CHECKS, fail_with=FAIL_WITHOUT, seed=12)
    check_arms_and_ledger(project, run)
    out = bank(project, "trial", "report")
    print(out)
    assert "Verdict: NO EFFECT" in out
    assert "  with        32 turns" in out and "  without     32 turns" in out
    assert "No effect is claimed, so the honest move is `bank off`." in out
    assert v.RULE in out


@pytest.mark.parametrize(("drop", "claims", "at_least"), [(0.3, v.HELP, 0.93), (0.0, v.NO_EFFECT, 0.99)])
def test_design_power(drop: float, claims: str, at_least: float) -> None:
    """The effect run's design without hook processes: how often the rule gets each case right."""
    right = 0
    arms = [
        trial.arm_at(trial.DEFAULT_SEED, trial.DEFAULT_BLOCK, n)
        for n in range(EFFECT_SESSIONS * len(TRIGGERS))
    ]
    for seed in range(400):
        rng = random.Random(seed)
        made = []
        for n, arm in enumerate(arms):
            p = FAIL_WITHOUT * (1 - drop) if arm == "with" else FAIL_WITHOUT
            failed = sum(rng.random() < p for _ in range(EFFECT_CHECKS))
            made.append(v.Turn("s", str(n), arm, n, EFFECT_CHECKS, failed))
        with_arm = v.arm_totals(t for t in made if t.arm == "with")
        without_arm = v.arm_totals(t for t in made if t.arm == "without")
        right += v.apply_rule(with_arm, without_arm)[0] == claims
    assert right / 400 >= at_least


TOOLS = ("alembic", "terraform", "helm", "kubectl", "ansible", "packer", "vagrant", "bazel")
WHENS = (
    "upgrading the database schema",
    "planning infrastructure changes",
    "releasing a chart to the cluster",
    "applying manifests by hand",
    "running playbooks against staging",
    "baking machine images",
    "booting the local virtual machines",
    "building every target at once",
)
DOS = (
    "stamp the head revision before generating anything new",
    "refresh remote state and read the whole plan aloud",
    "bump the chart version together with the app version",
    "pass the namespace explicitly, the default one is shared",
    "limit hosts with --limit so production stays untouched",
    "pin the base image digest instead of a floating tag",
    "halt old boxes first because ports collide silently",
    "use remote caching, local builds take an hour",
)


def test_parallel_hook_processes_of_one_turn_get_one_arm(tmp_path: Path) -> None:
    extra = {
        tool: [
            "--title", f"{tool} gotcha", "--when", when, "--do", do, "--promote-to", "rule:ops",
            "--tags", f"tool:{tool}", "--keywords", tool, "--trigger-tool", "Bash",
            "--trigger-command", rf"\b{tool}\b",
        ]
        for tool, when, do in zip(TOOLS, WHENS, DOS, strict=True)
    }  # fmt: skip
    project = make_project(tmp_path / "parallel", [], extra)
    bank(project, "test")
    hooks = simulate.commands(project)
    outputs: dict[str, list[str]] = {}
    with ThreadPoolExecutor(max_workers=8) as pool:
        for number in range(6):
            session, turn = f"parallel-{number}", f"parallel-{number}-prompt"
            sent = [
                simulate.bash_payload(
                    "PreToolUse", session, turn, project, f"{tool} --version", f"call-{tool}"
                )
                for tool in TOOLS
            ]
            outputs[turn] = list(pool.map(lambda p: simulate.spawn(hooks, p, project), sent))
    the_bank = Bank.open(project)
    assigned = {turn: arm for _, turn, arm in turns.assignments(the_bank)}
    assert sorted(assigned) == sorted(outputs) and set(assigned.values()) == {"with", "without"}
    rows, _ = turns.read_ledger(the_bank)
    for turn, arm in assigned.items():
        mine = [r for r in rows if r.turn == turn]
        assert sorted(r.lesson for r in mine) == sorted(f"{tool}-gotcha" for tool in TOOLS)
        assert {(r.arm, r.injected) for r in mine} == {(arm, arm == "with")}
        assert all(bool(out) == (arm == "with") for out in outputs[turn])


def test_bank_off_stops_injection_recording_and_nudging_on_the_next_call(project: Path) -> None:
    hooks = simulate.commands(project)
    state = Bank.open(project).state_dir

    def call(event: str, turn: str, command: str = "", **fields: object) -> str:
        if event in ("PreToolUse", "PostToolUse", "PostToolUseFailure"):
            sent = simulate.bash_payload(
                event, "off-session", turn, project, command, f"{turn}-{command}-{event}"
            )
        else:
            sent = simulate.payload(event, "off-session", turn, project, **fields)
        return simulate.spawn(hooks, sent, project)

    def fail_then_pass_then_stop(turn: str) -> str:
        assert call("PostToolUseFailure", turn, "pytest -q") == ""
        assert call("PostToolUse", turn, "pytest -q") == ""
        return call("Stop", turn, stop_hook_active=False, last_assistant_message="Fixed it.")

    # On (the default): a lesson is handed over, checks are recorded, a recovery is nudged.
    assert [s for s, _ in simulate.emitted(call("PreToolUse", "t1", "pytest -q"))] == [
        "pytest-needs-no-randomly"
    ]
    assert '"decision": "block"' in fail_then_pass_then_stop("t1").replace('":"', '": "')
    ledger_before = (state / "ledger.jsonl").read_bytes()
    checks_before = (state / "sessions/off-session/checks.jsonl").read_bytes()

    assert bank(project, "off") == (
        "create    .lessonbank/mode\n"
        "mode: off (was on): from the next hook call nothing is injected, nothing is learned "
        "and no agent is nudged\n"
    )
    assert call("PreToolUse", "t2", "ruff check src") == ""
    assert call("UserPromptSubmit", "t2", prompt="the database fixture times out again") == ""
    assert fail_then_pass_then_stop("t2") == ""
    assert call("SessionStart", "t2", source="startup") == ""
    assert (state / "ledger.jsonl").read_bytes() == ledger_before
    assert (state / "sessions/off-session/checks.jsonl").read_bytes() == checks_before
    assert sorted(p.name for p in (state / "sessions/off-session/claims").iterdir()) == [
        "pytest-needs-no-randomly"
    ]

    bank(project, "on")
    assert [s for s, _ in simulate.emitted(call("PreToolUse", "t3", "ruff check src"))] == ["ruff-fix-first"]


# --- the arm assignment itself ---


@pytest.mark.parametrize("seed", [0, 1, 20261129, 2**63 + 5])
@pytest.mark.parametrize("size", [2, 4, 6, 8])
def test_every_block_is_balanced(seed: int, size: int) -> None:
    for index in range(60):
        arms = trial.block(seed, index, size)
        assert (len(arms), arms.count("with"), arms.count("without")) == (size, size // 2, size // 2)


def test_blocks_vary_and_the_sequence_is_pinned() -> None:
    # Pinned: a change here silently changes every running trial's assignments.
    assert [trial.arm_at(trial.DEFAULT_SEED, 4, n) for n in range(12)] == [
        "with", "without", "without", "with",
        "with", "without", "without", "with",
        "without", "with", "with", "without",
    ]  # fmt: skip
    assert [trial.arm_at(trial.DEFAULT_SEED, trial.DEFAULT_BLOCK, n) for n in range(12)] == [
        "with", "without", "with", "without", "with", "without",
        "with", "without", "without", "with", "with", "without",
    ]  # fmt: skip
    orders = Counter(tuple(trial.block(trial.DEFAULT_SEED, i, 4)) for i in range(600))
    assert len(orders) == 6 and min(orders.values()) > 70


@pytest.mark.parametrize(("given", "used"), [(0, 2), (1, 2), (2, 2), (3, 4), (4, 4), (7, 8)])
def test_block_size_is_even(given: int, used: int) -> None:
    assert trial.block_size(given) == used


@pytest.mark.parametrize(
    ("value", "name"),
    [
        ("1ebd0fc0-db0b-4702", "1ebd0fc0-db0b-4702"),
        ("a/b", "a%2Fb"),
        ("a_b", "a_b"),
        ("", "%00"),
        (".hidden", "%2Ehidden"),
        ("..", "%2E."),
        ("é t", "%C3%A9%20t"),
    ],
)
def test_safe_name(value: str, name: str) -> None:
    assert state.safe_name(value) == name


def test_assign_records_once_and_survives_a_lost_count(tmp_path: Path) -> None:
    state = str(tmp_path)
    first = [trial.assign(state, "s", f"t{n}") for n in range(6)]
    assert first == [trial.arm_at(trial.DEFAULT_SEED, trial.DEFAULT_BLOCK, n) for n in range(6)]
    assert [trial.assign(state, "s", f"t{n}") for n in range(6)] == first
    (tmp_path / "trial/count").unlink()
    assert trial.assign(state, "s", "t6") == trial.arm_at(trial.DEFAULT_SEED, trial.DEFAULT_BLOCK, 6)
    (tmp_path / "trial/count").write_text("2 10", encoding="utf-8")  # stale: the log's size differs
    assert trial.assign(state, "s", "t7") == trial.arm_at(trial.DEFAULT_SEED, trial.DEFAULT_BLOCK, 7)
    log = (tmp_path / "trial/assignments.tsv").read_text(encoding="utf-8").splitlines()
    assert [line.split("\t")[0] for line in log] == [str(n) for n in range(8)]


def test_settings_choose_seed_and_block(tmp_path: Path) -> None:
    (tmp_path / "trial").mkdir()
    (tmp_path / "trial/settings").write_text("seed=7\nblock=3\njunk\nblock=x\n", encoding="utf-8")
    assert trial.read_settings(str(tmp_path / "trial")) == (7, 4)
    got = [trial.assign(str(tmp_path), "s", str(n)) for n in range(8)]
    assert got == trial.block(7, 0, 4) + trial.block(7, 1, 4)


def test_parallel_processes_never_share_an_index(tmp_path: Path) -> None:
    tooling = str(Path(trial.__file__).resolve().parents[2])
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); from lessonbank.kernel import arms as trial; "
        "[trial.assign(sys.argv[2], 's', f'{n % 5}') for n in range(10)]; "
        "[trial.assign(sys.argv[2], 's', sys.argv[3] + str(n)) for n in range(10)]"
    )
    procs = [
        subprocess.Popen([sys.executable, "-I", "-S", "-c", code, tooling, str(tmp_path), f"p{k}-"])
        for k in range(8)
    ]
    assert [p.wait(timeout=60) for p in procs] == [0] * 8
    log = [line.split("\t") for line in (tmp_path / "trial/assignments.tsv").read_text().splitlines()]
    assert [int(parts[0]) for parts in log] == list(range(85))
    assert len({(parts[1], parts[2]) for parts in log}) == 85
    assert Counter(parts[3] for parts in log[:84]) == {"with": 42, "without": 42}
