"""Detection core: the episodes that make candidates (pure, no I/O); commands and results are in test_outcomes."""

from __future__ import annotations

import json

import pytest

from lessonbank.scan.candidates import Weights, merge, score
from lessonbank.scan.detect import Detector
from lessonbank.scan.events import Candidate, Event
from lessonbank.scan.prose import is_correction


def run(command: str, status: str = "ok", text: str = "", code: int | None = None, **kw: object) -> Event:
    if code is None:
        code = 0 if status == "ok" else 1 if status == "fail" else None
    return Event("tool", kw.pop("time", "t"), text, "Bash", command, (), status, code, **kw)  # type: ignore[arg-type]


def edit(path: str) -> Event:
    return Event("tool", "t", tool="Edit", paths=(path,))


def feed(events: list[Event], session: str = "s1", project: str = "/p") -> list[Candidate]:
    det = Detector("f.jsonl")
    det.session, det.project = session, project
    out: list[Candidate] = []
    for ev in events:
        out.extend(det.feed(ev))
    return out


# ---- tier 1: self-reported blocks ----------------------------------------------------------


def test_lesson_block_in_assistant_message_is_tier_one() -> None:
    text = "Done.\n#lesson\ntool: Bash\ntrigger: pytest\nmistake: x hangs\nfix: use -p no:cacheprovider\n#/lesson"
    [cand] = feed([Event("assistant", "t1", text)])
    assert (cand.tier, cand.kind, cand.signals) == (1, "lesson", {"self_reported": 1})
    assert cand.block.startswith("#lesson") and cand.block.endswith("#/lesson")
    assert score(cand, Weights())[0] == 0.9


def test_lesson_block_in_user_message_is_not_self_reported() -> None:
    assert feed([Event("user", "t", "#lesson\nmistake: a\nfix: b\n#/lesson")]) == []


# ---- tier 2: a check that failed, then passed -------------------------------------------


def test_fail_edit_pass_is_a_fix_with_evidence() -> None:
    [cand] = feed(
        [
            run(
                "cd /p && python -m pytest tests/ -q",
                "fail",
                "E   AssertionError: 1 != 2\n1 failed",
                time="t1",
            ),
            Event("assistant", "t2", "The fixture returns the wrong total."),
            edit("/p/src/total.py"),
            run("pip install -e .", "ok", time="t3"),
            run("cd /p && python -m pytest tests/ -q", "ok", "3 passed", time="t4"),
        ]
    )
    assert (cand.kind, cand.tier, cand.promote_to, cand.tags) == ("fix", 2, "rule:testing", ["tool:pytest"])
    assert cand.when == "`pytest` fails with: E   AssertionError: 1 != 2"
    assert (
        cand.do
        == "What fixed it: ran `pip install -e .`, changed total.py, then `python -m pytest tests/ -q` passed."
    )
    assert cand.commands == [r"\bpytest\b"]
    assert cand.notes == "The fixture returns the wrong total."
    [ev] = cand.evidence
    assert ev["failing"] == ev["passing"] == "python -m pytest tests/ -q"
    assert (ev["time"], ev["passed_at"], ev["edits"], ev["session"]) == (
        "t1",
        "t4",
        ["/p/src/total.py"],
        "s1",
    )
    assert cand.signals == {"attempts": 1, "fix_confirmed": 1}
    assert score(cand, Weights())[:2] == (0.6, 5)


def test_pass_with_nothing_changed_is_flaky_not_a_fix() -> None:
    assert feed([run("pytest", "fail", "FAILED t::a"), run("pytest", "ok")]) == []


def test_a_narrower_passing_run_does_not_confirm_the_fix() -> None:
    events = [
        run("pnpm test", "fail", "FAIL a.test.ts > x"),
        edit("/p/a.ts"),
        run("pnpm test -- b.test.ts", "ok"),
    ]
    assert feed(events) == []
    # a workspace filter narrows the run too; only the whole suite passing confirms the fix
    assert feed([*events, run("pnpm --filter web test", "ok")]) == []
    [cand] = feed([*events, run("pnpm test", "ok")])
    assert cand.evidence[0]["passing"] == "pnpm test"


def test_masked_runs_are_neither_failures_nor_fixes() -> None:
    # `make | head` exits 0 whatever make did: it must not close the episode as a fix.
    events = [
        run("make -j4", "fail", "src/a.c:3:1: error: expected ';'"),
        run("make -j4 2>&1 | head -50", "ok", "src/a.c:3:1: error: expected ';'"),
    ]
    det = Detector()
    assert [c for ev in events for c in det.feed(ev)] == []
    assert det.masked == 1 and "make" in det.open
    assert [c.kind for c in det.feed(edit("src/a.c")) + det.feed(run("make -j4", "ok"))] == ["fix"]
    # a masked failure opens nothing either
    assert feed([run("make 2>&1 | tail", "fail", "error: x"), edit("a.c"), run("make", "ok")]) == []


