"""Rules in each agent's native, scoped form: a rule whose lessons say where they apply loads only
there (.claude/rules, .github/instructions, Cursor's globs), the others stay always loaded, and a
rule that loses its paths moves back with nothing left behind."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import yaml

from lessonbank.groom.rulesync import BLOCK_BEGIN, BLOCK_END
from tests.conftest import git, run
from tests.groom.groom_support import add_lesson, commit_all, write

PYTHON = (
    "# Rules: python\n\n<!-- lessonbank:begin 01JPY -->\n## Await coroutines\n\n"
    "**When** calling async code: await it\n\n**Applies to:** `**/*.py`, `docs/{api,guide}.md`\n"
    "<!-- lessonbank:end 01JPY -->\n"
)
GIT = "# Rules: git\n\n<!-- lessonbank:begin 01JGIT -->\n## Stash with -u\n\n**When** stashing: use -u\n<!-- lessonbank:end 01JGIT -->\n"
MARK = "<!-- lessonbank:rules generated from rules/python.md by `bank rules`; edit that file instead. -->"
BODY = (
    f"{MARK}\n\n# Rules: python\n\n## Await coroutines\n\n**When** calling async code: await it\n\n"
    "**Applies to:** `**/*.py`, `docs/{api,guide}.md`\n"
)
GLOBS = ["**/*.py", "docs/api.md", "docs/guide.md"]


def block(text: str) -> str:
    return text[text.index(BLOCK_BEGIN) + len(BLOCK_BEGIN) + 1 : text.index(BLOCK_END)]


def front(text: str) -> dict:
    return yaml.safe_load(text.split("---\n")[1])


def mdc_front(text: str) -> dict:
    """A Cursor rule's frontmatter as Cursor reads it: `globs` a bare comma-separated string (it is
    not YAML: Cursor writes `**/*.py` unquoted), every other line YAML."""
    out = {}
    for line in text.split("---\n")[1].splitlines():
        key, _, value = line.partition(": ")
        out[key.rstrip(":")] = value if key == "globs" else yaml.safe_load(line)[key.rstrip(":")]
    return out


def test_a_scoped_rule_takes_each_agents_own_form(bank: Path) -> None:
    write(bank, {
        "rules/python.md": PYTHON,
        "rules/git.md": GIT,
        ".github/copilot-instructions.md": "# Copilot\n\nHand-written.\n",
        ".claude/rules/mine.md": "Hand-written rule.\n",
    })  # fmt: skip

    result = run(bank, "rules", "--cursor")

    assert result.output == (
        "create    AGENTS.md\ncreate    CLAUDE.md\ncreate    .claude/rules/python.md\n"
        "update    .github/copilot-instructions.md\ncreate    .github/instructions/python.instructions.md\n"
        "create    .cursor/rules/git.mdc\ncreate    .cursor/rules/python.mdc\n"
    )
    # Claude Code: the unscoped rule imported, the scoped one in .claude/rules with its paths.
    assert block((bank / "CLAUDE.md").read_text()) == (
        "<!-- Managed by `bank rules` from rules/*.md: edit those files, not this block. -->\n"
        "<!-- Rules scoped to paths are in .claude/rules/: Claude loads each for a matching file. -->\n"
        "@rules/git.md\n"
    )
    claude = (bank / ".claude" / "rules" / "python.md").read_text()
    assert claude == '---\npaths:\n  - "**/*.py"\n  - "docs/api.md"\n  - "docs/guide.md"\n---\n\n' + BODY
    assert front(claude) == {"paths": GLOBS}
    # Copilot: the scoped rule in .github/instructions with applyTo; its block keeps only the other.
    copilot = (bank / ".github" / "copilot-instructions.md").read_text()
    assert copilot.startswith("# Copilot\n\nHand-written.\n\n")
    assert "Stash with -u" in block(copilot) and "Await coroutines" not in block(copilot)
    assert "<!-- Rules scoped to paths are in .github/instructions/. -->" in block(copilot)
    instructions = (bank / ".github" / "instructions" / "python.instructions.md").read_text()
    assert instructions == '---\napplyTo: "**/*.py,docs/api.md,docs/guide.md"\n---\n\n' + BODY
    # Cursor: globs and a real false for the scoped rule, a real true for the other.
    mdc = (bank / ".cursor" / "rules" / "python.mdc").read_text()
    assert mdc.startswith(
        "---\ndescription: Project rules (python) promoted by lessonbank from lessons seen in two sessions\n"
        "globs: **/*.py,docs/api.md,docs/guide.md\nalwaysApply: false\n---\n\n"
    )
    assert mdc_front(mdc)["alwaysApply"] is False and mdc_front(mdc)["globs"] == ",".join(GLOBS)
    assert mdc_front((bank / ".cursor" / "rules" / "git.mdc").read_text())["alwaysApply"] is True
    # AGENTS.md cannot scope: it holds both.
    agents = block((bank / "AGENTS.md").read_text())
    assert "Await coroutines" in agents and "Stash with -u" in agents

    again = run(bank, "rules", "--cursor").output
    assert again.split() == [word for line in result.output.splitlines() for word in ("unchanged", line.split()[1])]


def test_a_rule_that_loses_its_paths_moves_back_with_nothing_left(bank: Path) -> None:
    write(bank, {
        "rules/python.md": PYTHON,
        ".github/copilot-instructions.md": "# Copilot\n",
        ".github/instructions/mine.instructions.md": "---\napplyTo: \"*.go\"\n---\nmine\n",
        ".claude/rules/mine.md": "Hand-written rule.\n",
    })  # fmt: skip
    run(bank, "rules", "--cursor")
    # The lesson's section no longer says where it applies: the rule is for every file again.
    write(bank, {"rules/python.md": PYTHON.replace("\n**Applies to:** `**/*.py`, `docs/{api,guide}.md`\n", "")})

    result = run(bank, "rules", "--cursor")

    assert result.output == (
        "update    AGENTS.md\nupdate    CLAUDE.md\ndelete    .claude/rules/python.md\n"
        "update    .github/copilot-instructions.md\ndelete    .github/instructions/python.instructions.md\n"
        "update    .cursor/rules/python.mdc\n"
    )
    assert "@rules/python.md" in block((bank / "CLAUDE.md").read_text())
    assert "Await coroutines" in block((bank / ".github" / "copilot-instructions.md").read_text())
    assert mdc_front((bank / ".cursor" / "rules" / "python.mdc").read_text())["alwaysApply"] is True
    assert sorted(p.name for p in (bank / ".claude" / "rules").iterdir()) == ["mine.md"]
    assert sorted(p.name for p in (bank / ".github" / "instructions").iterdir()) == ["mine.instructions.md"]
    assert (bank / ".claude" / "rules" / "mine.md").read_text() == "Hand-written rule.\n"
    # A rule file gone takes its scoped copies with it too.
    write(bank, {"rules/python.md": PYTHON})
    run(bank, "rules")
    (bank / "rules" / "python.md").unlink()
    assert "delete    .claude/rules/python.md" in run(bank, "rules").output
    assert sorted(p.name for p in (bank / ".claude" / "rules").iterdir()) == ["mine.md"]


def test_a_section_without_paths_keeps_the_rule_always_loaded(bank: Path) -> None:
    write(bank, {"rules/python.md": PYTHON.replace("<!-- lessonbank:end 01JPY -->\n", "<!-- lessonbank:end 01JPY -->\n" + GIT.split("\n", 2)[2])})
    assert run(bank, "rules").output == "create    AGENTS.md\ncreate    CLAUDE.md\n"
    assert "@rules/python.md" in (bank / "CLAUDE.md").read_text()
    assert not (bank / ".claude" / "rules").exists()


def test_claude_md_that_imports_agents_md_gets_no_scoped_copies(bank: Path) -> None:
    write(bank, {"rules/python.md": PYTHON, "CLAUDE.md": "@AGENTS.md\n"})
    assert run(bank, "rules").output == "create    AGENTS.md\nupdate    CLAUDE.md\n"
    assert not (bank / ".claude" / "rules").exists()  # AGENTS.md already brings every rule


def test_groom_writes_the_scope_and_a_second_run_changes_nothing(bank: Path) -> None:
    write(bank, {"src/app.py": "async def main():\n    pass\n"})
    add_lesson(bank, "await-it", "rule:python", paths=["src/**/*.py"], title="Await coroutines")
    add_lesson(bank, "gather", "rule:python", paths=["*.py"], title="Gather with return_exceptions")
    commit_all(bank, "lessons")

    result = run(bank, "groom", "--commit")

    assert result.exit_code == 0, result.output
    assert "create    .claude/rules/python.md\n" in result.output
    rule = (bank / "rules" / "python.md").read_text()
    assert "**Applies to:** `src/**/*.py`\n" in rule and "**Applies to:** `*.py`\n" in rule
    assert front((bank / ".claude" / "rules" / "python.md").read_text()) == {"paths": ["**/*.py", "src/**/*.py"]}
    assert git(bank, "status", "--porcelain") == ""  # all of it in the groom's commit
    assert "@rules/python.md" not in (bank / "CLAUDE.md").read_text()
    assert run(bank, "groom").output.endswith("\nnothing to change\n")
    assert set(run(bank, "rules").output.split()[::2]) == {"unchanged"}


def test_every_skill_groom_writes_passes_the_reference_validator(bank: Path) -> None:
    add_lesson(bank, "tty", "skill:pytest-tips", title='pytest "hangs": waiting for a TTY #1', paths=["tests/**"])
    add_lesson(bank, "order", "skill:pytest-tips", title="Test order: -p no:randomly", seen=3)
    add_lesson(bank, "fork", "skill:pool", title="Close the pool before forking")
    commit_all(bank, "lessons")
    assert run(bank, "groom", "--commit").exit_code == 0

    skills = sorted((bank / ".claude" / "skills").glob("*/SKILL.md"))
    assert [p.parent.name for p in skills] == ["pool", "pytest-tips"]
    for skill in skills:
        done = subprocess.run(
            [sys.executable, "-m", "skills_ref.cli", "validate", str(skill.parent)],
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert (done.returncode, done.stdout) == (0, f"Valid skill: {skill.parent}\n"), done.stderr
