"""Whole-process latency of the PreToolUse hook, spawned exactly as `bank install claude` installs it.

For banks of 100, 1,000 and 10,000 synthetic lessons, the hook command from the bank's
.claude/settings.json runs through `/bin/sh -c` (as Claude Code runs it) with a real Claude Code
2.1.197 PreToolUse payload on stdin, interleaved run by run with `python3 -I -S -c pass` spawned
the same way, so both see the same machine load. Two cases per bank:

- steady: one session throughout; the lesson that fits was handed over on the first call and
  is claimed since (what nearly every call of a session costs);
- inject: a new session per call, so every call matches, reads the lesson and answers.

Then, on the largest bank, each other agent's real payload (tests/fixtures: Codex, Copilot CLI,
Gemini CLI; Cursor's documented shape) runs through that agent's installed command, a new
session per call: the shell call's lessons (PreToolUse and its equivalents), and the check's
record after it (Codex reads the exit status from its rollout file). A last row runs the same hook
in a folder without a bank (what every other project pays).

With `--baseline DIR` (the `tooling` folder of another checkout, e.g. a `git worktree` of an older
commit), that checkout's hook script runs on the same bank in the same interleaved loop, and two
more columns give its times: a before/after comparison under one machine load.

Usage: python benchmarks/bench_hook.py [--runs 200] [--sizes 100,1000,10000] [--baseline DIR]
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tooling"))

from lessonbank.bank import lesson as lesson_mod  # noqa: E402
from lessonbank.bank import render as generate  # noqa: E402
from lessonbank.bank.store import Bank  # noqa: E402
from lessonbank.install import claude as install  # noqa: E402

FIXTURE = REPO / "tests" / "fixtures" / "claude-code-2.1.197" / "PreToolUse.json"
TOOLS = (
    "pytest", "npm", "cargo", "go", "make", "docker", "git", "pip", "ruff", "mypy", "terraform",
    "kubectl", "yarn", "pnpm", "tox", "alembic", "helm", "gradle", "mvn", "tsc", "eslint", "uv",
)  # fmt: skip
WORDS = (
    "cache", "flaky", "timeout", "migration", "fixture", "lockfile", "deploy", "schema", "secret",
    "network", "retry", "snapshot", "coverage", "parallel", "seed", "vendor", "release", "build",
    "config", "database", "worker", "queue", "token", "locale", "encoding", "symlink", "docs",
)  # fmt: skip
EXTENSIONS = ("py", "ts", "tsx", "go", "rs", "sql", "yaml", "toml", "json", "md", "proto", "tf")


def synthetic(n: int, seed: int = 7) -> list[lesson_mod.Lesson]:
    """n varied lessons; one of them fits the benchmark payload (`python3 -c …`)."""
    rng = random.Random(seed)
    lessons = []
    for i in range(n):
        tool = rng.choice(TOOLS)
        word, other = rng.sample(WORDS, 2)
        slug = f"{tool}-{word}-{other}-{i}"
        commands: list[str] = []
        paths: list[str] = []
        if i == 0:
            commands = [r"\bpython3?\s+-c\b"]
        elif rng.random() < 0.7:
            commands = [rf"\b{tool}\b.*\b{word}{i}\b" if rng.random() < 0.5 else rf"\b{tool}\s+{word}{i}"]
        else:
            paths = [f"{word}/{other}{i}/**/*.{rng.choice(EXTENSIONS)}"]
        lessons.append(
            lesson_mod.Lesson(
                id=f"01BENCH{i:019d}",
                slug=slug,
                title=f"{tool} {word} needs care ({i})",
                when=f"running {tool} with the {word} {other} setup",
                do=f"set the {word} option before running {tool}; see docs/{other}.md",
                promote_to=f"rule:{tool}",
                tools=["Bash"] if commands else [],
                commands=commands,
                paths=paths,
                keywords=[tool, word],
                tags=[f"tool:{tool}"],
                priority=rng.randint(1, 10),
                confidence=round(rng.random(), 2),
                created="2026-11-29",
                updated="2026-11-29",
            )
        )
    return lessons


def make_bank(root: Path, n: int) -> tuple[Bank, float]:
    """A bank of n lessons with its INDEX.md, compiled index and installed hooks; build seconds."""
    root.mkdir(parents=True)
    (root / "bank.toml").write_text("", encoding="utf-8")
    (root / "lessons").mkdir()
    for lesson in synthetic(n):
        (root / "lessons" / f"{lesson.slug}.md").write_text(lesson_mod.render(lesson), encoding="utf-8")
    bank = Bank.open(root)
    started = time.perf_counter()
    generate.regenerate(bank)
    built = time.perf_counter() - started
    install.install(root)
    return bank, built


def spawn(command: str, payload: bytes | None, cwd: Path) -> float:
    started = time.perf_counter()
    subprocess.run(
        ["/bin/sh", "-c", command], input=payload or b"", stdout=subprocess.PIPE, cwd=cwd, check=True
    )
    return time.perf_counter() - started


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def baseline_command(hook: str, tooling: Path) -> str:
    """The installed hook command with its script swapped for another checkout's hook script."""
    for rel in ("lessonbank/hooks/entry.py", "lessonbank/hot/hook.py"):  # after / before the layout
        if (tooling / rel).is_file():
            return f"{hook.split(' -I -S ')[0]} -I -S {tooling / rel}"
    raise SystemExit(f"no hook script under {tooling}")


