"""Whole-process latency of the hooks on realistic banks, spawned exactly as `bank install claude` installs them.

Banks of 1,000, 10,000 and (with `--sizes 1000,10000,50000`) 50,000 lessons shaped like real ones
(`realistic_bank`).

Each hook command runs through `/bin/sh -c` (as Claude Code runs it) with a real Claude Code
2.1.197 payload on stdin, interleaved run by run with `python3 -I -S -c pass` spawned the same way,
so both see the same machine load. The calls: a Bash command that fits lessons and one that fits
none (but names a tool hundreds of lessons are about), an Edit that fits a glob, a Write that fits
none, and a prompt that recalls lessons by their words. A call that fits is timed two ways:

- fresh: a new session per call, so every call matches, reads its lessons and answers;
- steady: one session throughout, after every lesson the call fits was handed over (what most
  calls of a long session cost: all the matching work, nothing to hand over).

Then, on the largest bank, each other agent's real payload (tests/fixtures: Codex, Copilot CLI,
Gemini CLI; Cursor's documented shape) runs through that agent's installed command, a new
session per call: the shell call's lessons (PreToolUse and its equivalents), and the check's
record after it (Codex reads the exit status from its rollout file). A last row runs the same hook
in a folder without a bank (what every other project pays).

With `--baseline DIR` (the `tooling` folder of another checkout, e.g. a `git worktree` of an older
commit), that checkout's hook script runs on a copy of the same bank (its compiled index built by
that checkout) in the same interleaved loop, and more columns give its times: a before/after
comparison under one machine load.

Usage: python benchmarks/bench_hook.py [--runs 200] [--sizes 1000,10000[,50000]] [--cases 'bash match']
       [--no-agents] [--baseline DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tooling"))

sys.path.insert(0, str(REPO / "benchmarks"))

from realistic_bank import make_bank  # noqa: E402

from lessonbank.bank.store import Bank  # noqa: E402
from lessonbank.install import claude  # noqa: E402
from lessonbank.state import statedir  # noqa: E402

FIXTURE = REPO / "tests" / "fixtures" / "claude-code-2.1.197" / "PreToolUse.json"
PROMPT_FIXTURE = REPO / "tests" / "fixtures" / "claude-code-2.1.197" / "UserPromptSubmit.json"

# The calls timed: (case, tool, input or prompt, answers?). The banks always hold a lesson for each
# matching call (numbers 0-2 below), and never one for the non-matching ones.
MATCH_COMMAND = "RUST_BACKTRACE=1 cargo test --workspace -- --nocapture"
MISS_COMMAND = "cargo tree --duplicates --edges normal"
EDIT_PATH = "src/billing/models/invoice.py"
WRITE_PATH = "docs/notes/meeting-2026.txt"
PROMPT = "why does the billing worker time out on the cache after the schema migration"
CALLS = (
    ("bash match", "Bash", {"command": MATCH_COMMAND}, True),
    ("bash miss", "Bash", {"command": MISS_COMMAND}, False),
    ("edit match", "Edit", {"file_path": EDIT_PATH, "old_string": "a", "new_string": "b"}, True),
    ("write miss", "Write", {"file_path": WRITE_PATH, "content": "notes"}, False),
    ("prompt", "", PROMPT, True),
    # A new session (the protocol, and the scheduled scan's one-stat "due?" check, not due here).
    ("session start", "SessionStart", None, True),
)


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
    script = tooling / "lessonbank" / "hooks" / "entry.py"
    if not script.is_file():
        raise SystemExit(f"no hook script under {tooling}")
    # The committed command runs this machine's launcher; the baseline runs the other script directly.
    return f"{shlex.quote(sys.executable)} -I -S {shlex.quote(str(script))}"


def payload_for(tool: str, value: object, cwd: Path, session: str) -> dict:
    """A real Claude Code payload (tests/fixtures) for one call, moved to `cwd`."""
    if tool == "SessionStart":
        data = json.loads((FIXTURE.parent / "SessionStart.json").read_text(encoding="utf-8"))
    elif not tool:
        data = json.loads(PROMPT_FIXTURE.read_text(encoding="utf-8"))
        data["prompt"] = value
    else:
        data = json.loads(FIXTURE.read_text(encoding="utf-8"))
        data.update(tool_name=tool, tool_input=value)
    data.update(cwd=str(cwd), session_id=session)
    return data


def base_copy(bank: Bank, tooling: Path) -> Path:
    """A copy of the bank whose compiled index the other checkout builds in its own format (the
    first call there rebuilds it), so neither hook ever reads the other's file."""
    copy = bank.root.with_name(bank.root.name + "-base")
    if not copy.exists():
        shutil.copytree(bank.root, copy, ignore=shutil.ignore_patterns(".lessonbank"))
    return copy


