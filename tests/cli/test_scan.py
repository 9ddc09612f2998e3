"""`bank scan` and `bank review` through click's CliRunner, on banks made with `bank init` in real git repos."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from lessonbank.bank.store import Bank
from lessonbank.cli.demo import DEMO_TRANSCRIPTS, step_scan
from lessonbank.scan import sources
from tests.conftest import run

DEMO = DEMO_TRANSCRIPTS / "shop-session.jsonl"
SESSION = "5e551011-de30-4c1a-9d2e-000000000001"
SECRET = "hunter2secret"
LESSON_SLUG = "after-moving-the-package-under-src-pytest-fails"
SCAN_DEMO = [
    "scanned 1 transcript: 1 with new lines, 12.3 kB read",
    "found 2 new candidates, 0 seen again: 1 self-reported (tier 1), 1 heuristic (tier 2)",
    "skipped 2 non-mistakes: 1 permission denial, 1 masked exit status",
    # the fixed pytest run is the lesson the agent's own #lesson block states: proposed once, as that block
    "set aside 1 episode with no lesson: 1 already in the agent's #lesson block",
    "#lesson protocol: 1 of 1 fixed check came with a block (claude 1 of 1)",
]
CORRECTION = "a7465d67"
DEMO_WEEK = "2026-W47"  # the ISO week of the demo session's episodes, not of the scan
LIST_DEMO = (
    "id        conf  prio  tier  kind        seen  when\n"
    "712ae1be  0.90  5     1     lesson      1     after moving the package under src/, pytest fails with ModuleNotFoundEr…\n"
    "a7465d67  0.50  6     2     correction  1     editing `conftest.py` (the user corrected this)\n"
)


@pytest.fixture(autouse=True)
def no_editor(monkeypatch: pytest.MonkeyPatch) -> None:
    """`bank review`'s edit prompts field by field unless $VISUAL or $EDITOR names an editor."""
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.delenv("EDITOR", raising=False)


def copy_session(tmp_path: Path, name: str, session: str) -> Path:
    """The demo transcript as another session (another id), in its own folder."""
    folder = tmp_path / name
    folder.mkdir()
    path = folder / f"{session}.jsonl"
    path.write_text(DEMO.read_text(encoding="utf-8").replace(SESSION, session), encoding="utf-8")
    return path


def all_text(root: Path) -> str:
    return "\n".join(
        p.read_text(errors="replace") for p in root.rglob("*") if p.is_file() and ".git/" not in str(p)
    )


def test_scan_prints_a_summary_and_stores_candidates(bank: Path) -> None:
    result = run(bank, "scan", "--path", str(DEMO))
    assert result.exit_code == 0
    assert result.output.splitlines() == [*SCAN_DEMO, "2 candidates wait for review: `bank review`"]
    assert sorted(p.name for p in (bank / ".lessonbank" / "scan").iterdir()) == [
        "candidates.jsonl", "files.json", "lock", "protocol.jsonl", "rejected.json",
    ]  # fmt: skip
    # the protocol's compliance over time: one line per scan that met fixed checks
    [line] = (bank / ".lessonbank" / "scan" / "protocol.jsonl").read_text().splitlines()
    assert {k: v for k, v in json.loads(line).items() if k != "scanned"} == {
        "week": DEMO_WEEK, "agent": "claude", "fixed": 1, "with_block": 1,
    }  # fmt: skip
    again = run(bank, "scan", "--path", str(DEMO))
    assert again.output.splitlines() == [
        "scanned 1 transcript: 0 with new lines, 0.0 kB read",
        "found 0 new candidates, 0 seen again: 0 self-reported (tier 1), 0 heuristic (tier 2)",
        "2 candidates wait for review: `bank review`",
    ]


def test_review_list_and_json(bank: Path) -> None:
    run(bank, "scan", "--path", str(DEMO))
    assert run(bank, "review", "--list").output == LIST_DEMO
    data = json.loads(run(bank, "review", "--list", "--json").output)
    assert [(c["id"], c["kind"], c["tier"], c["seen"], c["promote_to"]) for c in data] == [
        ("712ae1be", "lesson", 1, 1, "rule:testing"),
        (CORRECTION, "correction", 2, 1, "rule:conventions"),
    ]
    # the correction is distilled: the instruction, a trigger on the file it corrected, no episode text
    correction = data[1]
    assert (correction["title"], correction["do"], correction["paths"], correction["verify"]) == (
        "Don't patch sys.path in conftest.py",
        "No, don't patch sys.path in conftest.py: set pythonpath in pyproject.toml",
        ["**/conftest.py"], {},
    )  # fmt: skip