def measure(
    bank: Bank, runs: int, fresh_sessions: bool, cwd: Path | None = None, baseline: Path | None = None
) -> tuple[list[float], list[float], str, list[float]]:
    """(hook times, bare times, the first answer, baseline hook times) over `runs` interleaved rounds."""
    hook = install.installed_command(bank.root)
    assert hook, "hooks not installed"
    python = hook.split(" -I -S ")[0]
    bare = f"{python} -I -S -c pass"
    base = json.loads(FIXTURE.read_text(encoding="utf-8"))
    base["cwd"] = str(cwd or bank.root)
    shutil.rmtree(bank.state_dir / "sessions", ignore_errors=True)
    first = subprocess.run(
        ["/bin/sh", "-c", hook], input=json.dumps(base).encode(), capture_output=True, check=True
    ).stdout.decode()
    other = baseline_command(hook, baseline) if baseline else None
    if other:
        subprocess.run(["/bin/sh", "-c", other], input=json.dumps(base).encode(), capture_output=True)
    hook_times, bare_times, other_times = [], [], []
    for i in range(runs + 5):
        payload = dict(base, session_id=f"bench-{i}") if fresh_sessions else base
        data = json.dumps(payload).encode()
        h = spawn(hook, data, cwd or bank.root)
        b = spawn(bare, None, cwd or bank.root)
        if other:  # its own sessions, so that neither hook finds the other's claims
            o_payload = dict(base, session_id=f"base-{i}") if fresh_sessions else base
            o = spawn(other, json.dumps(o_payload).encode(), cwd or bank.root)
        if i >= 5:  # warm-up
            hook_times.append(h)
            bare_times.append(b)
            if other:
                other_times.append(o)
    return hook_times, bare_times, first, other_times


AGENT_FIXTURES = REPO / "tests" / "fixtures"


def agent_payload(agent: str, event: str, command: str, cwd: Path, session: str, rollout: Path) -> dict:
    """A real payload of another agent (tests/fixtures) for one shell call, moved to `cwd`."""
    if agent == "codex":
        lines = (AGENT_FIXTURES / "codex-0.171" / "hook-payloads.jsonl").read_text().splitlines()
        data = next(p for p in map(json.loads, lines) if p["hook_event_name"] == event)
        data.update(session_id=session, transcript_path=str(rollout), tool_use_id="call_1")
        data["tool_input"] = {"command": command}
    elif agent == "copilot":
        lines = (AGENT_FIXTURES / "copilot-cli-1.0.102" / "hook-payloads.jsonl").read_text().splitlines()
        data = next(json.loads(e["stdin"]) for e in map(json.loads, lines) if e["event"] == event)
        data.update(sessionId=session, toolArgs={"command": command})
    elif agent == "gemini":
        lines = (AGENT_FIXTURES / "gemini-cli-0.61" / "hook-payloads.jsonl").read_text().splitlines()
        data = next(p for p in map(json.loads, lines) if p["hook_event_name"] == event)
        data.update(session_id=session, tool_input={"command": command})
    else:  # cursor: its documented shape (no CLI to capture from)
        data = {"conversation_id": session, "generation_id": "g", "hook_event_name": event, "command": command}
    data["cwd"] = str(cwd)
    return data


