"""Concurrent captures on one bank lose no update: 8 processes x 25 captures of one lesson."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

from click.testing import CliRunner

from lessonbank.bank.store import Bank
from lessonbank.capture.draft import Draft
from lessonbank.capture.pipeline import capture
from lessonbank.cli import main

WHEN = "pytest runs in a non-interactive shell and waits for input"
DO = "run pytest with stdin from /dev/null so it never waits on a TTY"


def _worker(root: str, worker: int, count: int) -> list[str]:
    bank = Bank.open(Path(root))
    actions = []
    for n in range(count):
        draft = Draft(when=WHEN, do=DO, promote_to="rule:testing", session=f"w{worker}-s{n}")
        actions.append(capture(bank, draft).action)
    return actions


def test_parallel_captures_count_every_session(repo: Path) -> None:
    assert CliRunner().invoke(main, ["init", str(repo)]).exit_code == 0
    bank = Bank.open(repo)
    assert (
        capture(bank, Draft(when=WHEN, do=DO, promote_to="rule:testing", session="first")).action == "create"
    )
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(8) as pool:
        results = pool.starmap(_worker, [(str(repo), w, 25) for w in range(8)])
    assert [a for r in results for a in r] == ["bump"] * 200
    (item,) = bank.load()
    assert item.lesson.seen == 201
    assert len(item.lesson.sessions) == 20  # bounded list, unbounded count
    assert "| 201 |" in (repo / "INDEX.md").read_text()
    assert not list((repo / "lessons").glob(".*.tmp"))
