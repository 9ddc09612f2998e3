"""Whole-process time and peak memory of the `bank` commands on a realistic bank, beside `python -c pass`.

The bank is bench_hook's generator (lessons shaped like real ones) at `--size` lessons (10,000 by
default). Each run spawns, in turn and interleaved with a bare `python -c pass` (the same
interpreter), so that all see the same machine load:

- `bank --help`, `bank list`, `bank stats`, `bank check`, `bank index` with nothing changed;
- `bank index` after one lesson's *do* was changed (a different lesson each run), and after one
  lesson's `seen` was bumped;
- `bank capture` of a new lesson (made-up words, a different one each run), and of a repeat of
  one in a new session each run (which bumps its seen).

Every command runs as `python -m lessonbank` with this checkout's tooling on PYTHONPATH. Peak
memory (max RSS) is each command's own, from `/usr/bin/time`. The first `bank index` (a build from
nothing, no cache) is timed once. With `--memory-size 50000` a second bank of that size is built
and the peak memory of its `bank index` from nothing (no cache), with nothing changed and after
one lesson's *do* changed, and of a capture of a new lesson, is reported.

`--tooling DIR` times another checkout's code (its `tooling` folder, e.g. main's in a second
worktree) with this script's cases, for a before/after in the same machine state.

Usage: python benchmarks/bench_cli.py [--size 10000] [--runs 15] [--memory-size 50000] [--tooling DIR]
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
sys.path.insert(0, str(REPO / "tooling"))

import bench_hook  # noqa: E402

from lessonbank.bank import lesson as lesson_mod  # noqa: E402

ENV = {**os.environ, "PYTHONPATH": str(REPO / "tooling")}
ENV.pop("BANK_ROOT", None)
# Modules are run from bytecode, as an installed package's are (pip compiles them): a shell with
# PYTHONDONTWRITEBYTECODE set would otherwise time compiling lessonbank's modules from source on
# every run (25-35 ms). `--no-bytecode` keeps the environment's setting.
BANK = [sys.executable, "-m", "lessonbank"]


def spawn(argv: list[str], cwd: Path) -> tuple[float, int]:
    """Seconds and peak RSS (KiB) of one child process; it must succeed.

    The peak comes from /usr/bin/time, which runs the command: the kernel's figure for a child of
    this (large) process would include the memory it had between fork and exec.
    """
    with tempfile.NamedTemporaryFile(prefix="bench-cli-rss-") as out:
        started = time.perf_counter()
        done = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", out.name, *argv], cwd=cwd, env=ENV,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)  # fmt: skip
        elapsed = time.perf_counter() - started
        if done.returncode != 0:
            raise SystemExit(f"{' '.join(argv)} failed: {done.stderr.decode()}")
        return elapsed, int(Path(out.name).read_text().split()[-1])


def write_bank(root: Path, n: int) -> None:
    root.mkdir(parents=True)
    (root / "bank.toml").write_text("", encoding="utf-8")
    (root / "lessons").mkdir()
    for lesson in bench_hook.synthetic(n):
        (root / "lessons" / f"{lesson.slug}.md").write_text(lesson_mod.render(lesson), encoding="utf-8")


def edit_do(root: Path, number: int) -> None:
    """Change one lesson's `do` (its INDEX.md row, BANK.md section and compiled piece change)."""
    files = sorted((root / "lessons").iterdir())
    path = files[number * 37 % len(files)]
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("\ndo: ", f"\ndo: (edit {number}) ", 1), encoding="utf-8")


