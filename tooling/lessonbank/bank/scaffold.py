"""`bank init`: the files a new bank needs, written only where nothing is there yet."""

from __future__ import annotations

from pathlib import Path

from lessonbank.bank import render as generate
from lessonbank.bank.store import Bank, write_atomic
from lessonbank.config import DEFAULT_TOML

STATE_IGNORE = ".lessonbank/"


def init(root: Path, ci: bool = False, dry_run: bool = False) -> list[tuple[str, str]]:
    """Scaffold a bank at `root`; return (relative path, action) with exists for files left alone."""
    results: list[tuple[str, str]] = []
    for rel, text in (("bank.toml", DEFAULT_TOML), ("lessons/.gitkeep", ""), ("rules/.gitkeep", "")):
        target = root / rel
        results.append((rel, "exists" if target.exists() else write_atomic(target, text, dry_run)))
    results.append((".gitignore", ignore_state(root, dry_run)))
    if not dry_run:
        bank = Bank.open(root)
        for name, action in generate.regenerate(bank):
            if name in generate.GENERATED:
                results.append((name, action))
    if ci:
        from lessonbank.groom.rulesync import write_ci_workflow

        results.append((".github/workflows/bank-groom.yml", write_ci_workflow(root, dry_run=dry_run)))
    return results


def ignore_state(root: Path, dry_run: bool) -> str:
    """Make sure git ignores the bank's local state folder (session state, logs, caches)."""
    path = root / ".gitignore"
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    if any(line.strip() in (STATE_IGNORE, ".lessonbank", "/.lessonbank/") for line in text.splitlines()):
        return "unchanged"
    if text and not text.endswith("\n"):
        text += "\n"
    return write_atomic(path, text + STATE_IGNORE + "\n", dry_run)