def test_startup_error_fixed_by_an_install_is_unblocked() -> None:
    [cand] = feed(
        [
            run("python -m pytest tests/ -v", "fail", "C:\\Python314\\python.exe: No module named pytest"),
            run("python -m pip install -r requirements-dev.txt", "ok"),
            run(
                "python -m pytest tests/test_a.py -v",
                "fail",
                "FAILED tests/test_a.py::test_x - AssertionError",
            ),
        ]
    )
    assert (cand.kind, cand.key) == ("unblocked", "unblocked|pytest|python.exe: no module named pytest")
    assert "fix_confirmed" not in cand.signals
    assert cand.do.startswith("What fixed it: ran `python -m pip install -r requirements-dev.txt`")
    assert (
        "passing" not in cand.evidence[0]
        and cand.evidence[0]["rerun"] == "python -m pytest tests/test_a.py -v"
    )


def test_timeout_raises_priority() -> None:
    [cand] = feed([run("pytest", "fail", "Command timed out after 2m 0.0s", timed_out=True), edit("a.py"),
                   run("pytest -p no:xdist", "ok")])  # fmt: skip
    assert cand.signals["hang_or_timeout"] == 1 and "severity:hang" in cand.tags
    assert score(cand, Weights())[:2] == (0.65, 7)


def test_a_failing_cd_never_reached_the_check() -> None:
    # no failed check (make never ran); the relative `cd` itself is the shell mistake
    [cand] = feed([run("cd bench && make", "fail", "/bin/bash: line 1: cd: bench: No such file or directory"),
                   run("cd /p/bench && make", "ok")])  # fmt: skip
    assert (cand.kind, cand.key) == ("shell", "shell|cd-relative|bench")


# ---- non-mistakes --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "text"),
    [
        ("denied", "This command requires approval"),
        ("rejected", "The user doesn't want to proceed with this tool use."),
        ("interrupted", "[Request interrupted by user for tool use]"),
        ("invalid", "<tool_use_error>String to replace not found</tool_use_error>"),
    ],
)
def test_non_mistakes_yield_nothing(status: str, text: str) -> None:
    # Where a failure would open an episode that the edit and the pass then close as a fix.
    assert feed([run("pytest -q", "fail", "FAILED a"), edit("a.py"), run("pytest -q", "ok")]) != []
    assert feed([run("pytest -q", status, text), edit("a.py"), run("pytest -q", "ok")]) == []


@pytest.mark.parametrize("status", ["denied", "rejected", "invalid"])
def test_a_fix_attempt_that_did_not_run_is_not_evidence(status: str) -> None:
    # the install never ran, nothing else changed: the later pass is flaky, not a fix
    ran = feed([run("pytest", "fail", "FAILED a"), run("pip install x", "ok"), run("pytest", "ok")])
    assert [c.kind for c in ran] == ["fix"]
    assert feed([run("pytest", "fail", "FAILED a"), run("pip install x", status, "requires approval"),
                 run("pytest", "ok")]) == []  # fmt: skip


# ---- user corrections --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("no, use the staging database", True),
        ("Don't commit the lock file", True),
        ("never commit without signing. use ps GPG alt", True),
        # rejecting without saying what to do instead: a status report or a one-off fact, not a lesson
        ("Section 9.4 is a halucination, we have not done that", False),
        ("that's wrong, the port is 8080", False),
        ("Thats not my email", False),
        ("Thats not my email though its someone@example.com", False),
        ("Its not launching with the cli command", False),
        ("that's wrong, use port 8080 for the dev server", True),
        ("we aren't to use cufft. Instead we roll the convolution ourselves", True),
        ("please add a README", False),
        ("no problem, thanks", False),
        ("[Request interrupted by user]", False),
        ("<command-name>/exit</command-name>", False),
        ("no " + "x" * 700, False),
    ],
)
def test_is_correction(text: str, expected: bool) -> None:
    assert is_correction(text) is expected


def test_correction_followed_by_change_of_course() -> None:
    [cand] = feed(
        [
            run("git commit -m wip --no-gpg-sign", "ok"),
            Event("user", "t2", "never commit without signing"),
            Event("assistant", "t3", "You're right, I'll sign it."),
        ]
    )
    assert (cand.kind, cand.type, cand.promote_to) == ("correction", "convention", "rule:conventions")
    assert cand.when == "running `git commit -m wip --no-gpg-sign` (the user had to correct this)"
    assert cand.do == "never commit without signing"
    assert score(cand, Weights())[:2] == (0.5, 6)
    # an action (not only words) is a change of course too
    assert [c.kind for c in feed([Event("user", "t", "no, use uv"), run("uv sync", "ok")])] == ["correction"]


