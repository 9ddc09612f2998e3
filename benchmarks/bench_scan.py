"""Benchmark: `bank scan` over the shared transcript corpus (~20 MB of real Claude Code and Codex sessions).

Prints, measured in the same run and interleaved run by run so both see the same machine load:
- the scan's throughput (read, prefilter, parse, detect) in MB/s, beside a plain loop of
  `json.loads` over the same lines;
- the whole in-process `bank scan` into a fresh bank (store written, candidates merged);
- a rescan with nothing new (load state, stat every file, write nothing);
- with --baseline DIR (the `tooling` folder of another checkout): that checkout's scan and this
  one's, each in its own child process, runs interleaved, CPU time beside a json.loads loop timed
  in the same child (a before/after comparison under one machine load);
- with --memory: peak RSS of a child process scanning the corpus once and five times over in one
  file, to show memory stays flat whatever the file size.

Usage: python benchmarks/bench_scan.py [--runs 7] [--corpus PATH] [--memory] [--baseline DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from cache_reset import forget

from lessonbank.bank import scaffold
from lessonbank.bank.store import Bank
from lessonbank.scan import sources
from lessonbank.scan.candidates import Store, run_scan

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus" / "transcripts"


def json_loop(paths: list[Path]) -> None:
    """The reference: every line through json.loads, nothing else."""
    loads = json.loads
    for path in paths:
        with open(path, "rb") as handle:
            for line in handle:
                try:  # noqa: SIM105 (contextlib.suppress per line would slow the reference down)
                    loads(line)
                except ValueError:
                    pass


def fresh_bank(parent: Path, name: str) -> Bank:
    root = parent / name
    root.mkdir()
    scaffold.init(root)
    return Bank.find(root=root)


def timed(fn: Callable[[], object], cpu: list[float] | None = None) -> float:
    """Wall seconds of one call; its CPU seconds go to `cpu` (steadier on a shared machine)."""
    start, start_cpu = time.perf_counter(), time.process_time()
    fn()
    if cpu is not None:
        cpu.append(time.process_time() - start_cpu)
    return time.perf_counter() - start


def figures(wall: list[float], cpu: list[float], size: int) -> str:
    best, median = min(wall), statistics.median(wall)
    return (
        f"{size / 1e6 / best:6.1f} MB/s best, {size / 1e6 / median:6.1f} MB/s median wall;"
        f" {size / 1e6 / min(cpu):6.1f} MB/s by CPU time ({min(cpu) * 1000:.0f} ms)"
    )


def peak_rss_kb(paths: list[Path]) -> int:
    code = (
        "import resource, sys\n"
        "from pathlib import Path\n"
        "from lessonbank.scan import sources\n"
        "sources.scan_files([Path(p) for p in sys.argv[1:]], {})\n"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, *map(str, paths)], capture_output=True, text=True, check=True
    )
    return int(done.stdout.strip())


_CHILD = """\
import json, sys, time
from pathlib import Path
from lessonbank.scan import sources
paths = [Path(p) for p in sys.argv[1:]]
def loop():
    for path in paths:
        with open(path, "rb") as handle:
            for line in handle:
                try:
                    json.loads(line)
                except ValueError:
                    pass
def cpu(fn):
    start = time.process_time()
    fn()
    return time.process_time() - start
from lessonbank.scan import detect, outcomes
loop(); sources.scan_files(paths, {})  # warm the page cache and the imports
from cache_reset import forget
forget()  # what a new `bank scan` process pays: no cached answers
best_loop = min(cpu(loop) for _ in range(3))
print(best_loop, cpu(lambda: sources.scan_files(paths, {})))
"""


def child_cpu(tooling: Path, paths: list[Path]) -> tuple[float, float]:
    """(json.loads loop, scan) CPU seconds in a fresh process running `tooling`'s scanner."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join((str(tooling), str(Path(__file__).resolve().parent))))
    done = subprocess.run([sys.executable, "-c", _CHILD, *map(str, paths)], env=env, capture_output=True,
                          text=True, check=True)  # fmt: skip
    loop, scan = map(float, done.stdout.split())
    return loop, scan