def measure(
    bank: Bank, runs: int, call: tuple, fresh: bool, cwd: Path | None = None, baseline: Path | None = None
) -> tuple[list[float], list[float], str, list[float]]:
    """(hook times, bare times, the first answer, baseline hook times) over `runs` interleaved rounds.

    fresh: a new session per call (every matching call reads its lessons and answers); steady: one
    session throughout, run until every lesson the call fits is claimed (what most calls of a
    long session cost).
    """
    _, tool, value, _ = call
    event = "SessionStart" if tool == "SessionStart" else "PreToolUse" if tool else "UserPromptSubmit"
    hook = claude.installed_command(bank.root, event)
    assert hook, "hooks not installed"
    # The reference: this machine's interpreter started bare, as the launcher starts it.
    bare = f"{shlex.quote(sys.executable)} -I -S -c pass"
    where = cwd or bank.root
    other = baseline_command(hook, baseline) if baseline else None
    other_where = base_copy(bank, baseline) if baseline and cwd is None else where
    shutil.rmtree(bank.state_dir / "sessions", ignore_errors=True)
    # Time the hook, not a background scan: the next scheduled scan is due in a year.
    statedir.postpone_scan(str(bank.state_dir), time.time() + 365 * 86400)
    tag = f"{event}-{time.monotonic_ns()}"

    def data(i: int, place: Path, prefix: str) -> bytes:
        session = f"{prefix}-{tag}-{i}" if fresh else f"{prefix}-{tag}-steady"
        return json.dumps(payload_for(tool, value, place, session)).encode()

    first = subprocess.run(["/bin/sh", "-c", hook], input=data(-1, where, "h"), capture_output=True, check=True)
    if other:
        subprocess.run(["/bin/sh", "-c", other], input=data(-1, other_where, "o"), capture_output=True)
    if not fresh:  # claim everything this call fits before timing
        for _ in range(200):
            if not subprocess.run(["/bin/sh", "-c", hook], input=data(0, where, "h"), capture_output=True).stdout:
                break
        for _ in range(200 if other else 0):
            if not subprocess.run(["/bin/sh", "-c", other], input=data(0, other_where, "o"), capture_output=True).stdout:  # type: ignore[list-item]
                break
    hook_times, bare_times, other_times = [], [], []
    for i in range(runs + 5):
        h = spawn(hook, data(i, where, "h"), where)
        b = spawn(bare, None, where)
        if other:
            o = spawn(other, data(i, other_where, "o"), other_where)
        if i >= 5:  # warm-up
            hook_times.append(h)
            bare_times.append(b)
            if other:
                other_times.append(o)
    return hook_times, bare_times, first.stdout.decode(), other_times


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
    elif agent in ("gemini", "qwen"):
        folder = "gemini-cli-0.61" if agent == "gemini" else "qwen-code-0.24.4"
        lines = (AGENT_FIXTURES / folder / "hook-payloads.jsonl").read_text().splitlines()
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
    ("gemini", None, "BeforeTool", False),  # only a guard answers before the call
    ("gemini", None, "AfterTool", True),  # the call's lessons, with its result
    ("qwen", None, "PreToolUse", False),
    ("qwen", None, "PostToolUseFailure", True),
    ("cursor", "beforeShellExecution", "beforeShellExecution", True),
)