def bump_seen(root: Path, number: int) -> None:
    """Raise one lesson's `seen` (its row changes; its compiled piece does not)."""
    files = sorted((root / "lessons").iterdir())
    path = files[(number * 53 + len(files) // 2) % len(files)]
    text = path.read_text(encoding="utf-8")
    head, _, rest = text.partition("\nseen: ")
    count, _, tail = rest.partition("\n")
    path.write_text(f"{head}\nseen: {int(count) + 1}\n{tail}", encoding="utf-8")


def _words(number: int, count: int) -> list[str]:
    """Made-up words, different for each number: a lesson of these is like no banked one."""
    rng = random.Random(number)
    return ["".join(rng.choice("bcdfghjklmnpqrstvwxz") + rng.choice("aeiou") for _ in range(3)) for _ in range(count)]


def capture_new(number: int) -> list[str]:
    """A lesson no banked one resembles (a new file, a new INDEX.md row, a new compiled piece)."""
    when, do = _words(number, 6), _words(number + 10_000, 6)
    return [*BANK, "capture", "--when", f"the {' '.join(when)} step fails", "--do", f"run {' '.join(do)} first",
            "--promote-to", "rule:widgets", "--trigger-command", rf"\b{when[0]}\b"]  # fmt: skip


def capture_repeat(number: int) -> list[str]:
    """A repeat of the first new lesson in a new session: its `seen` goes up by one."""
    return [*capture_new(0), "--session", f"bench-{number}"]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--memory-size", type=int, default=0, help="also measure `bank index` memory at this size")
    parser.add_argument("--tooling", type=Path, default=REPO / "tooling", help="the lessonbank code to time")
    parser.add_argument("--no-bytecode", dest="bytecode", action="store_false", help="keep PYTHONDONTWRITEBYTECODE if set")
    args = parser.parse_args()
    ENV["PYTHONPATH"] = str(args.tooling.resolve())
    with tempfile.TemporaryDirectory(prefix="bench-cli-") as tmp:
        if args.bytecode:  # kept in the temporary folder: nothing written beside the code
            ENV.pop("PYTHONDONTWRITEBYTECODE", None)
            ENV["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pycache")
        root = Path(tmp) / "bank"
        write_bank(root, args.size)
        first, first_rss = spawn([*BANK, "index"], root)
        spawn(capture_new(0), root)  # the repeat below repeats this one
        cases: dict[str, tuple[list[str] | None, object]] = {
            "python -c pass": ([sys.executable, "-c", "pass"], None),
            "bank --help": ([*BANK, "--help"], None),
            "bank list": ([*BANK, "list"], None),
            "bank stats": ([*BANK, "stats"], None),
            "bank check": ([*BANK, "check"], None),
            "bank index, nothing changed": ([*BANK, "index"], None),
            "bank index, one do changed": ([*BANK, "index"], edit_do),
            "bank index, one seen bumped": ([*BANK, "index"], bump_seen),
            "bank capture, new lesson": (None, capture_new),
            "bank capture, repeat (bump)": (None, capture_repeat),
        }
        times: dict[str, list[float]] = {name: [] for name in cases}
        peaks: dict[str, int] = dict.fromkeys(cases, 0)
        for run in range(1, args.runs + 1):
            for name, (argv, before) in cases.items():
                if argv is None:
                    argv = before(run)  # type: ignore[operator]
                elif before is not None:
                    before(root, run)  # type: ignore[operator]
                elapsed, rss = spawn(argv, root)
                times[name].append(elapsed)
                peaks[name] = max(peaks[name], rss)
        bare = percentile(times["python -c pass"], 0.5)
        print(f"python {sys.version.split()[0]}, {args.size:,} lessons, {args.runs} runs per case (interleaved), code from {ENV['PYTHONPATH']}, "
              f"{'bytecode' if 'PYTHONPYCACHEPREFIX' in ENV else 'environment bytecode setting'}")  # fmt: skip
        print(f"first `bank index` (no cache): {first:.2f} s, peak {first_rss / 1024:.0f} MiB")
        print(f"{'command':<30} {'p50 ms':>8} {'max ms':>8} {'x pass':>7} {'peak MiB':>9}")
        for name in cases:
            p50 = percentile(times[name], 0.5)
            print(f"{name:<30} {p50 * 1000:>8.1f} {max(times[name]) * 1000:>8.1f} {p50 / bare:>7.2f} {peaks[name] / 1024:>9.0f}")
        if args.memory_size:
            big = Path(tmp) / "big"
            write_bank(big, args.memory_size)
            memory_cases = (("bank index from nothing", None), ("bank index, nothing changed", None),
                            ("bank index, one do changed", edit_do), ("bank capture, new lesson", None))  # fmt: skip
            for label, change in memory_cases:
                if change is not None:
                    change(big, 1)
                argv = capture_new(1) if "capture" in label else [*BANK, "index"]
                elapsed, rss = spawn(argv, big)
                print(f"{args.memory_size:,} lessons, {label}: {elapsed:.2f} s, peak {rss / 1024:.0f} MiB")


if __name__ == "__main__":
    main()
