"""The on/off trial end to end: synthetic sessions through the real hook processes, spawned as installed.

Each session starts with SessionStart (the hook assigns its arm), then a Bash call and a prompt a
lesson fits; each turn's checks are drawn from a seeded RNG with the session's arm's failure
probability and fed back through the PostToolUse / PostToolUseFailure hooks. Then the assignment
itself: mixed blocks, pinned sequences, parallel processes.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from click.testing import CliRunner

from lessonbank.bank.store import Bank
from lessonbank.cli import main
from lessonbank.state import arms, statedir
from lessonbank.trial import simulate, stats, turns

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
# Each simulated session: SessionStart, then a pytest call and a prompt a lesson fits, each turn
# running 2 checks that fail 90% of the time without lessons; 30 sessions in each arm.
SESSION_TRIGGERS = [TRIGGERS[0][0], TRIGGERS[3][0]]
FAIL_WITHOUT = 0.9
CHECKS = 2
PLANNED = 30
SEED = 20261129
PINNED_SIZES = [4, 6, 2]
PINNED_ARMS = [
    "with", "without", "without", "with",
    "with", "with", "without", "without", "with", "without",
    "with", "without",
]  # fmt: skip


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
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    # A fixed seed for `bank test`, so the trial's arms (and so its verdict) are the same every run.
    monkeypatch.setattr(arms, "fresh_seed", lambda: SEED)
    # A space in the path: the installed command must quote it.
    return make_project(tmp_path / "my project", list(LESSONS))


def sessions_for(planned: int) -> int:
    """How many sessions the fixed seed's assignment needs before both arms reach `planned`."""
    sequence = [arms.arm_at(SEED, n) for n in range(4 * planned)]
    return next(
        n
        for n in range(len(sequence))
        if min(sequence[:n].count("with"), sequence[:n].count("without")) >= planned
    )


def run_trial(project: Path, fail_with: float, seed: int) -> simulate.Run:
    bank(project, "test", "--planned", str(PLANNED))
    names = [f"session-{i:02d}" for i in range(sessions_for(PLANNED))]
    fail = {"with": fail_with, "without": FAIL_WITHOUT}
    return simulate.simulate(project, names, SESSION_TRIGGERS, fail, CHECKS, seed)


