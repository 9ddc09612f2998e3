"""What each on-disk cache of a bank buys: the commands that use it, timed with it and without it.

A realistic bank (realistic_bank's generator, `--size` lessons, 10,000 by default) with its INDEX.md,
BANK.md, compiled index and installed hooks. For each cache under `.lessonbank/`, each command that
reads it runs in turn with the cache as the last run left it, and with the cache deleted just
before (what a bank without that cache would pay every time), interleaved run by run with a bare
`python -c pass` so that all see the same machine load; medians over `--runs` runs (`--slow-runs`
for the runs that parse every lesson or compile every regex, which take seconds):

- index.bin (the compiled index): the PreToolUse hook on a Bash call that fits lessons, a new
  session per call; without it, the hook builds its tables from INDEX.md (and writes the file).
- derived.cache: `bank list`, `bank check`, `bank index` after one lesson's *do* changed, and a
  one-lesson `bank capture`; without it, every lesson file is parsed and its row, section and
  compiled piece worked out again.
- lessons.cache: groom's load (`Bank.load()`, also what the trial's ledger and `bank list --json`
  read) and `bank show`; without it, every lesson file is parsed.
- triggers.cache: the compiled index built from INDEX.md with no derived pieces (what groom's
  finish and `bank pull` do: `render.write_compiled`); without it, every command regex is compiled.

Usage: python benchmarks/bench_caches.py [--size 10000] [--runs 9] [--slow-runs 3] [--tooling DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
sys.path.insert(0, str(REPO / "tooling"))

import bench_cli  # noqa: E402
import bench_hook  # noqa: E402
import realistic_bank  # noqa: E402

from lessonbank.bank import render  # noqa: E402
from lessonbank.install import claude  # noqa: E402
from lessonbank.state import statedir  # noqa: E402

LOAD = "from lessonbank.bank.store import Bank; Bank.find().load()"
WRITE_COMPILED = "from lessonbank.bank import render; from lessonbank.bank.store import Bank; render.write_compiled(Bank.find())"


def touch_index(root: Path, number: int) -> None:
    """INDEX.md rewritten as it is (a new inode): the compiled index is stale and built again."""
    path = root / "INDEX.md"
    data = path.read_bytes()
    path.unlink()
    path.write_bytes(data)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--slow-runs", type=int, default=3)
    parser.add_argument("--tooling", type=Path, default=REPO / "tooling", help="the lessonbank code to time")
    args = parser.parse_args()
    env = {**os.environ, "PYTHONPATH": str(args.tooling.resolve())}
    env.pop("BANK_ROOT", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    python = sys.executable
    with tempfile.TemporaryDirectory(prefix="bench-caches-") as tmp:
        env["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pycache")
        env["XDG_CACHE_HOME"] = str(Path(tmp) / "cache")
        bank, _ = realistic_bank.make_bank(Path(tmp) / "bank", args.size)
        root, state = bank.root, bank.state_dir
        statedir.postpone_scan(str(state), time.time() + 365 * 86400)
        hook = claude.installed_command(root, "PreToolUse")
        assert hook, "hooks not installed"
        _, tool, value, _ = bench_hook.CALLS[0]
        names = sorted(p.stem for p in (root / "lessons").iterdir())
        slug = names[len(names) // 2]

        def run(argv: list[str] | str, payload: bytes = b"") -> float:
            started = time.perf_counter()
            command = ["/bin/sh", "-c", argv] if isinstance(argv, str) else argv
            done = subprocess.run(command, cwd=root, env=env, input=payload, capture_output=True)
            elapsed = time.perf_counter() - started
            if done.returncode != 0:
                raise SystemExit(f"{argv} failed: {done.stderr.decode()}")
            return elapsed

        calls = [0]

        def hook_call() -> float:
            calls[0] += 1
            data = bench_hook.payload_for(tool, value, root, f"bench-caches-{time.monotonic_ns()}-{calls[0]}")
            return run(hook, json.dumps(data).encode())

        def command(argv: list[str], before: Callable[[Path, int], None] | None = None) -> Callable[[int], float]:
            def go(number: int) -> float:
                if before is not None:
                    before(root, number)
                return run(argv)

            return go

        def capture(number: int) -> float:
            return run(bench_cli.capture_new(number))

        def restore() -> None:
            """Every cache back as `bank index` and a load leave them (a run without one may have
            left another behind: the derived cache's record of the compiled file, say)."""
            (state / statedir.COMPILED_INDEX).unlink(missing_ok=True)
            run([*bench_cli.BANK, "index"])
            run([python, "-c", LOAD])
            if not (state / statedir.TRIGGER_CACHE).exists():
                run([python, "-c", WRITE_COMPILED])

        numbers = iter(range(1, 1_000_000))
        restore()
        # (cache file, what uses it, how it is timed, slow without it)
        cases: list[tuple[str, str, Callable[[int], float], bool]] = [
            (statedir.COMPILED_INDEX, "PreToolUse hook, bash match", lambda n: hook_call(), True),
            (statedir.DERIVED_CACHE, "bank list", command([*bench_cli.BANK, "list"]), True),
            (statedir.DERIVED_CACHE, "bank check", command([*bench_cli.BANK, "check"]), True),
            (statedir.DERIVED_CACHE, "bank index, one do changed", command([*bench_cli.BANK, "index"], bench_cli.edit_do), True),
            (statedir.DERIVED_CACHE, "bank capture, new lesson", capture, True),
            (statedir.LESSON_CACHE, "groom's load (Bank.load)", command([python, "-c", LOAD]), True),
            (statedir.LESSON_CACHE, f"bank show {slug}", command([*bench_cli.BANK, "show", slug]), True),
            (statedir.TRIGGER_CACHE, "compiled index from INDEX.md (groom, pull)", command([python, "-c", WRITE_COMPILED], touch_index), True),
        ]  # fmt: skip
        bare: list[float] = []
        results: list[tuple[list[float], list[float]]] = [([], []) for _ in cases]
        for round_ in range(max(args.runs, args.slow_runs)):
            for (name, _, go, slow), (with_, without) in zip(cases, results, strict=True):
                bare.append(run([python, "-c", "pass"]))
                if round_ < args.runs:
                    with_.append(go(next(numbers)))
                if round_ < (args.slow_runs if slow else args.runs):
                    (state / name).unlink(missing_ok=True)
                    if name == statedir.DERIVED_CACHE:  # the compiled templates too: a cache the derived one fills
                        shutil.rmtree(render.template_cache() or state / "none", ignore_errors=True)
                    without.append(go(next(numbers)))
                    restore()
        reference = bench_hook.percentile(bare, 0.5)
        print(f"python {sys.version.split()[0]}, {args.size:,} lessons, code from {args.tooling}, "
              f"{args.runs} runs with a cache ({args.slow_runs} without it for the slow ones), interleaved")  # fmt: skip
        print(f"reference: python -c pass p50 {reference * 1000:.1f} ms ({len(bare)} runs)")
        sizes = {name: (state / name).stat().st_size for name, *_ in cases if (state / name).exists()}
        print(f"\n{'cache':<16} {'size MB':>8} {'used by':<44} {'with ms':>9} {'without ms':>11} {'buys':>7}")
        for (name, label, _, _), (with_, without) in zip(cases, results, strict=True):
            a, b = bench_hook.percentile(with_, 0.5), bench_hook.percentile(without, 0.5)
            print(f"{name:<16} {sizes.get(name, 0) / 1e6:>8.1f} {label:<44} {a * 1000:>9.1f} {b * 1000:>11.1f} {b / a:>6.1f}x")


if __name__ == "__main__":
    main()
