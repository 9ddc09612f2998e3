"""Two costs issue 12 changed, each timed beside a reference in the same interleaved loop.

- `bank capture --dry-run` start to end (the secret gate loads detect-secrets), beside
  `python3 -c pass`;
- the PreToolUse hook on a 50 MB payload (a Bash command, an Edit path, a prompt), spawned as
  installed, beside `python3 -I -S -c pass`.

With `--baseline DIR` (the `tooling` folder of another checkout) that checkout runs the same
calls in the same loop, for a before/after under one machine load.

Usage: python benchmarks/bench_safety.py [--runs 15] [--baseline DIR]
"""

from __future__ import annotations

import argparse
import json
import os
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--baseline", type=Path, help="the tooling folder of another checkout")
    args = parser.parse_args()
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
                env = {**os.environ, "PYTHONPATH": str(tooling)}
                capture = [sys.executable, "-m", "lessonbank", "--root", str(root), "capture", "--dry-run",
                           "--when", "deploying with the token ghp_" + "a1B2" * 9, "--do", "rotate it",
                           "--promote-to", "rule:deploy"]  # fmt: skip
                times.setdefault((label, "bank capture --dry-run"), []).append(timed(capture, env, cwd=root))
                for name, data in raw.items():
                    hook = [sys.executable, "-I", "-S", str(tooling / HOOK)]
                    times.setdefault((label, name), []).append(timed(hook, env, stdin=data))
    print(f"{'checkout':10} {'call':28} {'median ms':>10} {'max ms':>8}  ({args.runs} runs, interleaved)")
    for (label, name), values in times.items():
        print(f"{label:10} {name:28} {statistics.median(values) * 1000:10.1f} {max(values) * 1000:8.1f}")


if __name__ == "__main__":
    main()
