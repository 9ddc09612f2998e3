"""What the trial costs a hook: the PreToolUse hook in `on` and `test` mode beside a bare interpreter.

Uses realistic_bank's bank of generated lessons and its interleaved measurement (hook spawned exactly as
installed, `python3 -I -S -c pass` spawned the same way in the same run). The call, a Bash command
lessons fit, starts a new session every time, so in `test` mode every call also assigns a new session: the flock, the log
append (no fsync: see state/arms.py) and two small renames. Then `arms.assign` in process, for a new
and a known session.

Usage: python benchmarks/bench_trial.py [--runs 200] [--lessons 1000]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_hook import CALLS, measure, percentile  # noqa: E402
from realistic_bank import make_bank  # noqa: E402

from lessonbank.state import arms  # noqa: E402
from lessonbank.trial import ledger, turns  # noqa: E402


def in_process(state_dir: str, runs: int) -> tuple[list[float], list[float]]:
    """Seconds per `assign` call: new sessions (each takes the lock and writes), then the same ones again."""
    new, known = [], []
    for i in range(runs):
        started = time.perf_counter()
        arms.assign(state_dir, f"session-{i}")
        new.append(time.perf_counter() - started)
    for i in range(runs):
        started = time.perf_counter()
        arms.assign(state_dir, f"session-{i}")
        known.append(time.perf_counter() - started)
    return new, known


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--lessons", type=int, default=1000)
    args = parser.parse_args()
    print(
        f"python {sys.version.split()[0]}, {args.lessons} lessons, {args.runs} runs per case, ms (p50 / p99)"
    )
    print(
        f"{'mode':>5} {'bare p50':>9} {'bare p99':>9} {'hook p50':>9} {'hook p99':>9} {'x p50':>6} {'x p99':>6}"
    )
    with tempfile.TemporaryDirectory(prefix="bench-trial-") as tmp:
        bank, _ = make_bank(Path(tmp) / "bank", args.lessons)
        for mode in ("on", "test"):
            ledger.set_mode(bank, mode)
            hook_t, bare_t, first, _ = measure(bank, args.runs, CALLS[0], fresh=True)
            assert mode == "test" or "additionalContext" in first, first
            bp50, bp99 = percentile(bare_t, 0.5) * 1000, percentile(bare_t, 0.99) * 1000
            hp50, hp99 = percentile(hook_t, 0.5) * 1000, percentile(hook_t, 0.99) * 1000
            print(
                f"{mode:>5} {bp50:>9.1f} {bp99:>9.1f} {hp50:>9.1f} {hp99:>9.1f} {hp50 / bp50:>6.2f} {hp99 / bp99:>6.2f}"
            )
        assigned = turns.assignments(bank)
        print(f"(test mode assigned {len(assigned)} sessions: {sum(a == 'with' for _, a in assigned)} with)")
        new, known = in_process(str(Path(tmp) / "assign"), args.runs)
        print(
            f"arms.assign in process: new session p50 {percentile(new, 0.5) * 1000:.3f} ms, "
            f"p99 {percentile(new, 0.99) * 1000:.3f} ms; known session p50 {percentile(known, 0.5) * 1000:.3f} ms, "
            f"p99 {percentile(known, 0.99) * 1000:.3f} ms"
        )


if __name__ == "__main__":
    main()