def test_scan_json_for_scripts(bank: Path) -> None:
    data = json.loads(run(bank, "scan", "--path", str(DEMO), "--json").output)
    assert (data["files"], data["files_read"], data["new"], data["skipped"], data["dry_run"]) == (
        1, 1, ["712ae1be", CORRECTION], {"already in the agent's #lesson block": 1, "denied": 1, "masked": 1},
        False,
    )  # fmt: skip
    assert [c["id"] for c in data["pending"]] == ["712ae1be", CORRECTION]
    assert data["protocol"] == {"claude": {"fixed": 1, "with_block": 1}}


def test_dry_run_writes_nothing(bank: Path) -> None:
    result = run(bank, "scan", "--path", str(DEMO), "--accept-above", "0.85", "--dry-run")
    assert result.output.splitlines() == [
        *SCAN_DEMO,
        f"accepted 712ae1be: would create lessons/{LESSON_SLUG}.md",
        "2 candidates wait for review: `bank review`",
        "dry run: nothing was written",
    ]
    assert not (bank / ".lessonbank" / "scan").exists()
    assert not (bank / "lessons" / f"{LESSON_SLUG}.md").exists()


def test_accept_above_captures_through_the_gates(bank: Path) -> None:
    result = run(bank, "scan", "--path", str(DEMO), "--accept-above", "0.85")
    assert result.output.splitlines() == [
        *SCAN_DEMO,
        f"accepted 712ae1be: created lessons/{LESSON_SLUG}.md",
        "1 candidate waits for review: `bank review`",
    ]
    lesson = Bank.find(root=bank).find_lesson(LESSON_SLUG).lesson
    assert (lesson.source, lesson.promote_to, lesson.sessions, lesson.confidence) == (
        "scanned", "rule:testing", [SESSION], 0.9,
    )  # fmt: skip
    assert lesson.do.startswith('set pythonpath = ["src"]')
    assert LESSON_SLUG in (bank / "INDEX.md").read_text()


def test_seen_counts_each_session_once(bank: Path, tmp_path: Path) -> None:
    one = copy_session(tmp_path, "a", "session-one")
    two = copy_session(tmp_path, "b", "session-two")
    out = run(bank, "scan", "--path", str(one), "--path", str(two), "--accept-above", "0.85").output
    assert f"accepted 712ae1be: created lessons/{LESSON_SLUG}.md; repeat of {LESSON_SLUG}" in out
    assert run(bank, "review", "--list").output.splitlines()[1].split()[5] == "2"  # seen in both sessions
    lesson = Bank.find(root=bank).find_lesson(LESSON_SLUG).lesson
    assert (lesson.seen, lesson.sessions) == (2, ["session-one", "session-two"])
    # a later session with the same lesson counts on the accepted lesson, once
    three = copy_session(tmp_path, "c", "session-three")
    out = run(bank, "scan", "--path", str(three)).output
    assert f"accepted 712ae1be: repeat of {LESSON_SLUG} (lessons/{LESSON_SLUG}.md): bumped seen 2 -> 3" in out
    assert "accepted" not in run(bank, "scan", "--path", str(three)).output
    assert Bank.find(root=bank).find_lesson(LESSON_SLUG).lesson.seen == 3


def test_review_accept_edit_reject(bank: Path) -> None:
    run(bank, "scan", "--path", str(DEMO))
    answers = "a\ne\nSet pythonpath for src layouts\nrunning pytest on a src/ layout\nkeep conftest.py free of sys.path hacks\nrule:testing\na\n"  # noqa: E501
    result = run(bank, "review", input=answers)
    assert result.exit_code == 0
    out = result.output
    assert out.startswith(
        "[1/2] 712ae1be  lesson, tier 1, seen in 1 session(s), confidence 0.90 (base 0.40, self-reported +0.50), "
        "priority 5\n"
        "  when: after moving the package under src/, pytest fails with ModuleNotFoundError while loading conftest.py\n"
    )
    # each candidate shows the lesson it would write: title, when, do, triggers, verify, destination
    assert (
        "[2/2] a7465d67  correction, tier 2, seen in 1 session(s), confidence 0.50 (base 0.40, user correction "
        "+0.10), priority 6\n"
        "  title: Don't patch sys.path in conftest.py\n"
        "  when: editing `conftest.py` (the user corrected this)\n"
        "  do:   No, don't patch sys.path in conftest.py: set pythonpath in pyproject.toml\n"
        "  triggers: path **/conftest.py; keywords patch, path, conftest\n"
        "  verify: none from the evidence (accepting adds what its words name that the repository holds; with none, "
        "groom waits until a person sets `verified: {by: <name>}`)\n"
        "  promote-to: rule:conventions\n"
    ) in out
    assert f"created lessons/{LESSON_SLUG}.md\n" in out
    assert "created lessons/set-pythonpath-for-src-layouts.md\n" in out
    assert out.endswith("2 accepted, 0 rejected, 0 skipped\n")
    assert run(bank, "review", "--list").output == "id  conf  prio  tier  kind  seen  when\n(none)\n"
    assert run(bank, "review").output == "nothing waits for review (run `bank scan` first)\n"


