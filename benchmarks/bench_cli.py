"""Whole-process time and peak memory of the `bank` commands on a realistic bank, beside `python -c pass`.

The bank is realistic_bank's generator (lessons shaped like real ones) at `--size` lessons (10,000 by
default). Each run spawns, in turn and interleaved with a bare `python -c pass` (the same
interpreter), so that all see the same machine load:

- `bank --help`, `bank list`, `bank stats`, `bank check`, `bank index` with nothing changed;
- `bank index` after one lesson's *do* was changed (a different lesson each run), and after one
  lesson's `seen` was bumped;
- `bank index` after a lesson file was added by hand, and after one was deleted;
- `bank capture` of a new lesson (made-up words, a different one each run), and of a repeat of
  one in a new session each run (which bumps its seen).

Every command runs as `python -m lessonbank` with this checkout's tooling on PYTHONPATH. Peak
memory (max RSS) and CPU time (user + system, 10 ms resolution) are each command's own, from
`/usr/bin/time`. The first `bank index` (a build from
nothing, no cache) is timed once. With `--memory-size 50000` a second bank of that size is built
and the peak memory of its `bank index` from nothing (no cache), with nothing changed and after
one lesson's *do* changed, and of a capture of a new lesson, is reported.

`--tooling DIR` times another checkout's code (its `tooling` folder, e.g. main's in a second
worktree) with this script's cases; given more than once, each tree gets its own copy of the bank
and every case runs for each tree in turn, run by run, so a before/after sees the same machine
load (on a shared machine, separate runs differ by more than the change measured). The user's
cache folder (XDG_CACHE_HOME) is a temporary one, warmed by the first capture.

Usage: python benchmarks/bench_cli.py [--size 10000] [--runs 15] [--memory-size 50000] [--tooling DIR ...]
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
sys.path.insert(0, str(REPO / "tooling"))

import realistic_bank  # noqa: E402

from lessonbank.bank.lesson import render  # noqa: E402

ENV = {**os.environ, "PYTHONPATH": str(REPO / "tooling")}
ENV.pop("BANK_ROOT", None)
# Modules are run from bytecode, as an installed package's are (pip compiles them): a shell with
# PYTHONDONTWRITEBYTECODE set would otherwise time compiling lessonbank's modules from source on
# every run (25-35 ms). `--no-bytecode` keeps the environment's setting.
BANK = [sys.executable, "-m", "lessonbank"]


def spawn(argv: list[str], cwd: Path) -> tuple[float, int, float]:
    """Seconds, peak RSS (KiB) and CPU seconds (user + system) of one child process; it must succeed.

    The peak and the CPU time come from /usr/bin/time, which runs the command: the kernel's figure
    for a child of this (large) process would include the memory it had between fork and exec.
    CPU time moves less than wall time when other work shares the machine.
    """
    with tempfile.NamedTemporaryFile(prefix="bench-cli-rss-") as out:
        started = time.perf_counter()
        done = subprocess.run(["/usr/bin/time", "-f", "%M %U %S", "-o", out.name, *argv], cwd=cwd, env=ENV,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)  # fmt: skip
        elapsed = time.perf_counter() - started
        if done.returncode != 0:
            raise SystemExit(f"{' '.join(argv)} failed: {done.stderr.decode()}")
        rss, user, system = Path(out.name).read_text().split()[-3:]
        return elapsed, int(rss), float(user) + float(system)


def write_bank(root: Path, n: int) -> None:
    root.mkdir(parents=True)
    (root / "bank.toml").write_text("", encoding="utf-8")
    (root / "lessons").mkdir()
    for lesson in realistic_bank.synthetic(n):
        (root / "lessons" / f"{lesson.slug}.md").write_text(render(lesson), encoding="utf-8")


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


def add_file(root: Path, number: int) -> None:
    """Write one new lesson file by hand (a new INDEX.md row, BANK.md section and compiled piece)."""
    made = realistic_bank.synthetic(1, seed=1000 + number)[0]
    lesson = dataclasses.replace(made, slug=f"{made.slug}-added-{number}", id=f"01ADDED{number:019d}")
    (root / "lessons" / f"{lesson.slug}.md").write_text(render(lesson), encoding="utf-8")


def delete_file(root: Path, number: int) -> None:
    """Delete one lesson file by hand (a different one each run)."""
    files = sorted((root / "lessons").iterdir())
    files[(number * 71 + len(files) // 3) % len(files)].unlink()


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
    parser.add_argument("--tooling", type=Path, action="append", help="the lessonbank code to time (repeatable)")
    parser.add_argument("--no-bytecode", dest="bytecode", action="store_false", help="keep PYTHONDONTWRITEBYTECODE if set")
    args = parser.parse_args()
    trees = [t.resolve() for t in args.tooling or [REPO / "tooling"]]
    with tempfile.TemporaryDirectory(prefix="bench-cli-") as tmp:
        if args.bytecode:  # kept in the temporary folder: nothing written beside the code
            ENV.pop("PYTHONDONTWRITEBYTECODE", None)
            ENV["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pycache")
        ENV["XDG_CACHE_HOME"] = str(Path(tmp) / "cache")
        write_bank(Path(tmp) / "bank", args.size)
        roots, firsts = [], []
        for i, tree in enumerate(trees):
            ENV["PYTHONPATH"] = str(tree)
            root = Path(tmp) / f"bank-{i}"
            shutil.copytree(Path(tmp) / "bank", root)
            roots.append(root)
            firsts.append(spawn([*BANK, "index"], root)[:2])
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
            "bank index, a file added": ([*BANK, "index"], add_file),
            "bank index, a file deleted": ([*BANK, "index"], delete_file),
            "bank capture, new lesson": (None, capture_new),
            "bank capture, repeat (bump)": (None, capture_repeat),
        }
        times: list[dict[str, list[float]]] = [{name: [] for name in cases} for _ in trees]
        cpus: list[dict[str, list[float]]] = [{name: [] for name in cases} for _ in trees]
        peaks: list[dict[str, int]] = [dict.fromkeys(cases, 0) for _ in trees]
        for run in range(1, args.runs + 1):
            for name, (argv, before) in cases.items():
                for i, tree in enumerate(trees):
                    ENV["PYTHONPATH"] = str(tree)
                    command = argv
                    if command is None:
                        command = before(run)  # type: ignore[operator]
                    elif before is not None:
                        before(roots[i], run)  # type: ignore[operator]
                    elapsed, rss, cpu = spawn(command, roots[i])
                    times[i][name].append(elapsed)
                    cpus[i][name].append(cpu)
                    peaks[i][name] = max(peaks[i][name], rss)
        print(f"python {sys.version.split()[0]}, {args.size:,} lessons, {args.runs} runs per case (interleaved), "
              f"{'bytecode' if 'PYTHONPYCACHEPREFIX' in ENV else 'environment bytecode setting'}")  # fmt: skip
        for i, tree in enumerate(trees):
            bare = percentile(times[i]["python -c pass"], 0.5)
            print(f"\ncode from {tree}")
            print(f"first `bank index` (no cache): {firsts[i][0]:.2f} s, peak {firsts[i][1] / 1024:.0f} MiB")
            print(f"{'command':<30} {'p50 ms':>8} {'max ms':>8} {'x pass':>7} {'cpu p50 ms':>11} {'peak MiB':>9}")
            for name in cases:
                p50 = percentile(times[i][name], 0.5)
                cpu = percentile(cpus[i][name], 0.5)
                print(f"{name:<30} {p50 * 1000:>8.1f} {max(times[i][name]) * 1000:>8.1f} {p50 / bare:>7.2f} {cpu * 1000:>11.0f} {peaks[i][name] / 1024:>9.0f}")
        if args.memory_size:
            memory_cases = (("bank index from nothing", None), ("bank index, nothing changed", None),
                            ("bank index, one do changed", edit_do), ("bank capture, new lesson", None))  # fmt: skip
            for number, tree in enumerate(trees):
                # Each tree on a bank of its own: on a shared one the second tree's "new lesson"
                # would be the first tree's, a repeat that only bumps `seen`.
                big = Path(tmp) / f"big-{number}"
                write_bank(big, args.memory_size)
                ENV["PYTHONPATH"] = str(tree)
                for label, change in memory_cases:
                    if change is not None:
                        change(big, 1)
                    argv = capture_new(1) if "capture" in label else [*BANK, "index"]
                    elapsed, rss, _ = spawn(argv, big)
                    print(f"{tree}: {args.memory_size:,} lessons, {label}: {elapsed:.2f} s, peak {rss / 1024:.0f} MiB")


if __name__ == "__main__":
    main()
