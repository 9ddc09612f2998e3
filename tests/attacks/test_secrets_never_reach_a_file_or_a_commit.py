"""No credential reaches a file, a file name or a commit by any capture route; look-alikes stay.

The per-route tests of tests/bank/test_secrets.py check the bank's files after each route;
here every format of the table goes in, the bank is committed, and git's history is searched,
and the routes that table does not take (the Stop hook's pending blocks) are attacked too.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lessonbank.bank.store import Bank
from lessonbank.state import statedir
from tests.bank.secret_cases import LOOK_ALIKES, SECRETS
from tests.bank.test_secrets import BY_NAME, _secret_of, assert_nothing_secret, pieces
from tests.conftest import git, run

NAMES = [name for name, _, _ in SECRETS]


def assert_not_in_history(root: Path, names: list[str]) -> None:
    history = git(root, "log", "-p", "--all", "--format=%H %s") + git(root, "log", "--all", "--name-only")
    for name in names:
        for piece in pieces(BY_NAME[name][1]):
            assert piece not in history, f"{name}: {piece!r} reached git history"


def test_every_format_by_blocks_reaches_no_file_and_no_commit(bank: Path) -> None:
    blocks = [
        "\n".join([
            "#lesson",
            f"title: {name} handling {n}",
            "tool: Bash",
            f"mistake: step {n} of the release failed with {_secret_of(name)}",
            f"fix: read the credential for step {n} from the vault, not the script",
            "promote-to: rule:release",
            "#/lesson",
        ])  # fmt: skip
        for n, name in enumerate(NAMES)
    ]
    result = run(bank, "capture", "--blocks", input="\n\n".join(blocks))
    assert result.exit_code == 0, result.output
    assert_nothing_secret(bank, NAMES)
    git(bank, "add", "lessons", "INDEX.md", "BANK.md")
    git(bank, "commit", "-q", "-m", "lessons")
    assert_not_in_history(bank, NAMES)


def test_pending_blocks_are_saved_redacted_and_refused_redacted(bank: Path) -> None:
    """The Stop hook's pending file holds the agent's raw message; neither the saved lesson nor
    the refusal that names a block may echo a credential."""
    good, refused = "sendgrid key", "hugging face token"
    saved = f"#lesson\ntool: Bash\nmistake: the mail job failed with {_secret_of(good)}\nfix: load the mail key from the vault\npromote-to: rule:mail\n#/lesson"
    bad = f"#lesson\ntool: Bash\ntrigger: (a+)+$\nmistake: the upload failed with {_secret_of(refused)}\nfix: use the hub cache\npromote-to: rule:hub\n#/lesson"
    pending = bank / statedir.STATE / statedir.PENDING_LESSONS
    pending.parent.mkdir(exist_ok=True)
    lines = [json.dumps({"session": "s1", "turn": "1", "message": m}) for m in (saved, bad)]
    pending.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = run(bank, "capture", "--pending")
    assert result.exit_code == 1
    assert "created lessons/" in result.output
    assert "refused:" in result.output and "[REDACTED:" in result.output
    for name in (good, refused):
        for piece in pieces(BY_NAME[name][1]):
            assert piece not in result.output
    assert_nothing_secret(bank, [good, refused])


# `user@github.com` reads as an e-mail address to the personal-data gate (not the secret gate).
KEPT = [c for c in LOOK_ALIKES if c[0] != "url without password"]


@pytest.mark.parametrize(("name", "text"), KEPT, ids=[c[0] for c in KEPT])
def test_look_alikes_are_kept_verbatim(bank: Path, name: str, text: str) -> None:
    result = run(
        bank, "capture", "--when", f"setting up the {name} step", "--do", text, "--promote-to", "rule:setup"
    )
    assert result.exit_code == 0, result.output
    assert "redacted" not in result.output
    (item,) = Bank.open(bank).load()
    assert item.lesson.do == text