def test_correction_without_change_of_course_or_after_interrupt_only_yields_nothing() -> None:
    assert feed([Event("user", "t", "no, use uv"), Event("user", "t", "anyway, carry on")]) == []
    assert feed([Event("user", "t", "[Request interrupted by user]"), run("ls", "ok")]) == []
    assert feed([Event("user", "t", "no, use uv"), run("uv sync", "rejected", "The user doesn't want")]) == []


# ---- secrets, state, merging --------------------------------------------------------------


def test_evidence_and_text_are_redacted() -> None:
    secret = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    [cand] = feed(
        [
            run(f"GITHUB_TOKEN={secret} pytest", "fail", f"E  401 for token {secret}\nFAILED a"),
            edit("a.py"),
            run(f"GITHUB_TOKEN={secret} pytest", "ok"),
        ]
    )
    dumped = json.dumps(cand.to_dict())
    assert secret not in dumped
    assert "[REDACTED:github token]" in cand.evidence[0]["failing"]
    # nor is it kept in the state carried between scans while an episode is open
    det = Detector()
    det.feed(run("pytest", "fail", "FAILED a"))
    det.feed(Event("assistant", "t", f"retrying with token {secret}"))
    det.feed(run(f"export GITHUB_TOKEN={secret}", "ok"))
    assert secret not in json.dumps(det.state())


def test_state_survives_a_json_round_trip_mid_episode() -> None:
    first = Detector("f")
    first.session = "s1"
    assert first.feed(run("pytest", "fail", "FAILED a")) == []
    assert first.feed(edit("a.py")) == []
    second = Detector("f", json.loads(json.dumps(first.state())))
    [cand] = second.feed(run("pytest", "ok"))
    assert cand.sessions == ["s1"] and cand.evidence[0]["edits"] == ["a.py"]


def test_merge_counts_sessions_once_and_is_idempotent() -> None:
    w = Weights()
    events = [run("make", "fail", "x.c:1:1: error: boom"), edit("x.c"), run("make", "ok")]
    store: dict[str, Candidate] = {}
    assert len(merge(store, feed(events, "s1", "/a"), w)) == 1
    assert merge(store, feed(events, "s1", "/a"), w) == []  # the same session again changes nothing
    merge(store, feed(events, "s2", "/b"), w)
    [cand] = store.values()
    assert cand.sessions == ["s1", "s2"] and cand.projects == ["/a", "/b"]
    conf, prio, why = score(cand, w)
    assert (conf, prio) == (0.75, 6)
    assert why == ["base 0.40", "fix confirmed +0.20", "seen in 2 sessions +0.10", "2 projects +0.05"]
    assert Candidate.from_dict(json.loads(json.dumps(cand.to_dict()))) == cand


def test_a_candidate_is_a_draft_whose_store_line_keeps_its_keys() -> None:
    from lessonbank.capture.draft import Draft

    [cand] = feed([run("make", "fail", "x.c:1:1: error: boom"), edit("x.c"), run("make", "ok")])
    assert isinstance(cand, Draft) and cand.source == "scanned"
    # candidates.jsonl lines keep the distilled lesson too: title, path and keyword triggers, verify
    assert sorted(cand.to_dict()) == sorted([
        "key", "tier", "kind", "title", "when", "do", "promote_to", "type", "tools", "commands", "paths",
        "keywords", "tags", "verify", "block", "notes", "sessions", "projects", "signals", "evidence",
        "confidence", "priority", "status", "lesson", "captured",
    ])  # fmt: skip


@pytest.mark.parametrize(
    ("text", "blocks"),
    [
        ("#lesson\nmistake: a\nfix: b\n#/lesson", 1),
        ("#lesson #/lesson", 0),  # says nothing: no candidate that capture would refuse forever
        ("#lesson\ntool: Bash\n#/lesson", 0),
        ("First. #lesson\nmistake: a\nfix: b\n#/lesson and again #lesson\nwhen: c\ndo: d\n#/lesson", 2),
        ("> #lesson\n> Mistake: quoted\n> Fix: still read\n> #/lesson", 1),
    ],
)
def test_scan_reads_blocks_as_capture_does(text: str, blocks: int) -> None:
    from lessonbank.capture.draft import parse_lesson_blocks
    from lessonbank.scan.prose import lesson_blocks

    assert len(lesson_blocks(text)) == blocks
    assert len([d for d in parse_lesson_blocks(text) if d.when and d.do]) == blocks