def compare(baseline: Path, paths: list[Path], size: int, runs: int) -> None:
    """This checkout's scan beside another's, interleaved run by run, each in a new process."""
    here = Path(__file__).resolve().parents[1] / "tooling"
    rows: dict[str, list[tuple[float, float]]] = {"baseline": [], "this checkout": []}
    for _ in range(runs):
        rows["baseline"].append(child_cpu(baseline, paths))
        rows["this checkout"].append(child_cpu(here, paths))
    for name, times in rows.items():
        scan = min(t[1] for t in times)
        ratio = statistics.median(t[1] / t[0] for t in times)
        print(f"{name:<14} scan {size / 1e6 / scan:6.1f} MB/s by CPU time ({scan * 1000:.0f} ms best), "
              f"{ratio:.2f}x its own json.loads loop (median)")  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--memory", action="store_true", help="also measure peak RSS on a 5x concatenation")
    parser.add_argument("--baseline", type=Path, help="another checkout's tooling folder, compared interleaved")
    args = parser.parse_args()
    if not args.corpus.is_dir():
        print(f"corpus not found at {args.corpus}; pass --corpus", file=sys.stderr)
        return 2
    paths = sources.locate(args.corpus, paths=(args.corpus,))
    size = sum(p.stat().st_size for p in paths)
    lines = 0
    for path in paths:  # warm the page cache, count the lines
        with open(path, "rb") as handle:
            lines += sum(1 for _ in handle)
    print(f"corpus: {len(paths)} files, {size / 1e6:.1f} MB, {lines} lines ({args.corpus})")
    print(f"python {sys.version.split()[0]}, {args.runs} interleaved runs each\n")
    if args.baseline:
        compare(args.baseline, paths, size, args.runs)
        print()

    tmp = Path(tempfile.mkdtemp(prefix="bench-scan-"))
    try:
        loop_t: list[float] = []
        core_t: list[float] = []
        full_t: list[float] = []
        loop_c: list[float] = []
        core_c: list[float] = []
        full_c: list[float] = []
        for i in range(args.runs):
            loop_t.append(timed(lambda: json_loop(paths), loop_c))
            forget()
            core_t.append(timed(lambda: sources.scan_files(paths, {}), core_c))
            bank = fresh_bank(tmp, f"full{i}")
            forget()
            full_t.append(timed(lambda bank=bank: run_scan(bank, paths, Store(bank).load()), full_c))  # type: ignore[misc]
        print(f"json.loads loop (reference)      {figures(loop_t, loop_c, size)}")
        print(f"scan: read + detect              {figures(core_t, core_c, size)}")
        print(f"bank scan in-process, new bank   {figures(full_t, full_c, size)}")
        ratio = statistics.median(core_t) / statistics.median(loop_t)
        ratio_cpu = min(core_c) / min(loop_c)
        print(f"scan time / json.loads loop time: {ratio:.2f} (median wall), {ratio_cpu:.2f} (best CPU)\n")

        bank = fresh_bank(tmp, "rescan")
        first = run_scan(bank, paths, Store(bank).load())
        found = len(first.new)
        rescan_t: list[float] = []
        for _ in range(args.runs * 3):
            rescan_t.append(timed(lambda: run_scan(bank, paths, Store(bank).load())))
        again = run_scan(bank, paths, Store(bank).load())
        print(f"candidates found: {found}; rescan read {again.stats.bytes_read} bytes")
        best, median = min(rescan_t), statistics.median(rescan_t)
        print(f"rescan with nothing new (load state, stat {len(paths)} files): "
              f"{best * 1000:.1f} ms best, {median * 1000:.1f} ms median")  # fmt: skip

        cli: list[float] = []
        ref: list[float] = []
        for _ in range(3):
            ref.append(timed(lambda: subprocess.run([sys.executable, "-c", "pass"], check=True)))
            cli.append(timed(lambda: subprocess.run(
                [sys.executable, "-m", "lessonbank", "--root", str(bank.root), "scan", "--path", str(args.corpus)],
                check=True, capture_output=True,
            )))  # fmt: skip
        print(f"`bank scan` process, nothing new: {min(cli) * 1000:.0f} ms best "
              f"(beside `python -c pass`: {min(ref) * 1000:.0f} ms)")  # fmt: skip

        if args.memory:
            big = tmp / "big.jsonl"
            with open(big, "wb") as out:
                for _ in range(5):
                    for path in paths:
                        out.write(path.read_bytes())
            small_kb = peak_rss_kb(paths)
            big_kb = peak_rss_kb([big])
            print(
                f"\npeak RSS scanning the corpus ({size / 1e6:.0f} MB in {len(paths)} files): {small_kb / 1024:.0f} MB"
            )
            print(
                f"peak RSS scanning one {big.stat().st_size / 1e6:.0f} MB file:               {big_kb / 1024:.0f} MB"
            )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
