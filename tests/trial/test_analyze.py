"""`bank trial analyze FILE`: hand-built record files through the CLI, the same rule as `bank trial report`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from lessonbank.cli import main
from lessonbank.trial import stats
from tests.trial.test_stats import HEAVY_WITH, HEAVY_WITHOUT, HELPED, NULL, UNHELPED, records


def write(path: Path, with_sessions: list[list[int]], without_sessions: list[list[int]]) -> Path:
    """A record file as `bank trial export` writes it: one JSON object a line, sessions alternating."""
    w, wo = records("w", stats.WITH, with_sessions), records("o", stats.WITHOUT, without_sessions)
    lines = []
    for i in range(max(len(with_sessions), len(without_sessions))):
        for row in [r for r in w if r.session == f"w{i}"] + [r for r in wo if r.session == f"o{i}"]:
            lines.append(json.dumps(row.to_json()))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def analyze(*args: str, code: int = 0) -> str:
    result = CliRunner().invoke(main, ["trial", "analyze", *args])
    assert result.exit_code == code, result.output
    return result.output


@pytest.mark.parametrize(
    ("with_sessions", "without_sessions", "fields"),
    [
        (HELPED, UNHELPED, ("helps", 0.588, [0.33, 0.53], 0.0005)),
        (NULL, NULL[3:] + NULL[:3], ("no effect", 0.0, [0.72, 1.38], 0.5302)),
        (HEAVY_WITH, HEAVY_WITHOUT, ("no effect", 0.308, [0.17, 2.5], 0.2459)),
        (HELPED[:20], UNHELPED[:20], ("collecting", 0.596, None, None)),
    ],
    ids=["clear help", "clear null", "overdispersed null", "too few sessions"],
)
def test_the_verdict_on_hand_built_files(
    tmp_path: Path, with_sessions: list[list[int]], without_sessions: list[list[int]], fields: tuple
) -> None:
    path = write(tmp_path / "trial.jsonl", with_sessions, without_sessions)
    data = json.loads(analyze(str(path), "--json", "--planned", "30"))
    verdict, drop, interval, p = fields
    assert data["verdict"] == verdict
    assert round(data["drop"], 3) == drop
    assert (None if data["interval"] is None else [round(x, 2) for x in data["interval"]]) == interval
    assert (None if data["p"] is None else round(data["p"], 4)) == p
    n = min(len(with_sessions), 30), min(len(without_sessions), 30)
    assert data["sessions"] == {"with": len(with_sessions), "without": len(without_sessions)}
    assert data["turns"] == {"with": 4 * n[0], "without": 4 * n[1]}
    assert data["planned"] == 30
    assert data["method"] == "session permutation (studentized), one-sided at 4%; session-robust ratio interval"


def test_the_text_report_of_a_file(tmp_path: Path) -> None:
    path = write(tmp_path / "trial.jsonl", HELPED, UNHELPED)
    out = analyze(str(path), "--planned", "30").splitlines()
    assert out[0] == stats.rule_text(30)
    assert out[2:10] == [
        "Verdict: HELPS (58.8% fewer failed checks per check run with lessons, one-sided p < 0.001).",
        "  arm      sessions  turns  checks  failed  failed/check   turns ending  checks/turn",
        "           analysed                                             failing",
        "  with           30    120     360      35          0.10           0.0%         3.00",
        "  without        30    120     360      85          0.24           8.3%         3.00",
        "Failed checks per check run, with/without lessons: 0.41, 95% interval 0.33 to 0.53; one-sided p < 0.001.",
        "  The data are consistent with anything from 67% fewer to 47% fewer failed checks per check run.",
        f"Method: {stats.METHOD}.",
    ]


def test_the_planned_size_comes_from_the_export_document_unless_overridden(tmp_path: Path) -> None:
    rows = [
        json.loads(line) for line in write(tmp_path / "t.jsonl", HELPED, UNHELPED).read_text().splitlines()
    ]
    document = tmp_path / "trial.json"
    document.write_text(json.dumps({"planned": 40, "records": rows}, indent=2), encoding="utf-8")
    assert json.loads(analyze(str(document), "--json"))["verdict"] == "collecting"
    assert json.loads(analyze(str(document), "--json", "--planned", "30"))["verdict"] == "helps"
    plain = json.loads(analyze(str(tmp_path / "t.jsonl"), "--json"))
    assert (plain["planned"], plain["verdict"]) == (stats.DEFAULT_PLANNED, "collecting")


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ('{"session": "s"}\n', "Error: {path}: line 1: turn must be a string, got None\n"),
        (
            '\n{"session": \n',
            "Error: {path}: line 2: not valid JSON: Expecting value: line 1 column 13 (char 12)\n",
        ),
        ('{"records": 3}', 'Error: {path}: "records" must be a list\n'),
    ],
)
def test_a_bad_file_says_where(tmp_path: Path, text: str, error: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(text, encoding="utf-8")
    assert analyze(str(path), code=1) == error.format(path=path)


def test_the_planned_size_has_a_floor_here_too(tmp_path: Path) -> None:
    path = write(tmp_path / "trial.jsonl", HELPED[:2], UNHELPED[:2])
    assert analyze(str(path), "--planned", "10", code=1) == (
        "Error: the planned size must be at least 30 sessions in each arm, got 10\n"
    )
