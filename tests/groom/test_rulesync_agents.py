"""`bank rules` keeps GEMINI.md (or Gemini's context.fileName) and .github/copilot-instructions.md
in line with rules/*.md, with the same managed block as AGENTS.md, where the project uses them."""

from __future__ import annotations

import json
from pathlib import Path

from lessonbank.groom.rulesync import BLOCK_BEGIN, BLOCK_END
from tests.conftest import run

RULE = "# Rules: testing\n\n## Timeouts\n\nRun pytest with -p no:randomly.\n"


def block(text: str) -> str:
    return text[text.index(BLOCK_BEGIN) : text.index(BLOCK_END) + len(BLOCK_END)]


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")


def test_no_gemini_or_copilot_here_no_files(bank: Path) -> None:
    write(bank, {"rules/testing.md": RULE})
    assert run(bank, "rules").output == "create    AGENTS.md\ncreate    CLAUDE.md\n"
    assert not (bank / "GEMINI.md").exists() and not (bank / ".github").exists()


def test_gemini_and_copilot_get_the_same_copy_as_agents_md(bank: Path) -> None:
    write(bank, {
        "rules/testing.md": RULE,
        ".gemini/settings.json": "{}",
        ".github/copilot-instructions.md": "# Copilot\n\nHand-written: be brief.\n",
    })  # fmt: skip
    result = run(bank, "rules")
    assert result.output == (
        "create    AGENTS.md\ncreate    CLAUDE.md\ncreate    GEMINI.md\nupdate    .github/copilot-instructions.md\n"
    )
    agents = block((bank / "AGENTS.md").read_text())
    gemini = block((bank / "GEMINI.md").read_text())
    copilot_text = (bank / ".github" / "copilot-instructions.md").read_text()
    assert copilot_text.startswith("# Copilot\n\nHand-written: be brief.\n\n")
    for copy in (gemini, block(copilot_text)):
        assert "Run pytest with -p no:randomly." in copy
        assert copy.split("\n", 2)[2] == agents.split("\n", 2)[2]  # the same rules below the head line
    assert run(bank, "rules").output == (
        "unchanged AGENTS.md\nunchanged CLAUDE.md\nunchanged GEMINI.md\nunchanged .github/copilot-instructions.md\n"
    )
    (bank / "rules" / "testing.md").write_text(RULE + "\n## More\n\nAnd this.\n")
    assert "update    GEMINI.md" in run(bank, "rules").output
    assert "And this." in (bank / ".github" / "copilot-instructions.md").read_text()


def test_geminis_context_file_name_is_honoured(bank: Path) -> None:
    settings = {"context": {"fileName": ["AGENTS.md", "TEAM.md"]}}
    write(bank, {"rules/testing.md": RULE, ".gemini/settings.json": json.dumps(settings)})
    assert run(bank, "rules").output == "create    AGENTS.md\ncreate    CLAUDE.md\ncreate    TEAM.md\n"
    assert not (bank / "GEMINI.md").exists()


def test_copilots_installed_hooks_bring_its_instructions(bank: Path) -> None:
    write(bank, {"rules/testing.md": RULE})
    assert run(bank, "install", "copilot").exit_code == 0
    assert "create    .github/copilot-instructions.md" in run(bank, "rules").output
