"""Benchmark: `bank groom` of 1,000 eligible lessons in a repository of 5,000 tracked files.

Run: python benchmarks/bench_groom.py [--files 5000] [--lessons 1000] [--keep]
Prints the groom's figures beside references measured in the same run (git ls-files,
git grep, git status), so the numbers mean something on whatever machine runs them.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from lessonbank.bank import names, scaffold
from lessonbank.bank.git import GitRepo
from lessonbank.bank.lesson import Lesson, render
from lessonbank.bank.store import Bank
from lessonbank.groom.apply import carry_out
from lessonbank.groom.decide import decide
from lessonbank.groom.plan import head_snapshot, plan_groom
from lessonbank.trial import ledger

ENV = {
    **os.environ,
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
}
WORDS = "alpha beta gamma delta epsilon zeta theta kappa lambda sigma omega".split()


def git(root: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "gc.auto=0", *args], cwd=root, env=ENV, capture_output=True, text=True
    )
    if done.returncode != 0:
        raise SystemExit(f"git {' '.join(args)} failed: {done.stderr.strip()}")
    return done.stdout


def source_file(rng: random.Random, i: int) -> str:
    lines = [f'"""Module {i}."""', "", "import os", ""]
    for j in range(12):
        args = ", ".join(rng.sample(WORDS, 3))
        lines += [f"def func_{i}_{j}({args}):", f"    total = {rng.randint(1, 999)}"]
        lines += [f"    total += {w}" for w in rng.sample(WORDS, 3)]
        if i % 10 == 0 and j == 0:
            lines.append(f"    legacy_call_{i}(total)")
        lines += ["    return total", ""]
    return "\n".join(lines) + "\n"


def build(root: Path, n_files: int, n_lessons: int) -> dict[str, int]:
    rng = random.Random(20261129)
    git(root, "init", "-q", "-b", "main")
    for i in range(n_files):
        folder = root / "src" / f"pkg{i // 100:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        name = f"test_mod{i}.py" if i % 7 == 0 else f"mod{i}.py"
        (folder / name).write_text(source_file(rng, i), encoding="utf-8")
    scaffold.init(root)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "project")
    base = git(root, "rev-parse", "HEAD").strip()
    kinds: dict[str, int] = {}
    for k in range(n_lessons):
        i = (k * 5) % n_files
        path = f"src/pkg{i // 100:03d}/" + (f"test_mod{i}.py" if i % 7 == 0 else f"mod{i}.py")
        verify: dict[str, object] = {}
        kind = k % 10
        if kind in (0, 1, 2):
            verify = {"match": [rf"def func_{i}_{k % 12}\("], "glob": "src/**/*.py"}
        elif kind in (3, 4):
            verify = {"match": [rf"\bfunc_{i}_3\b"]}
        elif kind == 5:
            verify = {"paths": [path]}
        elif kind == 6:
            verify = {"absent": [rf"legacy_call_{i}\("]}
        elif kind == 7:
            verify = {"match": [rf"def gone_{k}\("]}  # stale: matches nothing
        elif kind == 8:
            verify = {"paths": [path], "match": [r"total = \d+\n\s+total \+= \w+"]}
        kinds[str(kind)] = kinds.get(str(kind), 0) + 1
        dest = (
            f"rule:topic-{k % 20}"
            if k % 4
            else (f"skill:tool-{k % 3}" if k % 8 else f"doc:docs/notes-{k % 5}.md")
        )
        lesson = Lesson(
            id=names.new_id(now_ms=1_700_000_000_000 + k, rand=k.to_bytes(10, "big")),
            slug=f"lesson-{k:04d}",
            title=f"Lesson {k}: mind func_{i}",
            when=f"editing func_{i} in {path}",
            do="keep its total non-negative and call it with keyword arguments",
            promote_to=dest,
            commands=[r"\bpytest\b"] if k % 3 == 0 else [],
            paths=[f"src/pkg{i // 100:03d}/**/*.py"] if k % 2 else [],
            tags=["tool:pytest"] if k % 3 == 0 else ["lang:python"],
            seen=2 + k % 3,
            sessions=[f"s{k}-{n}" for n in range(2 + k % 3)],
            created="2026-11-01",
            updated="2026-11-01",
            verified={"at": "2026-11-01", "commit": base} if kind in (5, 8) else {},
            verify=verify,
        )
        (root / "lessons" / f"{lesson.slug}.md").write_text(render(lesson), encoding="utf-8")
    # Touch some anchors after verification, so a share of the lessons needs a human look.
    for i in range(25, n_files, 100):
        name = f"test_mod{i}.py" if i % 7 == 0 else f"mod{i}.py"
        target = root / "src" / f"pkg{i // 100:03d}" / name
        target.write_text(target.read_text(encoding="utf-8") + "# touched\n", encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "lessons")
    git(root, "repack", "-a", "-d", "-q")  # packed objects, as in any clone
    return kinds


def timed(fn):  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=5000)
    parser.add_argument("--lessons", type=int, default=1000)
    parser.add_argument("--keep", action="store_true", help="keep the temporary repository")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-groom-"))
    root = work / "repo"
    root.mkdir()
    try:
        setup, _ = timed(lambda: build(root, args.files, args.lessons))
        tracked = len(git(root, "ls-files").splitlines())
        print(
            f"repository: {tracked} tracked files, {args.lessons} eligible lessons (built in {setup:.1f} s)"
        )
        ref_ls, _ = timed(lambda: git(root, "ls-files"))
        ref_grep, _ = timed(lambda: subprocess.run(
            ["git", "grep", "-c", "-E", r"def func_1_1\(", "HEAD"], cwd=root, env=ENV, capture_output=True
        ))  # fmt: skip
        ref_status, _ = timed(lambda: git(root, "status", "--porcelain"))
        # Where a plan's time goes, measured piece by piece before the real run.
        bank = Bank.open(root)
        t_load, loaded = timed(bank.load)
        probe = GitRepo(root)
        snap = head_snapshot(bank, probe)
        t_read, _ = timed(lambda: probe.read_head(snap.tracked))
        probe.close()
        probe = GitRepo(root)
        snap = head_snapshot(bank, probe)
        t_decide, _ = timed(lambda: decide([x.lesson for x in loaded], snap))
        probe.close()
        repo = GitRepo(root)
        t_plan, plan = timed(lambda: plan_groom(bank, repo))
        t_flags, _ = timed(lambda: ledger.flagged_lessons(bank))  # `bank groom` prints these too
        # What `bank groom --commit` runs: the checks, the journal, the writes and the commit, as one.
        t_apply, applied = timed(lambda: carry_out(bank, repo, plan, commit=True))
        repo.close()
        counts = ", ".join(f"{o} {plan.count(o)}" for o in ("promote", "delete", "needs-review", "wait"))
        written = sum(1 for _, action in applied.results if action != "unchanged")
        print(f"decisions: {counts}; {written} files written or deleted; commit {(applied.sha or '-')[:7]}")
        total = t_plan + t_flags + t_apply
        print(f"groom total:      {total:6.2f} s   (target < 10 s)")
        print(
            f"  plan:           {t_plan:6.2f} s  (measured apart: parse lessons {t_load:.2f} s, "
            f"read files at HEAD {t_read:.2f} s, verdicts incl. reading {t_decide:.2f} s)"
        )
        print(f"  trial flags:    {t_flags:6.2f} s")
        print(f"  apply + commit: {t_apply:6.2f} s  (one transaction: checks, journal, writes, commit)")
        print(f"reference git ls-files:          {ref_ls * 1000:7.1f} ms")
        print(f"reference git grep (1 pattern):  {ref_grep * 1000:7.1f} ms")
        print(f"reference git status:            {ref_status * 1000:7.1f} ms")
        repo2 = GitRepo(root)
        t_again, again = timed(lambda: plan_groom(Bank.open(root), repo2))
        repo2.close()
        print(f"second groom (plan only): {t_again:6.2f} s, changes: {again.changes}")
    finally:
        if args.keep:
            print(f"kept {root}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
