"""Personal data is redacted like secrets, on every route into the bank."""

from __future__ import annotations

from pathlib import Path

import pytest

from lessonbank.capture.redaction import redact
from tests.conftest import run


@pytest.mark.parametrize(
    ("text", "clean", "kinds"),
    [
        ("Thats not my email though its jane.doe@example.com", "Thats not my email though its [REDACTED:email]",
         ["email"]),
        ("/home/kenth56/vsla/src/a.c:3:9: error", "~/vsla/src/a.c:3:9: error", ["home path"]),
        ("/Users/agurodriguez/Code/torre/apps", "~/Code/torre/apps", ["home path"]),
        ("C:\\Users\\Mischa\\Documents\\repo", "~\\Documents\\repo", ["home path"]),
        ("call +1 415-555-0134 or (415) 555-0134", "call [REDACTED:phone number] or [REDACTED:phone number]",
         ["phone number"]),
        ("+44 20 7946 0958", "[REDACTED:phone number]", ["phone number"]),
        # not personal: versions, times, addresses, ports, ids, git remotes, a home folder already shortened
        ("v1.2.3 at 2026-01-14T18:03:06 on 10.0.0.1:8080 id 1234567890", None, []),
        ("git@github.com:org/repo.git and ~/Documents and /home/ alone", None, []),
        ("make -j4 2>&1 | head -100; exit 127", None, []),
    ],
)  # fmt: skip
def test_personal_data_is_redacted(text: str, clean: str | None, kinds: list[str]) -> None:
    out, found = redact(text)
    assert out == (clean if clean is not None else text)
    assert [r.kind for r in found] == kinds


def test_capture_redacts_personal_data_before_writing(bank: Path) -> None:
    result = run(bank, "capture", "--promote-to", "rule:general", "--when", "running the release script in /home/alice/shop",
                 "--do", "ask alice@example.com for the signing key, never commit it")  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "redacted before writing: 1 email, 1 home path" in result.output
    text = "".join(p.read_text() for p in (bank / "lessons").glob("*.md"))
    assert "alice" not in text and "~/shop" in text
