"""Crash benchmark: kill -9 at random moments of `bank groom --commit` and `bank groom --branch`.

Run: python benchmarks/crash_groom.py [--runs 100] [--lessons 80] [--seed 12] [--keep]

A bank of 80 lessons (promotions into 15 rules, 10 skills and 5 docs, deletions, reviews, waits:
about 120 paths change) sits in a checkout that also holds the user's own uncommitted work: an
unstaged edit, a staged change and an untracked file. Each trial copies that checkout, starts the
real CLI in its own process group and SIGKILLs the whole group (git children too) after a random
delay: half the delays are drawn over the whole run, half from the moment the groom's journal
appears, over as long as a reference run kept it (so many kills land mid-transaction). Then:

- right after the kill: is the checkout as before, as after a complete groom, or something in
  between (what the next run has to repair)?
- the next run (`bank groom --dry-run`, which only recovers): the checkout must be exactly as
  before or exactly as after: any other state counts as a half-applied tree;
- then the same command again, to completion: the result must equal the reference groom's,
  byte for byte, with the user's uncommitted work untouched (`--branch`: the checkout never
  changes at all, and the branch holds the reference tree).

Prints the counts per mode; exits 1 when any half-applied tree or checkout change is found.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import bench_groom  # beside this file

from lessonbank.bank import scaffold
from lessonbank.bank.lesson import Lesson, render
from lessonbank.state import statedir

ENV = {**bench_groom.ENV}  # git with an isolated identity and no user config
ENV.pop("BANK_ROOT", None)
BANK = [sys.executable, "-m", "lessonbank"]
BRANCH = "bank-groom/weekly"
JOURNAL = f"{statedir.STATE}/{statedir.GROOM_JOURNAL}/journal.json"
git = bench_groom.git  # git in a folder, stdout back; exits on a failure


def bank(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*BANK, "--root", str(root), *args], env=ENV, capture_output=True, text=True)


def lesson(i: int, first: str) -> tuple[str, str]:
    """Lesson number i: its slug and text. Eight kinds in turn: promotions, a deletion, a review or a wait."""
    slug = f"lesson-{i:03d}"
    kind = i % 8
    fields: dict[str, object] = {
        "id": "01JCRASH" + hashlib.sha1(slug.encode()).hexdigest()[:18].upper(),
        "slug": slug,
        "title": f"Lesson {i}: keep module {i % 20} honest",
        "when": f"editing src/mod{i % 20}.py",
        "do": f"call func_{i % 20}() with a timeout of {i} seconds",
        "seen": 2,
        "sessions": ["s1", "s2"],
        "created": "2026-11-01",
        "updated": "2026-11-01",
        "tags": [f"tool:tool{i % 10}"],
        "body": f"Lesson {i}.\n\nWhy: an incident in module {i % 20}.\n",
    }
    if kind <= 3:
        fields.update(promote_to=f"rule:topic{i % 15}", verify={"match": [rf"def func_{i % 20}\("]})
    elif kind == 4:
        fields.update(promote_to=f"skill:tool{i % 10}")
    elif kind == 5:
        fields.update(promote_to=f"doc:docs/guide{i % 5}.md")
    elif kind == 6:
        fields.update(promote_to="rule:legacy", verify={"match": [rf"legacy_call_{i}\("]})
    elif i % 16 == 7:
        fields.update(
            promote_to="rule:review",
            verified={"at": "2026-11-01", "commit": first},
            verify={"paths": ["src/mod0.py"]},
        )
    else:
        fields.update(promote_to="rule:later", seen=1, sessions=["s1"])
    return slug, render(Lesson(**fields))  # type: ignore[arg-type]


def build(root: Path, n_lessons: int) -> None:
    """The checkout every trial starts from: a committed bank, plus the user's uncommitted work."""
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    for i in range(20):
        (root / "src").mkdir(exist_ok=True)
        (root / "src" / f"mod{i}.py").write_text(f"def func_{i}(timeout=None):\n    return {i}\n")
    (root / "docs").mkdir()
    for i in range(5):
        (root / "docs" / f"guide{i}.md").write_text(f"# Guide {i}\n\nHand-written.\n")
    (root / "README.md").write_text("# project\n")
    (root / "CLAUDE.md").write_text("# Memory\n\nHand-written.\n")
    scaffold.init(root)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "project")
    first = git(root, "rev-parse", "HEAD").strip()
    (root / "src" / "mod0.py").write_text("def func_0(timeout=5):\n    return 0\n")
    for i in range(n_lessons):
        slug, text = lesson(i, first)
        (root / "lessons" / f"{slug}.md").write_text(text)
    if bank(root, "index").returncode != 0:
        raise SystemExit("bank index failed")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "lessons")
    # The user's own work in progress, which no groom may touch.
    (root / "src" / "mod5.py").write_text("def func_5(timeout=None):\n    return 'edited, not staged'\n")
    (root / "README.md").write_text("# project\n\nstaged, not committed\n")
    git(root, "add", "README.md")
    (root / "notes.txt").write_text("untracked\n")