def check_arms_and_ledger(project: Path, run: simulate.Run) -> None:
    """Balance by session, silence in the without arm, would-be injections logged, ledger totals = hook output."""
    the_bank = Bank.open(project)
    log = the_bank.state_dir / "hook.log"
    assert not log.exists(), log.read_text(encoding="utf-8")
    assert [t for t in run.turns if not t.arm] == []
    assigned = turns.assignments(the_bank)
    arm_of = dict(assigned)
    sessions = list(dict.fromkeys(t.session for t in run.turns))
    # Assigned at SessionStart, in the order the sessions began, one arm per session.
    assert [session for session, _ in assigned] == sessions
    assert all(t.arm == arm_of[t.session] for t in run.turns)
    sequence = [arm for _, arm in assigned]
    assert sequence == [arms.arm_at(SEED, n) for n in range(len(sequence))]
    drift = [
        abs(sequence[:n].count("with") - sequence[:n].count("without")) for n in range(len(sequence) + 1)
    ]
    assert max(drift) <= 3  # blocks of 2, 4 or 6
    rows, skipped = turns.read_ledger(the_bank)
    assert skipped == 0
    by_turn: dict[str, list[turns.Injection]] = {}
    for row in rows:
        by_turn.setdefault(row.turn, []).append(row)
    trigger_of = {t.text: t for t, _ in TRIGGERS}
    protocols = {c.stdout for c in run.calls if c.event == "SessionStart"}
    assert len(protocols) == 1 and "#lesson" in protocols.pop()  # the same protocol in both arms
    emitted_lessons, emitted_bytes = 0, 0
    for call in run.calls:
        if call.event == "SessionStart":
            continue
        if arm_of[call.session] == "without" or call.event.startswith("Post"):
            assert call.stdout == "", call  # the without arm gets no lesson at all
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
        if turn.arm == "without":
            (row,) = by_turn[turn.turn]
            assert (row.arm, row.injected, row.bytes > 0) == ("without", False, True)
    summary = json.loads(bank(project, "ledger", "--json"))
    assert (summary["injected"], summary["bytes"]) == (emitted_lessons, emitted_bytes)
    assert summary["logged_only"] == sum(1 for t in run.turns if t.arm == "without")
    assert summary["tokens_estimate"] == -(-emitted_bytes // 4)
    assert summary["never_fired"] == ["compose-needs-the-profile", "mypy-needs-the-stubs", "ruff-fix-first"]
    # The hooks recorded every simulated check against the session's arm, turn by turn.
    records = {(r.session, r.turn): r for r in turns.trial_records(the_bank)}
    assert len(records) == len(run.turns)
    for turn in run.turns:
        record = records[(turn.session, turn.turn)]
        assert (record.arm, record.checks, record.failed) == (
            turn.arm,
            len(turn.checks),
            turn.checks.count(False),
        )
        assert record.ended_failing == (not turn.checks[-1])


def test_a_true_40_percent_drop_is_found(project: Path, tmp_path: Path) -> None:
    run = run_trial(project, fail_with=0.6 * FAIL_WITHOUT, seed=11)
    check_arms_and_ledger(project, run)
    chart = tmp_path / "trial.svg"
    out = bank(project, "trial", "report", "--chart", str(chart))
    print(out)  # the figures quoted in the README come from this report (pytest -s)
    assert "Verdict: HELPS (" in out
    assert "  with           30" in out and "  without        30" in out
    assert "bank off" not in out
    assert out.rstrip().endswith(f"create    {chart}")
    assert chart.read_text(encoding="utf-8").startswith("<svg")
    status = bank(project, "trial", "status").splitlines()
    assert status[0] == "mode: test"
    assert status[1].startswith("trial: helps — ")
    data = json.loads(bank(project, "trial", "report", "--json"))
    assert data["verdict"] == stats.HELPS and data["planned"] == PLANNED
    assert min(data["sessions"].values()) == PLANNED
    assert data["interval"][0] < 1 - data["drop"] < data["interval"][1] < 1
    # The export analysed offline gives the same report.
    exported = tmp_path / "trial.jsonl"
    exported.write_text(bank(project, "trial", "export"), encoding="utf-8")
    offline = json.loads(
        bank(project, "trial", "analyze", str(exported), "--json", "--planned", str(PLANNED))
    )
    assert {k: offline[k] for k in ("verdict", "drop", "interval", "p")} == {
        k: data[k] for k in ("verdict", "drop", "interval", "p")
    }


def test_no_true_effect_gives_no_effect_and_says_bank_off(project: Path) -> None:
    run = run_trial(project, fail_with=FAIL_WITHOUT, seed=12)
    check_arms_and_ledger(project, run)
    out = bank(project, "trial", "report")
    print(out)
    assert "Verdict: NO EFFECT (" in out
    assert "No help was shown, so the honest move is `bank off`." in out
    assert stats.rule_text(PLANNED) in out


def test_before_the_planned_size_the_trial_only_counts(project: Path) -> None:
    bank(project, "test", "--planned", str(PLANNED))
    run = simulate.simulate(
        project, ["early-1", "early-2", "early-3"], SESSION_TRIGGERS, {"with": 0.0, "without": 1.0}, CHECKS, 3
    )
    n_with = len({t.session for t in run.turns if t.arm == "with"})
    assert bank(project, "trial", "status") == (
        f"mode: test\ntrial: collecting {n_with}/30 sessions with lessons, {3 - n_with}/30 without; "
        "no verdict before 30 in each arm\n"
    )


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


def test_parallel_hook_processes_of_one_session_get_one_arm(tmp_path: Path) -> None:
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
    assigned = {f"{session}-prompt": arm for session, arm in turns.assignments(the_bank)}
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
def test_every_block_is_balanced_and_runs_add_up_to_twelve(seed: int) -> None:
    for run in range(100):
        sizes = arms.block_sizes(seed, run)
        assert sum(sizes) == arms.RUN and set(sizes) <= {2, 4, 6}
        sequence = [arms.arm_at(seed, run * arms.RUN + n) for n in range(arms.RUN)]
        start = 0
        for size in sizes:
            block = sequence[start : start + size]
            assert block.count("with") == block.count("without") == size // 2
            start += size


def test_blocks_vary_and_the_sequence_is_pinned() -> None:
    # Pinned: a change here silently changes every running trial's assignments.
    assert arms.block_sizes(SEED, 0) == PINNED_SIZES
    assert [arms.arm_at(SEED, n) for n in range(12)] == PINNED_ARMS
    shapes = Counter(tuple(arms.block_sizes(SEED, run)) for run in range(1000))
    assert len(shapes) > 20 and max(shapes.values()) < 200
    # Different seeds, different sequences: no two installs share one.
    sequences = {tuple(arms.arm_at(seed, n) for n in range(24)) for seed in range(50)}
    assert len(sequences) == 50


def test_fresh_seeds_differ() -> None:
    seeds = {arms.fresh_seed() for _ in range(20)}
    assert len(seeds) == 20 and all(0 <= seed < 2**63 for seed in seeds)


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
    assert statedir.safe_name(value) == name


def test_assign_records_once_and_survives_a_lost_count(tmp_path: Path) -> None:
    state = str(tmp_path)
    (tmp_path / "trial").mkdir()
    (tmp_path / "trial/settings").write_text("seed=7\nplanned=30\n", encoding="utf-8")
    first = [arms.assign(state, f"s{n}") for n in range(6)]
    assert first == [arms.arm_at(7, n) for n in range(6)]
    assert [arms.assign(state, f"s{n}") for n in range(6)] == first
    (tmp_path / "trial/count").unlink()
    assert arms.assign(state, "s6") == arms.arm_at(7, 6)
    (tmp_path / "trial/count").write_text("2 10", encoding="utf-8")  # stale: the log's size differs
    assert arms.assign(state, "s7") == arms.arm_at(7, 7)
    log = (tmp_path / "trial/assignments.tsv").read_text(encoding="utf-8").splitlines()
    assert [line.split("\t")[:2] for line in log] == [[str(n), f"s{n}"] for n in range(8)]
    assert arms.read_settings(str(tmp_path / "trial")) == {"seed": 7, "planned": 30}


def test_a_trial_started_by_hand_gets_a_fresh_seed_and_a_log_line(tmp_path: Path) -> None:
    arm = arms.assign(str(tmp_path), "s")
    seed = arms.read_settings(str(tmp_path / "trial"))["seed"]
    assert arm == arms.arm_at(seed, 0)
    assert (tmp_path / "trial/log.jsonl").read_text(encoding="utf-8") == '{"event": "start", "by": "hook"}\n'


def test_parallel_processes_never_share_an_index(tmp_path: Path) -> None:
    tooling = str(Path(arms.__file__).resolve().parents[2])
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); from lessonbank.state import arms; "
        "[arms.assign(sys.argv[2], f's{n % 5}') for n in range(10)]; "
        "[arms.assign(sys.argv[2], sys.argv[3] + str(n)) for n in range(10)]"
    )
    (tmp_path / "trial").mkdir()
    (tmp_path / "trial/settings").write_text("seed=3\n", encoding="utf-8")
    procs = [
        subprocess.Popen([sys.executable, "-I", "-S", "-c", code, tooling, str(tmp_path), f"p{k}-"])
        for k in range(8)
    ]
    assert [p.wait(timeout=60) for p in procs] == [0] * 8
    log = [line.split("\t") for line in (tmp_path / "trial/assignments.tsv").read_text().splitlines()]
    assert [int(parts[0]) for parts in log] == list(range(85))
    assert len({parts[1] for parts in log}) == 85
    assert [parts[2] for parts in log] == [arms.arm_at(3, n) for n in range(85)]
    assert Counter(parts[2] for parts in log[:84]) == {"with": 42, "without": 42}