# (agent, event passed on the command line or None, event in the payload, answers?)
AGENT_CASES = (
    ("codex", None, "PreToolUse", True),
    ("codex", None, "PostToolUse", False),
    ("copilot", "preToolUse", "preToolUse", True),
    ("copilot", "postToolUse", "postToolUse", False),
    ("gemini", None, "BeforeTool", True),
    ("gemini", None, "AfterTool", False),
    ("cursor", "beforeShellExecution", "beforeShellExecution", True),
)


def measure_agent(bank: Bank, runs: int, agent: str, named: str | None, event: str) -> tuple[list[float], list[float], str]:
    """Each agent's own payload through its installed command, a fresh session per call."""
    hook = install.installed_command(bank.root)
    assert hook, "hooks not installed"
    python = hook.split(" -I -S ")[0]
    command = f"{hook} {agent}" + (f" {named}" if named else "")
    bare = f"{python} -I -S -c pass"
    shell = json.loads(FIXTURE.read_text(encoding="utf-8"))["tool_input"]["command"]
    rollout = AGENT_FIXTURES / "codex-0.171" / "rollout-exit-127.jsonl"
    first = ""
    hook_times, bare_times = [], []
    for i in range(runs + 5):
        data = agent_payload(agent, event, shell, bank.root, f"{agent}-{i}", rollout)
        payload = json.dumps(data).encode()
        if i == 0:
            first = subprocess.run(["/bin/sh", "-c", command], input=payload, capture_output=True, check=True).stdout.decode()
            continue
        h = spawn(command, payload, bank.root)
        b = spawn(bare, None, bank.root)
        if i >= 5:
            hook_times.append(h)
            bare_times.append(b)
    return hook_times, bare_times, first


def row(n: int, case: str, hook_t: list[float], bare_t: list[float], base_t: list[float]) -> None:
    bp50, bp99 = percentile(bare_t, 0.5) * 1000, percentile(bare_t, 0.99) * 1000
    hp50, hp99 = percentile(hook_t, 0.5) * 1000, percentile(hook_t, 0.99) * 1000
    line = (
        f"{n or '-':>8} {case:>24} {bp50:>9.1f} {bp99:>9.1f} {hp50:>9.1f} {hp99:>9.1f}"
        f" {hp50 / bp50:>6.2f} {hp99 / bp99:>6.2f}"
    )
    if base_t:
        op50, op99 = percentile(base_t, 0.5) * 1000, percentile(base_t, 0.99) * 1000
        line += f" {op50:>9.1f} {op99:>9.1f}"
    print(line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--sizes", default="100,1000,10000")
    parser.add_argument("--baseline", type=Path, help="another checkout's tooling folder, timed alongside")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    print(f"python {sys.version.split()[0]}, {args.runs} runs per case, times in ms (p50 / p99)")
    header = f"{'lessons':>8} {'case':>24} {'bare p50':>9} {'bare p99':>9} {'hook p50':>9} {'hook p99':>9} {'x p50':>6} {'x p99':>6}"
    if args.baseline:
        header += f" {'base p50':>9} {'base p99':>9}"
    print(header)
    with tempfile.TemporaryDirectory(prefix="bench-hook-") as tmp:
        for n in sizes:
            bank, built = make_bank(Path(tmp) / f"bank{n}", n)
            size = (bank.state_dir / "index.bin").stat().st_size
            for case, fresh in (("steady", False), ("inject", True)):
                hook_t, bare_t, first, base_t = measure(bank, args.runs, fresh, baseline=args.baseline)
                assert "additionalContext" in first, f"the payload should fit lesson 0: {first!r}"
                row(n, case, hook_t, bare_t, base_t)
            print(f"{'':>8} (bank index took {built:.1f} s; index.bin {size / 1024:.0f} KiB)")
            if n == sizes[-1]:  # each agent's payload on the largest bank, a fresh session per call
                for agent, named, event, answers in AGENT_CASES:
                    hook_t, bare_t, first = measure_agent(bank, args.runs, agent, named, event)
                    assert bool(first.strip()) == answers, f"{agent} {event}: {first!r}"
                    row(n, f"{agent} {event}", hook_t, bare_t, [])
        elsewhere = Path(tmp) / "no-bank"
        elsewhere.mkdir()
        hook_t, bare_t, first, base_t = measure(bank, args.runs, False, cwd=elsewhere, baseline=args.baseline)
        assert first == "", "no bank, no output"
        row(0, "no bank", hook_t, bare_t, base_t)


if __name__ == "__main__":
    main()
