"""Every benchmark that needs no corpus runs to its end at a tiny size and prints its table: the
figures in benchmarks/RESULTS.md come from these scripts, and one that stopped working would
leave them unrepeatable. The sizes here measure nothing; the scripts' own defaults do.
(crash_groom.py runs in tests/attacks/test_groom_is_all_or_nothing.py.)"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"

# (script, tiny arguments, a line of its report that only a finished run prints)
RUNS = [
    ("bench_hook.py", ["--sizes", "100", "--runs", "1", "--no-agents", "--cases", "bash match"], "bash match, fresh"),
    ("bench_cli.py", ["--size", "100", "--runs", "1"], "bank capture, repeat (bump)"),
    ("bench_caches.py", ["--size", "100", "--runs", "1", "--slow-runs", "1"], "compiled index from INDEX.md"),
    ("bench_layers.py", ["--runs", "1", "--project", "50", "--team", "50", "--single", "100"], "bash miss"),
    ("bench_trial.py", ["--runs", "1", "--lessons", "50"], "arms.assign in process"),
    ("bench_groom.py", ["--files", "50", "--lessons", "20"], "second groom (plan only)"),
    ("bench_safety.py", ["--runs", "1"], "hook 50 MB prompt"),
    ("trial_calibration.py", ["--runs", "20", "--only", "sessions"], "sessions "),
    ("secrets_coverage.py", [], "| commit message |"),
]


@pytest.mark.parametrize(("script", "args", "last"), RUNS, ids=[script for script, _, _ in RUNS])
def test_a_benchmark_runs_to_its_report(script: str, args: list[str], last: str, tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / script), *args],
        capture_output=True, text=True, cwd=tmp_path, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert last in done.stdout, done.stdout[-2000:]
