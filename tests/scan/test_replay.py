"""`bank replay`'s parts: sessions read whole and split by date, failures told by kind, the count with a stub hook."""

from __future__ import annotations

from pathlib import Path

import pytest

from lessonbank.scan import failures, history, replay
from lessonbank.scan.history import Call, Session
from tests.scan.test_learning import Claude, Codex


def test_sessions_are_read_whole_oldest_first_with_their_subagent_files(tmp_path: Path) -> None:
    Claude("b", day="2026-01-03").bash("ls", "a").write(tmp_path, "b.jsonl")
    Claude("a", day="2026-01-01").bash("make", "make: *** No rule to make target 'x'.  Stop.", 2).write(tmp_path, "a.jsonl")
    Claude("a", day="2026-01-02").bash("git status", "clean").write(tmp_path, "agent-a1.jsonl")  # a subagent of a
    Claude("empty", day="2026-01-02").say("no tool call").write(tmp_path, "empty.jsonl")
    Codex("019c-x").run("pnpm test", "ok").write(tmp_path, "rollout-x.jsonl")
    sessions = history.read_sessions(sorted(tmp_path.glob("*.jsonl")))
    assert [(s.id, s.start, len(s.calls)) for s in sessions] == [
        ("a", "2026-01-01T00:00:02Z", 2), ("b", "2026-01-03T00:00:02Z", 1), ("019c-x", "2026-02-26T19:36:00Z", 1),
    ]  # fmt: skip
    assert [c.status for c in sessions[0].calls] == ["fail", "ok"]
    assert history.default_cut(sessions) == "2026-02-26T19:36:00Z"  # the later third: the last of three
    assert history.split(sessions, "2026-01-02") == (sessions[:1], sessions[1:])


@pytest.mark.parametrize(
    ("command", "output", "kind", "signature"),
    [
        ("nvcc --version", "/bin/bash: line 1: nvcc: command not found", "not-found", "not-found|nvcc: command not found"),
        ("pnpm test", "/usr/local/bin/bash: line 1: pnpm: command not found", "not-found",
         "not-found|pnpm: command not found"),
        ("sudo apt install iw", "sudo: a terminal is required to read the password", "terminal",
         "terminal|sudo: a terminal is required to read the password"),
        ("gh pr view --jsn", "unknown flag: --jsn\n\nUsage:  gh pr view", "unknown-command", "unknown-command|gh|unknown flag: --jsn"),
        ("blocky validate", 'Error: unknown command "validate" for "blocky"', "unknown-command",
         "unknown-command|blocky|error: unknown command validate for blocky"),
        ("npm run lint", "npm error Missing script: \"lint\"", "missing-script", "missing-script|npm|npm error missing script: lint"),
        ("cd /repo && make clean", "make: *** No rule to make target 'clean'.  Stop.", "missing-script",
         "missing-script|make|make: no rule to make target 'clean'. stop."),
        ("git commit -m x", "fatal: Unable to create '/r/.git/index.lock': File exists.", "local-state",
         "local-state|git|fatal: unable to create 'index.lock': file exists."),
        ("cd build && make -j$(nproc)", "/bin/bash: line 1: cd: build: No such file or directory", "path",
         "path|cd: build: no such file or directory"),
        ("make -j$(nproc)", "src/a.c:3:10: fatal error: b.h: No such file or directory", "check",
         "check|make|fatal error: b.h: no such file or directory"),
        ("ls", "0 [main] ls (1) child_copy: cygheap read copy failed, 0x0..0x8", "environment",
         "environment|N main ls N child_copy: cygheap read copy failed N..N"),
    ],
)
def test_a_failure_has_a_kind_and_a_signature_that_recurs(command: str, output: str, kind: str, signature: str) -> None:
    found = failures.classify(command, output)
    assert found is not None
    assert (found.kind, found.signature) == (kind, signature)


def test_a_failure_that_says_nothing_has_no_signature() -> None:
    assert failures.classify("grep x y", "") is None
    assert failures.classify("which foo", "Error") is None


@pytest.mark.parametrize(
    ("output", "hint"),
    [
        ("error: You have not concluded your merge (MERGE_HEAD exists).\nhint: Please, commit your changes before merging.",
         ""),
        ("fatal: not a git repository\n(use \"git init\" to create one)", "git init"),
        ("To fix this, run `brew upgrade op` and restart the app.", "brew upgrade op"),
        ("error: unknown command 'statsu'. did you mean 'status'?", "status"),
    ],
)
def test_the_tools_own_hint_is_read(output: str, hint: str) -> None:
    assert failures.hint(output) == hint


def _session(ident: str, start: str, *calls: Call) -> Session:
    return Session(ident, start, calls=list(calls))


def test_the_count_tells_repeats_interceptions_and_fires_on_successes() -> None:
    missing = "bash: nvcc: command not found"
    earlier = [_session("a", "1", Call("1", "nvcc --version", status="fail", output=missing))]
    later = [_session("b", "2",
                      Call("2", "git status"),  # the lesson does not match: nothing goes out
                      Call("3", "nvcc -o x x.cu", status="fail", output=missing),  # handed over here: intercepted
                      Call("4", "nvcc -o y y.cu", status="fail", output=missing),  # in context already: intercepted
                      Call("5", "ls /opt", status="fail", output="ls: cannot access '/opt': No such file"),  # new error
                      Call("6", "make", status="ok"))]  # fmt: skip
    handed = {"3": [("nvcc-path", 40)], "6": [("make-lesson", 30)]}
    matching = {"3": ["nvcc-path"], "4": ["nvcc-path"], "6": ["make-lesson"]}

    def hook(call: Call, session: Session) -> replay.Answer:
        out = handed.get(call.time, [])
        return replay.Answer(out, sum(n for _, n in out) + 100 * bool(out), matching.get(call.time, []))

    report = replay.replay(earlier, later, hook, {"nvcc-path": ("shell", "nvcc is not on PATH")},
                           {"nvcc-path": {"not-found|nvcc: command not found"}})  # fmt: skip
    assert (report.calls, report.failures, report.repeats, report.intercepted, report.own) == (5, 3, 2, 2, 2)
    assert (report.fires, report.on_success, report.on_failure, report.bytes, report.tokens) == (2, 1, 1, 270, 68)
    assert {k: vars(v) for k, v in report.kinds.items()} == {
        "not-found": {"failures": 2, "repeats": 2, "intercepted": 2},
        "path": {"failures": 1, "repeats": 0, "intercepted": 0},
    }
    assert [(v.slug, v.fires, v.on_success, v.intercepted, v.tokens) for v in report.sorted_lessons()] == [
        ("nvcc-path", 1, 0, 2, 10), ("make-lesson", 1, 1, 0, 8),
    ]  # fmt: skip


def test_a_lessons_origin_is_the_signature_its_evidence_kept() -> None:
    """A recurring failure's evidence keeps the signature taken from the raw output; the redacted
    excerpt is classified only when there is none."""
    excerpt = ["bash: nvcc: command not found"]
    assert replay.origin({"signature": "not-found|kept", "failing": "nvcc -o x", "excerpt": excerpt}) == "not-found|kept"
    assert replay.origin({"failing": "nvcc -o x", "excerpt": excerpt}) == "not-found|nvcc: command not found"
    assert replay.origin({"failing": "", "excerpt": []}) is None