def snapshot(root: Path) -> dict[str, object]:
    """Everything of a checkout a groom could change; the bank's local state folder aside."""
    files = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if rel.startswith((".git/", f"{statedir.STATE}/")) or not (path.is_file() or path.is_symlink()):
            continue
        files[rel] = path.read_bytes() if path.is_file() else b"-> " + os.readlink(path).encode()
    return {
        "files": files,
        # The commits by tree, parents and message: a groom's commit differs by its time alone.
        "log": git(root, "log", "-3", "--format=%T %P %B"),
        "tree": git(root, "rev-parse", "HEAD^{tree}").strip(),
        "branch": git(root, "branch", "--show-current").strip(),
        "index": git(root, "ls-files", "-s"),
        "status": git(root, "status", "--porcelain", "--untracked-files=all"),
    }


def leftovers(root: Path) -> list[str]:
    """What a finished groom must not leave: a journal, git locks, temporary files, extra worktrees."""
    found = []
    if (root / JOURNAL).exists():
        found.append("journal")
    for lock in [*(root / ".git").rglob("*.lock"), *(root / ".git").glob("lessonbank*")]:
        found.append(lock.relative_to(root).as_posix())
    for path in root.rglob(".*.tmp"):
        if ".git" not in path.parts:
            found.append(path.relative_to(root).as_posix())
    if git(root, "worktree", "list", "--porcelain").count("worktree ") != 1:
        found.append("worktree")
    return found


def branch_tree(root: Path) -> str | None:
    done = subprocess.run(
        ["git", "rev-parse", "-q", "--verify", f"{BRANCH}^{{tree}}"],
        cwd=root,
        env=ENV,
        capture_output=True,
        text=True,
    )
    return done.stdout.strip() if done.returncode == 0 else None


