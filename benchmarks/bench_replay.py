"""Benchmark: `bank replay` on the shared corpus, the project's quality figure for what the scan learns.

For each project under the corpus it learns from the earlier sessions (the default split: the
later third is replayed) into a temporary bank, accepting the candidates at or above each
`--accept-above` given (default 0.8 and 0, that is every candidate), then replays the later
sessions' tool calls through the PreToolUse hook's code and prints, per project and in all: the
later shell failures, those repeating an earlier session's error, those intercepted, the fires
on calls that succeeded, and the tokens injected. With --show, every accepted lesson and every
repeat, to be read against the transcripts.

Usage: python benchmarks/bench_replay.py [--corpus PATH] [--accept-above 0.8 --accept-above 0] [--show] [--json]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from lessonbank.cli.replay import run_replay
from lessonbank.scan import sources

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus" / "transcripts"
FIGURES = ("learned", "replayed", "candidates", "accepted", "calls", "failures", "repeats", "intercepted",
           "own", "fires", "on_success", "tokens")  # fmt: skip


def project(folder: Path, accept_above: float) -> dict[str, Any]:
    files = sources.locate(folder, paths=(folder,))
    started = time.perf_counter()
    report = run_replay(files, None, accept_above)
    figures = {name: getattr(report, name) for name in FIGURES}
    figures.update(project=folder.name, seconds=round(time.perf_counter() - started, 2), cut=report.cut)
    figures["lessons"] = [{**vars(v), "tokens": v.tokens} for v in report.sorted_lessons()]
    figures["repeats_seen"] = report.examples
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--accept-above", type=float, action="append")
    parser.add_argument("--show", action="store_true", help="print each accepted lesson and each repeat")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    thresholds = args.accept_above or [0.8, 0.0]
    folders = sorted(p for p in args.corpus.iterdir() if p.is_dir())
    results = {str(t): [project(f, t) for f in folders] for t in thresholds}
    if args.json:
        print(json.dumps(results, indent=1, ensure_ascii=False))
        return
    head = ("project", "learned", "replayed", "cand.", "accepted", "calls", "failures", "repeats",
            "intercepted", "fires", "on success", "~tokens", "s")  # fmt: skip
    for threshold, rows in results.items():
        print(f"\n--accept-above {threshold}")
        print(" | ".join(head))
        total = dict.fromkeys(FIGURES, 0)
        for row in rows:
            cells = [row["project"]] + [str(row[k]) for k in ("learned", "replayed", "candidates", "accepted", "calls",
                                                              "failures", "repeats", "intercepted", "fires",
                                                              "on_success", "tokens", "seconds")]  # fmt: skip
            print(" | ".join(cells))
            for name in FIGURES:
                total[name] += row[name]
        print(" | ".join(["all"] + [str(total[k]) for k in ("learned", "replayed", "candidates", "accepted", "calls",
                                                           "failures", "repeats", "intercepted", "fires",
                                                           "on_success", "tokens")]))  # fmt: skip
        if args.show:
            for row in rows:
                for item in row["lessons"]:
                    print(f"  {row['project']}: lesson {item['slug']} ({item['kind']}): {item['fires']} fires, "
                          f"{item['on_success']} on success, {item['intercepted']} intercepted")
                for item in row["repeats_seen"]:
                    caught = ", ".join(item["intercepted_by"]) or "missed"
                    print(f"  {row['project']}: repeat [{item['kind']}] `{item['command'][:70]}` -> "
                          f"{item['error'][:80]} ({caught})")


if __name__ == "__main__":
    main()
