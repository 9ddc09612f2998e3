"""PreToolUse latency with layered banks: a project bank plus two team banks of 5,000 lessons each,
beside one bank of 10,000 lessons and a bare interpreter start, interleaved run by run.

The banks are realistic_bank's generator (imported, not copied), each layer with its own
seed so the layers hold different lessons, as real team banks would. The team banks sit where
`bank remote add` clones them (`$XDG_DATA_HOME/lessonbank/teams/NAME`, listed in remotes.json)
but are not git clones: the hooks read only their INDEX.md and compiled index, so git plays no
part in what is timed. Each round spawns, through `/bin/sh -c` as Claude Code does: the layered
project's hook (XDG_DATA_HOME pointing at the teams), the 10k bank's hook (an empty data folder,
so it has no other layer), and `python3 -I -S -c pass`, for a Bash call that fits lessons in
every layer (a new session per call, so every call matches and answers) and one that fits none.

With `--baseline DIR` (the `tooling` folder of another checkout), that checkout's hook script also
runs, in the same interleaved loop, on copies of the layered project and its team banks (without
their compiled indexes, so its first call builds them in its own format), and more columns give
its times: a before/after comparison under one machine load.

Usage: python benchmarks/bench_layers.py [--runs 200] [--project 1000] [--team 5000] [--single 10000]
       [--baseline DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_hook  # noqa: E402 - the calls and payloads
import realistic_bank  # noqa: E402 - the generator

from lessonbank.bank.lesson import render  # noqa: E402
from lessonbank.bank.render import regenerate  # noqa: E402
from lessonbank.bank.store import Bank  # noqa: E402
from lessonbank.index import layers  # noqa: E402
from lessonbank.install import claude, launcher  # noqa: E402

CALLS = [c for c in bench_hook.CALLS if c[0] in ("bash match", "bash miss")]


def build(root: Path, n: int, seed: int, hooks: bool) -> float:
    """A bank of n generated lessons (realistic_bank.synthetic with this seed); its build seconds."""
    root.mkdir(parents=True)
    (root / "bank.toml").write_text("", encoding="utf-8")
    (root / "lessons").mkdir()
    for lesson in realistic_bank.synthetic(n, seed=seed):
        (root / "lessons" / f"{lesson.slug}.md").write_text(render(lesson), encoding="utf-8")
    started = time.perf_counter()
    regenerate(Bank.open(root))
    built = time.perf_counter() - started
    if hooks:
        claude.install(root)
    return built


def data_folder(path: Path) -> str:
    """The lessonbank folder a hook whose XDG_DATA_HOME is `path` reads, with the launcher the
    installed hook command runs written there (without it the command exits quietly)."""
    os.environ["XDG_DATA_HOME"] = str(path)  # as launcher and layers find it; each spawn sets its own
    launcher.write()
    folder = layers.data_dir()
    assert folder is not None
    return folder


def spawn(command: str, payload: bytes | None, cwd: Path, env: dict[str, str]) -> tuple[float, bytes]:
    started = time.perf_counter()
    done = subprocess.run(["/bin/sh", "-c", command], input=payload or b"", stdout=subprocess.PIPE, cwd=cwd, env=env, check=True)
    return time.perf_counter() - started, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--project", type=int, default=1000, help="lessons in the layered project's own bank")
    parser.add_argument("--team", type=int, default=5000, help="lessons in each of the two team banks")
    parser.add_argument("--single", type=int, default=10000, help="lessons in the single bank compared")
    parser.add_argument("--baseline", type=Path, help="another checkout's tooling folder, timed alongside (layered)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-layers-") as tmp:
        base = Path(tmp)
        data, empty = base / "data", base / "empty-data"
        empty.mkdir()
        project, single = base / "project", base / "single"
        times = {"project": build(project, args.project, 11, hooks=True), "single": build(single, args.single, 7, hooks=True)}
        data_folder(empty)
        folder = data_folder(data)
        teams = {}
        for number, name in enumerate(("alpha", "beta")):
            root = Path(layers.team_root(folder, name))
            times[f"team:{name}"] = build(root, args.team, 101 + number, hooks=False)
            teams[name] = {"url": f"file:///nowhere/{name}.git", "branch": "main"}
        Path(layers.registry_path(folder)).write_text(json.dumps({"teams": teams}), encoding="utf-8")
        # The banks just built are about 100 MB of new files: write them out now, so that their
        # writeback does not stall the first case's writes (a fitting call claims and records).
        os.sync()
        hook = claude.installed_command(project, "PreToolUse")
        assert hook
        bare = f"{shlex.quote(sys.executable)} -I -S -c pass"  # the launcher's interpreter, started bare
        env_layered = {**os.environ, "XDG_DATA_HOME": str(data)}
        env_single = {**os.environ, "XDG_DATA_HOME": str(empty)}
        runs = [("layered", project, env_layered, hook), ("single", single, env_single, hook)]
        if args.baseline:
            # Copies without compiled indexes: the other checkout's first call builds its own.
            skip = shutil.ignore_patterns(".lessonbank")
            shutil.copytree(project, base / "project-base", ignore=skip)
            shutil.copytree(data, base / "data-base", ignore=skip)
            other = bench_hook.baseline_command(hook, args.baseline)
            runs.append(("baseline", base / "project-base", {**os.environ, "XDG_DATA_HOME": str(base / "data-base")}, other))
        print(f"python {sys.version.split()[0]}, {args.runs} runs per case, times in ms; bank index: "
              + ", ".join(f"{k} {v:.1f} s" for k, v in times.items()))  # fmt: skip
        print(f"layered: project {args.project} + teams 2 x {args.team} lessons; single: {args.single} lessons")
        print(f"{'case':>12} {'bare p50':>9} {'bare p99':>9} {'layered p50':>12} {'p99':>7} {'x p50':>6} {'x p99':>6}"
              f" {'single p50':>11} {'p99':>7} {'x p50':>6} {'x p99':>6}"
              + (f" {'base p50':>9} {'p99':>7} {'x p50':>6} {'x p99':>6}" if args.baseline else ""))  # fmt: skip
        for case, tool, value, answers in CALLS:
            got: dict[str, list[float]] = {"bare": [], **{name: [] for name, *_ in runs}}
            stamp = time.monotonic_ns()
            for i in range(args.runs + 5):
                for name, root, env, command in runs:
                    payload = json.dumps(bench_hook.payload_for(tool, value, root, f"{name}-{stamp}-{i}")).encode()
                    seconds, out = spawn(command, payload, root, env)
                    if i == 0:
                        assert (b"additionalContext" in out) == answers, (name, case, out[:300])
                        if name != "single" and answers:
                            text = json.loads(out)["hookSpecificOutput"]["additionalContext"]
                            shown = [line.split("] (", 1)[1].split(")")[0] if "] (" in line else "project" for line in text.splitlines()[1:]]
                            print(f"{'':>12} {name} answer names the layers {shown}")
                    if i >= 5:
                        got[name].append(seconds)
                seconds, _ = spawn(bare, None, project, env_single)
                if i >= 5:
                    got["bare"].append(seconds)
            p = {k: (bench_hook.percentile(v, 0.5) * 1000, bench_hook.percentile(v, 0.99) * 1000) for k, v in got.items()}
            b50, b99 = p["bare"]
            extra = ""
            if args.baseline:
                extra = (f" {p['baseline'][0]:>9.1f} {p['baseline'][1]:>7.1f} {p['baseline'][0] / b50:>6.2f}"
                         f" {p['baseline'][1] / b99:>6.2f}")  # fmt: skip
            print(
                f"{case:>12} {b50:>9.1f} {b99:>9.1f} {p['layered'][0]:>12.1f} {p['layered'][1]:>7.1f}"
                f" {p['layered'][0] / b50:>6.2f} {p['layered'][1] / b99:>6.2f} {p['single'][0]:>11.1f}"
                f" {p['single'][1]:>7.1f} {p['single'][0] / b50:>6.2f} {p['single'][1] / b99:>6.2f}" + extra,
                flush=True,
            )


if __name__ == "__main__":
    main()