def test_rejected_candidates_never_come_back(bank: Path, tmp_path: Path) -> None:
    run(bank, "scan", "--path", str(DEMO))
    run(bank, "review", input="s\nr\n")
    again = copy_session(tmp_path, "later", "session-later")
    out = run(bank, "scan", "--path", str(again)).output
    assert "ignored 1 candidate rejected before\n" in out
    assert CORRECTION not in run(bank, "review", "--list").output


def test_a_gate_refusal_keeps_the_candidate(bank: Path) -> None:
    run(bank, "scan", "--path", str(DEMO))
    result = run(bank, "review", input="e\n\n\n\nnowhere\na\nq\n")
    assert "refused: promote-to 'nowhere' has an unknown kind; use one of:" in result.output
    assert result.output.endswith("0 accepted, 0 rejected, 0 skipped\n")
    assert not list((bank / "lessons").glob("*.md"))
    assert "712ae1be" in run(bank, "review", "--list").output


def test_secrets_in_transcripts_are_never_stored(bank: Path) -> None:
    assert SECRET in DEMO.read_text()
    run(bank, "scan", "--path", str(DEMO), "--accept-above", "0.5")
    text = all_text(bank)
    assert SECRET not in text
    assert "postgres://[REDACTED:password in url]@localhost/shop pytest -q" in text


def test_default_sources_are_this_projects_claude_and_codex_sessions(
    bank: Path, isolated_home: Path, tmp_path: Path
) -> None:
    folder = sources.claude_project_dir(bank.resolve())
    folder.mkdir(parents=True)
    shutil.copy(DEMO, folder / f"{SESSION}.jsonl")
    day = isolated_home / ".codex" / "sessions" / "2026" / "02" / "26"
    day.mkdir(parents=True)
    meta = {
        "timestamp": "t",
        "type": "session_meta",
        "payload": {"id": "x", "cwd": str(tmp_path / "elsewhere")},
    }
    (day / "rollout-2026-02-26T10-00-00-x.jsonl").write_text(json.dumps(meta) + "\n")
    out = run(bank, "scan").output
    assert out.startswith("scanned 1 transcript: 1 with new lines")
    assert run(bank, "scan", "--all-projects").output.startswith("scanned 2 transcripts: 1 with new lines")


def test_no_transcripts_says_where_it_looked(bank: Path) -> None:
    assert run(bank, "scan").output.splitlines()[0] == (
        f"no transcripts found for {bank.resolve()} (try --all-projects or --path)"
    )


def test_demo_step_scans_the_bundled_transcript(bank: Path) -> None:
    lines = step_scan(Bank.find(root=bank))
    assert lines[0] == "$ bank scan --path transcripts/ --accept-above 0.85"
    assert f"accepted 712ae1be: created lessons/{LESSON_SLUG}.md" in lines
    assert lines[-2:] == [
        "id        conf  kind        lesson",
        "a7465d67  0.50  correction  Don't patch sys.path in conftest.py",
    ]


def test_scoring_weights_come_from_bank_toml(bank: Path) -> None:
    from dataclasses import fields

    from lessonbank.config import DEFAULTS
    from lessonbank.scan.candidates import Weights, weights

    # One set of documented defaults: the config's and the scorer's must not drift apart.
    assert {f.name: DEFAULTS["scan"][f.name].default for f in fields(Weights)} == Weights().__dict__
    assert weights(Bank.find(root=bank)) == Weights()
    (bank / "bank.toml").write_text("[scan]\nfix_confirmed = 0.3\npriority_hang = 3\n", encoding="utf-8")
    opened = Bank.find(root=bank)
    assert (weights(opened).fix_confirmed, weights(opened).priority_hang, weights(opened).base) == (
        0.3,
        3,
        0.4,
    )


def test_a_review_decision_made_during_a_scan_is_kept(bank: Path) -> None:
    """A scan holds the store from load to save; a review decision waits, then lands on top."""
    import threading
    import time

    from lessonbank.scan.candidates import Store

    run(bank, "scan", "--path", str(DEMO))
    opened = Bank.find(root=bank)
    first = Store(opened).load().pending()[0]
    scanning = threading.Event()

    def slow_scan() -> None:
        with Store(opened).locked() as store:
            store.load()
            scanning.set()
            time.sleep(0.3)  # a long scan: the review below decides meanwhile
            store.save()

    worker = threading.Thread(target=slow_scan)
    worker.start()
    scanning.wait()
    Store(opened).record(first, rejected=True)
    worker.join()
    after = Store(opened).load()
    assert first.key in after.rejected and first.key not in after.candidates