def measure_agent(bank: Bank, runs: int, agent: str, named: str | None, event: str) -> tuple[list[float], list[float], str]:
    """Each agent's own payload through its installed command, a fresh session per call."""
    hook = claude.installed_command(bank.root)
    assert hook, "hooks not installed"
    command = f"{hook} {agent}" + (f" {named}" if named else "")
    bare = f"{shlex.quote(sys.executable)} -I -S -c pass"
    shell = MATCH_COMMAND
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
        line += f" {op50:>9.1f} {op99:>9.1f} {op50 / bp50:>6.2f} {op99 / bp99:>6.2f}"
    print(line, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--sizes", default="1000,10000", help="bank sizes, e.g. 1000,10000,50000")
    parser.add_argument("--cases", default="", help="only these cases (comma-separated, e.g. 'bash match')")
    parser.add_argument("--no-agents", action="store_true", help="skip the other agents' payloads")
    parser.add_argument("--baseline", type=Path, help="another checkout's tooling folder, timed alongside")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    wanted = {c.strip() for c in args.cases.split(",") if c.strip()}
    print(f"python {sys.version.split()[0]}, {args.runs} runs per case, times in ms (p50 / p99)")
    header = f"{'lessons':>8} {'case':>24} {'bare p50':>9} {'bare p99':>9} {'hook p50':>9} {'hook p99':>9} {'x p50':>6} {'x p99':>6}"
    if args.baseline:
        header += f" {'base p50':>9} {'base p99':>9} {'x p50':>6} {'x p99':>6}"
    print(header, flush=True)
    with tempfile.TemporaryDirectory(prefix="bench-hook-") as tmp:
        for n in sizes:
            bank, built = make_bank(Path(tmp) / f"bank{n}", n)
            size = (bank.state_dir / "index.bin").stat().st_size
            # Write the new bank out now (50 to 250 MB of files), so that its writeback does not
            # stall the first cases' writes (a fitting call claims and records).
            os.sync()
            for call in CALLS:
                case, tool, _, answers = call
                if wanted and case not in wanted:
                    continue
                for mode, fresh in (("fresh", True), ("steady", False)):
                    if (not answers or tool == "SessionStart") and not fresh:
                        continue  # a call that fits nothing claims nothing: fresh and steady are one
                    hook_t, bare_t, first, base_t = measure(bank, args.runs, call, fresh, baseline=args.baseline)
                    assert ("additionalContext" in first) == answers, f"{case}: {first[:200]!r}"
                    named = answers and tool != "SessionStart"
                    row(n, f"{case}, {mode}" if named else case, hook_t, bare_t, base_t)
            print(f"{'':>8} (bank index took {built:.1f} s; index.bin {size / 1024:.0f} KiB)", flush=True)
            if n == sizes[-1] and not args.no_agents:  # each agent's payload, a fresh session per call
                for agent, named, event, answers in AGENT_CASES:
                    hook_t, bare_t, first = measure_agent(bank, args.runs, agent, named, event)
                    assert bool(first.strip()) == answers, f"{agent} {event}: {first!r}"
                    row(n, f"{agent} {event}", hook_t, bare_t, [])
            if n != sizes[-1]:
                shutil.rmtree(bank.root)
        elsewhere = Path(tmp) / "no-bank"
        elsewhere.mkdir()
        hook_t, bare_t, first, base_t = measure(bank, args.runs, CALLS[0], False, cwd=elsewhere, baseline=args.baseline)
        assert first == "", "no bank, no output"
        row(0, "no bank", hook_t, bare_t, base_t)


if __name__ == "__main__":
    main()
