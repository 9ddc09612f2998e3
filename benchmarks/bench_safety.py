"""What the safety work costs: the secret gate and huge payloads, each timed beside a reference in the same interleaved loop.

- `bank capture --dry-run` start to end (the secret gate loads detect-secrets), beside
  `python3 -c pass`: cold (no user cache yet) and warm (detect-secrets' table read back from it);
- the PreToolUse hook on a 50 MB payload (a Bash command, an Edit path, a prompt), spawned as
  installed, beside `python3 -I -S -c pass`;
- with `--fuzz`, the hook's matching alone (pre_tool.matching, in process) over an index holding
  every generated hostile regex and glob of tests/matching/test_hostile_patterns.py (the flagged
  ones are left out by the index, as `bank index` does) plus polynomial ones no static check
  flags, against adversarial subjects up to the 8 KiB cut, ASCII and not (`re`'s turn): the worst
  time of one call.

With `--baseline DIR` (the `tooling` folder of another checkout) that checkout runs the same
calls in the same loop, for a before/after under one machine load.

Usage: python benchmarks/bench_safety.py [--runs 15] [--baseline DIR] [--fuzz]
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
from pathlib import Path

TOOLING = Path(__file__).resolve().parents[1] / "tooling"
HOOK = Path("lessonbank") / "hooks" / "entry.py"
BIG = 50_000_000


def timed(command: list[str], env: dict[str, str], stdin: bytes | None = None, cwd: Path | None = None) -> float:
    start = time.perf_counter()
    subprocess.run(command, input=stdin, capture_output=True, env=env, cwd=cwd, check=False)
    return time.perf_counter() - start


def make_bank(root: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(TOOLING)}
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    bank = [sys.executable, "-m", "lessonbank", "--root", str(root)]
    subprocess.run([sys.executable, "-m", "lessonbank", "init", str(root)], env=env, check=True, capture_output=True)
    subprocess.run(
        [*bank, "capture", "--when", "running pytest in this repo", "--do", "pass -q",
         "--trigger-command", r"pytest(?!.*-q)", "--trigger-path", "**/*.py", "--keywords", "pytest",
         "--promote-to", "rule:testing"],
        env=env, check=True, capture_output=True,
    )  # fmt: skip


def fuzz() -> None:
    """Worst matching time of one PreToolUse call over hostile triggers and subjects."""
    sys.path.insert(0, str(TOOLING.parent))
    from tests.matching.test_hostile_patterns import HOSTILE, HOSTILE_GLOBS, SUBJECTS, _row

    from lessonbank.hooks import dispatch, pre_tool
    from lessonbank.index import compiled_build, compiled_pieces, compiled_read
    from lessonbank.state import statedir

    polynomial = ["a*" * k + "b" for k in range(2, 12)] + [r"(a|b)*a(a|b)*a(a|b)*c", r"\w*\w*\w*\w*!x", r".*a.*a.*a.*a.*b"]
    rows = [_row(f"h{i}", commands=[p]) for i, p in enumerate(HOSTILE + polynomial)]
    rows += [_row(f"g{i}", paths=[g]) for i, g in enumerate(HOSTILE_GLOBS + ["*a*a*b", "**/a*/**/b*/**/c"])]
    index = compiled_read.MemIndex(
        compiled_build.assemble([compiled_pieces.piece(r, {}) for r in rows], {"max_lessons": 3, "max_bytes": 4000})
    )
    subjects = SUBJECTS + ["a" * dispatch.MAX_TEXT, "a" * (dispatch.MAX_TEXT - 2) + "!", "git " + "ab" * 30000]
    subjects += [s + "é" for s in subjects]  # non-ASCII: what the small matcher leaves to `re`
    subjects = [s[: dispatch.MAX_TEXT] for s in subjects]  # as the hook cuts them (dispatch.cut)
    worst = (0.0, "")
    calls = 0
    with tempfile.TemporaryDirectory() as tmp:
        for n, subject in enumerate(subjects):
            for tool, tool_input in (("Bash", {"command": subject}), ("Edit", {"file_path": f"/r/{subject[:4000]}/{subject[:200]}.py"})):
                session = statedir.Session(tmp, f"s{n}{tool}")
                start = time.perf_counter()
                pre_tool.matching(index, tool, tool_input, "/r", "/r", session)
                took = time.perf_counter() - start
                calls += 1
                if took > worst[0]:
                    worst = (took, f"{tool} {subject[:30]!r}… ({len(subject)} chars)")
    print(f"fuzz: {len(rows)} hostile triggers ({len(HOSTILE)} generated regexes, {len(polynomial)} polynomial, "
          f"{len(HOSTILE_GLOBS) + 2} globs), {calls} calls: worst matching time {worst[0] * 1000:.1f} ms ({worst[1]})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--baseline", type=Path, help="the tooling folder of another checkout")
    parser.add_argument("--fuzz", action="store_true", help="only the in-process matching fuzz")
    args = parser.parse_args()
    if args.fuzz:
        fuzz()
        return
    checkouts = {"this": TOOLING}
    if args.baseline:
        checkouts["baseline"] = args.baseline.resolve()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "bank"
        make_bank(root)
        payloads = {
            "hook 50 MB command": {"tool_name": "Bash", "tool_input": {"command": "pytest " + "a" * BIG}},
            "hook 50 MB path": {"tool_name": "Edit", "tool_input": {"file_path": f"{root}/{'a' * BIG}.py"}},
            "hook 50 MB prompt": {"hook_event_name": "UserPromptSubmit", "prompt": "pytest " + "a" * BIG},
        }
        raw = {
            name: json.dumps({"hook_event_name": "PreToolUse", "cwd": str(root), "session_id": name, **p}).encode()
            for name, p in payloads.items()
        }
        times: dict[tuple[str, str], list[float]] = {}
        for _ in range(args.runs):
            env0 = {**os.environ}
            times.setdefault(("reference", "python3 -c pass"), []).append(timed([sys.executable, "-c", "pass"], env0))
            times.setdefault(("reference", "python3 -I -S -c pass"), []).append(
                timed([sys.executable, "-I", "-S", "-c", "pass"], env0)
            )
            for label, tooling in checkouts.items():
                # A cache folder of this run's own (the secrets gate keeps detect-secrets' table
                # there): "cold" starts without it, as a first capture does, "warm" reads it back.
                cache = Path(tmp) / f"cache-{label}"
                env = {**os.environ, "PYTHONPATH": str(tooling), "XDG_CACHE_HOME": str(cache)}
                capture = [sys.executable, "-m", "lessonbank", "--root", str(root), "capture", "--dry-run",
                           "--when", "deploying with the token ghp_" + "a1B2" * 9, "--do", "rotate it",
                           "--promote-to", "rule:deploy"]  # fmt: skip
                shutil.rmtree(cache, ignore_errors=True)
                times.setdefault((label, "bank capture --dry-run, cold"), []).append(timed(capture, env, cwd=root))
                times.setdefault((label, "bank capture --dry-run, warm"), []).append(timed(capture, env, cwd=root))
                for name, data in raw.items():
                    hook = [sys.executable, "-I", "-S", str(tooling / HOOK)]
                    times.setdefault((label, name), []).append(timed(hook, env, stdin=data))
    print(f"{'checkout':10} {'call':28} {'median ms':>10} {'max ms':>8}  ({args.runs} runs, interleaved)")
    for (label, name), values in times.items():
        print(f"{label:10} {name:28} {statistics.median(values) * 1000:10.1f} {max(values) * 1000:8.1f}")


if __name__ == "__main__":
    main()
