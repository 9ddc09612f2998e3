"""A transcript written with spaced JSON is read as its compact twin is."""

from __future__ import annotations

import json
from pathlib import Path

from lessonbank.cli.demo import DEMO_TRANSCRIPTS
from tests.conftest import run


def test_a_transcript_written_with_spaced_json_is_read(bank: Path, tmp_path: Path) -> None:
    compact = DEMO_TRANSCRIPTS / "shop-session.jsonl"
    spaced = tmp_path / "spaced.jsonl"
    lines = [json.dumps(json.loads(ln)) for ln in compact.read_text(encoding="utf-8").splitlines() if ln.strip()]
    assert '"type": "assistant"' in "\n".join(lines)
    spaced.write_text("\n".join(lines) + "\n", encoding="utf-8")
    found = run(bank, "scan", "--path", str(spaced), "--dry-run").output.splitlines()[1]
    assert found == run(bank, "scan", "--path", str(compact), "--dry-run").output.splitlines()[1]
    assert found.startswith("found 2 new candidates")