def reference(pristine: Path, work: Path, mode: str) -> tuple[dict[str, object], str, float, float, float]:
    """The complete groom's result, its duration, and when its journal exists (seconds from start)."""
    root = work / f"reference-{mode}"
    shutil.copytree(pristine, root, symlinks=True)
    args = ["groom", "--commit"] if mode == "commit" else ["groom", "--branch", BRANCH]
    start = time.perf_counter()
    proc = subprocess.Popen(
        [*BANK, "--root", str(root), *args], env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    seen: list[float] = []
    while proc.poll() is None:
        if (root / JOURNAL).exists():
            seen.append(time.perf_counter() - start)
        time.sleep(0.0005)
    total = time.perf_counter() - start
    out, err = proc.communicate()
    if proc.returncode != 0:
        raise SystemExit(f"reference groom failed: {out.decode()}{err.decode()}")
    after = snapshot(root)
    tree = branch_tree(root) if mode == "branch" else str(after["tree"])
    assert tree is not None
    shutil.rmtree(root)
    lo, hi = (min(seen), max(seen)) if seen else (0.0, total)
    return after, tree, total, lo, hi


def changed_paths(before: dict[str, object], after: dict[str, object]) -> int:
    """How many files differ between two snapshots."""
    old, new = before["files"], after["files"]
    assert isinstance(old, dict) and isinstance(new, dict)
    return sum(1 for path in set(old) | set(new) if old.get(path) != new.get(path))


def classify(now: dict[str, object], before: dict[str, object], after: dict[str, object]) -> str:
    if now == before:
        return "before"
    if now == after:
        return "after"
    return "half"


def trial(
    pristine: Path, work: Path, mode: str, delay: float, targeted: bool, before: dict[str, object],
    after: dict[str, object], tree: str,
) -> dict[str, object]:  # fmt: skip
    """One run killed after `delay` seconds (from its start, or from the moment its journal appears)."""
    root = work / "trial"
    if root.exists():
        shutil.rmtree(root)
    shutil.copytree(pristine, root, symlinks=True)
    args = ["groom", "--commit"] if mode == "commit" else ["groom", "--branch", BRANCH]
    proc = subprocess.Popen(
        [*BANK, "--root", str(root), *args], env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True,
    )  # fmt: skip
    if targeted:  # wait for the transaction to begin, then kill at a random moment of it
        while proc.poll() is None and not (root / JOURNAL).exists():
            time.sleep(0.0005)
    time.sleep(delay)
    in_txn = (root / JOURNAL).exists()
    finished = proc.poll() is not None
    if not finished:
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    landed_branch = mode == "branch" and branch_tree(root) is not None
    raw = classify(snapshot(root), before, after) if mode == "commit" else (
        "before" if snapshot(root) == before else "changed"
    )  # fmt: skip
    recover = bank(root, "groom", "--dry-run")
    recovered = snapshot(root)
    if mode == "commit":
        state = classify(recovered, before, after)
    else:
        state = "before" if recovered == before else "half"
        if branch_tree(root) not in (None, tree):
            state = "half"
    rerun = bank(root, *args)
    final = snapshot(root)
    if mode == "commit":
        ok = final == after and rerun.returncode == 0
    else:
        exists_before = landed_branch
        ok = final == before and branch_tree(root) == tree and (rerun.returncode == 0 or exists_before)
    rest = leftovers(root)
    return {
        "killed": not finished,
        "in_txn": in_txn,
        "raw": raw,
        "recovered": state,
        "recover_ok": recover.returncode == 0,
        "final_ok": ok and not rest,
        "leftovers": rest,
        "user_work": user_work_intact(final, before),
    }


def user_work_intact(final: dict[str, object], before: dict[str, object]) -> bool:
    """The unstaged edit, the staged change and the untracked file are as the user left them."""
    files_now, files_then = final["files"], before["files"]
    assert isinstance(files_now, dict) and isinstance(files_then, dict)
    same = all(files_now.get(p) == files_then.get(p) for p in ("src/mod5.py", "README.md", "notes.txt"))
    status = str(final["status"]).splitlines()
    return same and "M  README.md" in status and " M src/mod5.py" in status and "?? notes.txt" in status


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100, help="kills per mode (default 100)")
    parser.add_argument("--lessons", type=int, default=80)
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--modes", default="commit,branch")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    opts = parser.parse_args()
    rng = random.Random(opts.seed)
    work = Path(tempfile.mkdtemp(prefix="crash-groom-"))
    failed = False
    try:
        pristine = work / "pristine"
        build(pristine, opts.lessons)
        before = snapshot(pristine)
        for mode in opts.modes.split(","):
            after, tree, total, lo, hi = reference(pristine, work, mode)
            changed = changed_paths(before, after)
            print(
                f"\n{mode}: reference groom {total:.2f} s, journal present {lo:.2f}-{hi:.2f} s, "
                f"{changed} paths changed in the checkout"
            )  # fmt: skip
            counts: dict[str, int] = {}
            bad: list[str] = []
            started = time.perf_counter()
            for n in range(opts.runs):
                targeted = n % 2 == 1
                delay = rng.uniform(0.0, hi - lo + 0.02) if targeted else rng.uniform(0.0, total)
                result = trial(pristine, work, mode, delay, targeted, before, after, tree)
                for key in ("killed", "in_txn"):
                    counts[key] = counts.get(key, 0) + bool(result[key])
                counts[f"raw {result['raw']}"] = counts.get(f"raw {result['raw']}", 0) + 1
                counts[f"next {result['recovered']}"] = counts.get(f"next {result['recovered']}", 0) + 1
                if result["recovered"] == "half" or not result["final_ok"] or not result["user_work"]:
                    bad.append(f"trial {n} at {delay:.3f} s: {result}")
            half = counts.get("next half", 0)
            user = sum(1 for b in bad if "'user_work': False" in b)
            changed_checkout = half if mode == "branch" else user
            print(f"  kills: {counts.get('killed', 0)} of {opts.runs} runs "
                  f"({counts.get('in_txn', 0)} with the journal open, i.e. mid-transaction)")  # fmt: skip
            raw = ", ".join(f"{k[4:]} {v}" for k, v in sorted(counts.items()) if k.startswith("raw "))
            print(f"  checkout right after the kill: {raw}")
            nxt = ", ".join(f"{k[5:]} {v}" for k, v in sorted(counts.items()) if k.startswith("next "))
            print(f"  after the next run (recovery): {nxt}")
            print(f"  half-applied trees after the next run: {half} (target 0)")
            print(f"  changes to the user's checkout: {changed_checkout} (target 0)")
            print(f"  runs that did not end exactly as the reference groom: {len(bad)} (target 0)")
            print(f"  {opts.runs} trials in {time.perf_counter() - started:.0f} s")
            for line in bad[:5]:
                print("   ", line)
            failed = failed or bool(bad)
    finally:
        if opts.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
