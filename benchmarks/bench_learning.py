"""Benchmark: what `bank scan` learns from the shared corpus, per project — lessons, not episodes.

For each project under the corpus (three real ones: C/CUDA + LaTeX, a Windows/Linux sysadmin
archive, a pnpm monorepo with Codex and Claude Code sessions) it scans the project's transcripts into
a fresh bank and prints:
- the candidates proposed, by kind;
- how many carry cause-based triggers: a command regex, path glob or keyword, none of which names a
  file the episode's own commands were given (a scratch file is no cause);
- how many carry verify fields groom can check;
- every non-mistake and non-lesson the scan set aside, and why (masked exit status, narrower run,
  removal, work in progress, typo, status report instead of a correction, no instruction in the
  episode, permission denials, …);
- with --show, each candidate as the lesson it would write (title, when, do, triggers, verify), to be
  read against the transcripts.

Usage: python benchmarks/bench_learning.py [--corpus PATH] [--show] [--json]
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from lessonbank.bank import scaffold
from lessonbank.bank.store import Bank
from lessonbank.cli.scan_report import SKIP_LABELS
from lessonbank.scan import sources
from lessonbank.scan.candidates import Store, run_scan
from lessonbank.scan.detect import Detector
from lessonbank.scan.events import Candidate, Event

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus" / "transcripts"
_FILE = re.compile(r"^[\w./~-]*[\w-]\.(?:c|h|cc|cpp|cu|py|ts|tsx|js|tex|sh|md|json|txt)$")


def scratch_names(cand: Candidate) -> set[str]:
    """File names the episode's own commands were given: a trigger naming one keys on the episode."""
    names: set[str] = set()
    for item in cand.evidence:
        for label in ("failing", "passing", "rerun", "command"):
            try:
                words = shlex.split(str(item.get(label, "")).replace("…", ""))
            except ValueError:
                words = str(item.get(label, "")).split()
            names.update(w.rsplit("/", 1)[-1] for w in words if _FILE.match(w))
    return names


def cause_based(cand: Candidate) -> bool:
    """A trigger on what causes the mistake: some trigger, and none naming the episode's files."""
    triggers = [*cand.commands, *cand.paths, *cand.keywords]
    if not triggers:
        return False
    names = scratch_names(cand)
    return not any(re.escape(name) in t or name in t for name in names for t in triggers)


FAILED = Counter[str]()  # failed tool calls the detector saw, for "of how many"


def _counting(feed: Any) -> Any:
    def wrapped(self: Detector, ev: Event) -> list[Candidate]:
        if ev.kind == "tool" and ev.status == "fail":
            FAILED["failed"] += 1
        return list(feed(self, ev))

    return wrapped


Detector.feed = _counting(Detector.feed)


def scan_project(folder: Path) -> dict[str, Any]:
    FAILED.clear()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "bank"
        root.mkdir()
        scaffold.init(root)
        bank = Bank.find(root=root)
        store = Store(bank).load()
        files = sources.locate(root, paths=(folder,))
        report = run_scan(bank, files, store, accept_above=1.01)
        cands = store.pending()
        return {
            "project": folder.name,
            "files": report.stats.files,
            "failed_calls": FAILED["failed"],
            "candidates": len(cands),
            "by_kind": dict(Counter(c.kind for c in cands)),
            "cause_triggers": sum(cause_based(c) for c in cands),
            "verify": sum(bool(c.verify) for c in cands),
            "set_aside": dict(sorted(report.stats.skipped.items(), key=lambda kv: (-kv[1], kv[0]))),
            "lessons": [
                {"kind": c.kind, "title": c.title, "confidence": c.confidence, "needs_words": bool(c.signals.get("needs_words")), "when": c.when, "do": c.do, "commands": c.commands,
                 "paths": c.paths, "keywords": c.keywords, "verify": c.verify, "seen": len(c.sessions),
                 "cause_based": cause_based(c)}
                for c in cands
            ],
        }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--show", action="store_true", help="print each candidate as the lesson it would write")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    results = [scan_project(p) for p in sorted(args.corpus.iterdir()) if p.is_dir()]
    if args.json:
        print(json.dumps(results, indent=1, ensure_ascii=False))
        return
    total = Counter[str]()
    for res in results:
        kinds = ", ".join(f"{n} {k}" for k, n in sorted(res["by_kind"].items()))
        print(f"{res['project']} ({res['files']} transcripts, {res['failed_calls']} failed tool calls)")
        print(f"  candidates: {res['candidates']} ({kinds or 'none'})")
        print(f"  with cause-based triggers: {res['cause_triggers']} of {res['candidates']}")
        print(f"  with verify fields: {res['verify']} of {res['candidates']}")
        aside = sum(res["set_aside"].values())
        named = [f"{n} {SKIP_LABELS.get(why, (why, why))[n != 1]}" for why, n in res["set_aside"].items()]
        print(f"  set aside: {aside}: " + ", ".join(named))
        for key in ("candidates", "cause_triggers", "verify"):
            total[key] += res[key]
        total["set_aside"] += aside
        if args.show:
            for item in res["lessons"]:
                mark = "needs words" if item["needs_words"] else "ACCEPTED at 0.8" if item["confidence"] >= 0.8 else "review"
                print(f"  - [{item['kind']}] {item['confidence']:.2f} ({mark}) {item['title']}")
                print(f"      when: {item['when']}")
                print(f"      do:   {item['do']}")
                trig = "; ".join([*item["commands"], *item["paths"], *(f"kw:{k}" for k in item["keywords"])])
                print(f"      triggers: {trig}")
                print(f"      verify: {item['verify'] or '-'}  seen: {item['seen']}")
    print(
        f"all: {total['candidates']} candidates, {total['cause_triggers']} with cause-based triggers, "
        f"{total['verify']} with verify fields, {total['set_aside']} set aside"
    )


if __name__ == "__main__":
    main()
