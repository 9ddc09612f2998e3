"""`bank rules`: the managed rules block in CLAUDE.md and AGENTS.md changes nothing around it, and Cursor's rule files follow rules/."""

from __future__ import annotations

from pathlib import Path

from lessonbank.groom.rulesync import BLOCK_BEGIN, BLOCK_END
from tests.conftest import run
from tests.groom import groom_support
from tests.groom.groom_support import golden, write

# The fixtures of groom_support: a bank with a small project in a real git repository.
bank = groom_support.bank


def test_rules_blocks_change_nothing_else(bank: Path) -> None:
    head = "# Project memory\n\nHand-written: keep answers short.\n\n"
    tail = "\n## After the block\n\nAlso hand-written.\n"
    old_block = f"{BLOCK_BEGIN}\n@rules/gone.md\n{BLOCK_END}\n"
    (bank / "CLAUDE.md").write_text(head + old_block + tail)
    agents_before = (bank / "AGENTS.md").read_text()
    write(bank, {
        "rules/git.md": "# Rules: git\n\n## Stash with -u\n\n**When** stashing: use `git stash -u`\n",
        "rules/testing.md": "# Rules: testing\n\n<!-- lessonbank:begin 01JA -->\n## Timeouts\n\nAlways.\n"
                            "<!-- lessonbank:end 01JA -->\n\nsee lessonbank:rules:end for nothing\n",
    })  # fmt: skip
    result = run(bank, "rules")
    assert result.output == "update    AGENTS.md\nupdate    CLAUDE.md\n"
    claude = (bank / "CLAUDE.md").read_text()
    assert claude.startswith(head) and claude.endswith(tail)
    golden("CLAUDE-block.md", claude)
    agents = (bank / "AGENTS.md").read_text()
    assert agents.startswith(agents_before)
    golden("AGENTS-block.md", agents)
    assert run(bank, "rules").output == "unchanged AGENTS.md\nunchanged CLAUDE.md\n"
    # Cursor rules where asked; a retired rule's .mdc goes, a hand-written one stays.
    write(bank, {".cursor/rules/mine.mdc": "---\ndescription: mine\n---\nmine\n"})
    assert run(bank, "rules", "--cursor").output == (
        "unchanged AGENTS.md\nunchanged CLAUDE.md\ncreate    .cursor/rules/git.mdc\ncreate    .cursor/rules/testing.mdc\n"
    )
    golden("cursor-testing.mdc", (bank / ".cursor" / "rules" / "testing.mdc").read_text())
    (bank / "rules" / "git.md").unlink()
    assert run(bank, "rules", "--cursor", "--dry-run").output == (
        "update    AGENTS.md\nupdate    CLAUDE.md\nunchanged .cursor/rules/testing.mdc\n"
        "delete    .cursor/rules/git.mdc\ndry run: nothing written\n"
    )
    assert (bank / ".cursor" / "rules" / "git.mdc").exists()
    run(bank, "rules", "--cursor")
    assert sorted(p.name for p in (bank / ".cursor" / "rules").iterdir()) == ["mine.mdc", "testing.mdc"]
    assert (bank / "CLAUDE.md").read_text() == head + f"{BLOCK_BEGIN}\n" + (
        "<!-- Managed by `bank rules` from rules/*.md: edit those files, not this block. -->\n"
        f"@rules/testing.md\n{BLOCK_END}\n" + tail
    )


def test_claude_md_that_imports_or_is_agents_md(bank: Path) -> None:
    write(bank, {"rules/testing.md": "# Rules: testing\n\n## Timeouts\n", "CLAUDE.md": "@AGENTS.md\n"})
    assert run(bank, "rules").exit_code == 0
    assert (bank / "CLAUDE.md").read_text() == "@AGENTS.md\n\n" + BLOCK_BEGIN + "\n" + (
        "<!-- Managed by `bank rules` from rules/*.md: edit those files, not this block. -->\n"
        "<!-- The rules reach Claude through @AGENTS.md, which holds a copy of them. -->\n"
    ) + BLOCK_END + "\n"
    (bank / "CLAUDE.md").unlink()
    (bank / "CLAUDE.md").symlink_to("AGENTS.md")
    result = run(bank, "rules")
    assert result.output == "unchanged AGENTS.md\n"
    assert (bank / "AGENTS.md").read_text().count(BLOCK_BEGIN) == 1


def test_broken_rules_block_is_refused(bank: Path) -> None:
    (bank / "CLAUDE.md").write_text(f"# Memory\n{BLOCK_BEGIN}\n@rules/x.md\n")
    write(bank, {"rules/testing.md": "# Rules: testing\n"})
    result = run(bank, "rules")
    assert result.exit_code == 1
    assert (
        result.output == "Error: CLAUDE.md: the lessonbank rules block markers are broken; fix them by hand\n"
    )