def test_accepting_a_candidate_with_a_hostile_trigger_is_refused(bank: Path, tmp_path: Path) -> None:
    hostile = tmp_path / "hostile"
    hostile.mkdir()
    text = DEMO.read_text(encoding="utf-8").replace("\\ntrigger: pytest\\n", "\\ntrigger: (x+x+)+y\\n")
    (hostile / f"{SESSION}.jsonl").write_text(text, encoding="utf-8")
    result = run(bank, "scan", "--path", str(hostile), "--accept-above", "0.85")
    assert (
        "not accepted 712ae1be: refused: triggers.commands[0] '(x+x+)+y': nested quantifier `(x+x+)+` "
        "can take exponential time"
    ) in result.output
    assert not list((bank / "lessons").glob("*.md"))


def test_review_edit_opens_the_lesson_in_the_editor_and_keeps_it_on_quit(
    bank: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run(bank, "scan", "--path", str(DEMO))
    script = tmp_path / "editor.py"
    script.write_text(
        "import sys, pathlib\n"
        "p = pathlib.Path(sys.argv[1])\n"
        "t = p.read_text()\n"
        "assert t.startswith('---') and 'when: editing `conftest.py`' in t and 'Found by `bank scan`' in t\n"
        "p.write_text(t.replace(\"title: Don't patch\", 'title: Never patch'))\n"
    )
    monkeypatch.setenv("EDITOR", f"{sys.executable} {script}")
    out = run(bank, "review", input="s\ne\nq\n").output  # skip the first, edit the second, quit
    assert "  title: Never patch sys.path in conftest.py\n" in out
    [edited] = [c for c in json.loads(run(bank, "review", "--list", "--json").output) if c["id"] == CORRECTION]
    assert edited["title"] == "Never patch sys.path in conftest.py"  # saved before the quit
    assert not list((bank / ".lessonbank" / "scan").glob("edit-*.md"))


def test_compliance_per_agent_and_week(bank: Path) -> None:
    assert run(bank, "scan", "--compliance").output == (
        "no fixed checks recorded yet: `bank scan` records them as it reads transcripts\n"
    )
    run(bank, "scan", "--path", str(DEMO))
    log = bank / ".lessonbank" / "scan" / "protocol.jsonl"
    with log.open("a") as out:  # two later scans, and two malformed rows (no week; not JSON)
        out.write('{"week": "2026-W48", "agent": "claude", "fixed": 2, "with_block": 0, "scanned": "2026-12-01"}\n')
        out.write('{"week": "2026-W49", "agent": "codex", "fixed": 3, "with_block": 2, "scanned": "2026-12-09"}\n')
        out.write('{"date": "2026-11-02", "agent": "claude", "fixed": 1, "with_block": 0}\n')
        out.write("not json\n")
    assert run(bank, "scan", "--compliance").output == (
        "agent   week      fixed checks  with #lesson  share\n"
        "claude  2026-W47  1             1             100%\n"
        "claude  2026-W48  2             0             0%\n"
        "codex   2026-W49  3             2             67%\n"
        "all               6             3             50%\n"
    )
    assert json.loads(run(bank, "scan", "--compliance", "--json").output) == {
        "rows": [
            {"agent": "claude", "week": "2026-W47", "fixed": 1, "with_block": 1},
            {"agent": "claude", "week": "2026-W48", "fixed": 2, "with_block": 0},
            {"agent": "codex", "week": "2026-W49", "fixed": 3, "with_block": 2},
        ],
        "total": {"fixed": 6, "with_block": 3},
    }
    # --compliance reads the record only: no transcript is scanned, nothing is written.
    assert log.read_text().count("\n") == 5


def test_a_failure_is_watched_then_proposed_and_one_without_words_needs_an_edit(bank: Path, tmp_path: Path) -> None:
    from tests.scan.test_learning import Claude

    failing = "FAILED tests/test_cart.py::test_total - assert 3 == 4\n1 failed"
    first = tmp_path / "one"
    first.mkdir()
    Claude("a1", day="2026-01-01").user("go").bash("pytest -q", failing, 1).write(first, "a1.jsonl")
    result = run(bank, "scan", "--path", str(first))
    assert "watching 1 error met in one session so far (a second session makes each a candidate)" in result.output
    assert result.output.splitlines()[-1] == "nothing waits for review"
    Claude("a2", day="2026-01-02").user("go").bash("pytest -q", failing, 1).write(first, "a2.jsonl")
    result = run(bank, "scan", "--path", str(first))
    assert "found 1 new candidate" in result.output and "1 candidate waits for review" in result.output
    result = run(bank, "review", input="a\nr\n")
    assert "this candidate has no instruction yet: [e]dit it (or `bank review --distill`) before accepting" in result.output
    assert not list((bank / "lessons").glob("*.md"))
