"""Grooming as one reviewable git change: the dirty-tree refusal, the plan written, the commit.

`carry_out` takes a plan from `plan.plan_groom` and writes it under the bank's lock: destinations,
lesson edits and removals, then INDEX.md and BANK.md regenerated and the rules blocks of CLAUDE.md,
AGENTS.md (and Cursor) synced by `rulesync`; on a new branch when asked, and committed with the
plan's message naming exactly the files it touched. It imports `bank`, `plan`, `rulesync` and
`errors`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lessonbank.bank import render
from lessonbank.bank.git import GitRepo
from lessonbank.bank.store import Bank, remove, write_atomic
from lessonbank.errors import BankError
from lessonbank.groom import rulesync
from lessonbank.groom.plan import Plan, bank_paths, commit_message


def watched(bank: Bank, repo: GitRepo, plan: Plan) -> list[str]:
    """The bank's files and the doc destinations in the plan, as git names them."""
    files, dirs = bank_paths(bank, repo)
    docs = [repo.rel(bank.root / rel) for rel in plan.writes]
    return sorted({*files, *(d.rstrip("/") for d in dirs), *docs})


def refuse_if_dirty(bank: Bank, repo: GitRepo, plan: Plan) -> None:
    """Raise when a file groom would touch has uncommitted changes (they would mix into its commit)."""
    dirty = repo.dirty(watched(bank, repo, plan))
    if dirty:
        shown = ", ".join(dirty[:5]) + (f" and {len(dirty) - 5} more" if len(dirty) > 5 else "")
        raise BankError(
            f"refused: the bank's files have uncommitted changes ({shown}); "
            "commit them first, or pass --allow-dirty"
        )


def apply_plan(bank: Bank, plan: Plan, cursor: bool | None = None) -> list[tuple[str, str]]:
    """Write the plan: destinations, lesson edits and removals, INDEX/BANK, the rules blocks."""
    results: list[tuple[str, str]] = []
    rulesync.sync(bank, cursor=cursor, dry_run=True)  # a file it cannot read stops us before any write
    with bank.lock():
        for rel in sorted(plan.writes):
            path, text, _ = plan.writes[rel]
            results.append((rel, write_atomic(path, text)))
        for rel in sorted(plan.edits):
            path, text = plan.edits[rel]
            results.append((rel, write_atomic(path, text)))
        for rel in sorted(plan.removals):
            results.append((rel, remove(plan.removals[rel])))
        if plan.removals or plan.edits:
            for name, action in render.regenerate(bank):
                if name in render.GENERATED:
                    results.append((name, action))
        results += rulesync.sync(bank, cursor=cursor)
    return results


def commit_plan(bank: Bank, repo: GitRepo, plan: Plan, results: list[tuple[str, str]]) -> str:
    """Commit exactly the files the groom wrote or deleted, with its message; return the sha."""
    changed = [repo.rel(bank.root / rel) for rel, action in results if action != "unchanged"]
    return repo.commit(changed, commit_message(plan))


@dataclass
class Applied:
    """What carrying out a plan did: the files written or deleted, and the commit (if one was made)."""

    results: list[tuple[str, str]] = field(default_factory=list)
    sha: str | None = None
    nothing: bool = False  # nothing to change: no write, no branch, no commit


def carry_out(
    bank: Bank, repo: GitRepo, plan: Plan, branch: str | None = None, commit: bool = False
) -> Applied:
    """Write the plan (on a new branch if asked) and commit it when asked or on a branch."""
    if not plan.changes and all(a == "unchanged" for _, a in rulesync.sync(bank, dry_run=True)):
        return Applied(nothing=True)
    if branch:
        repo.create_branch(branch)
    results = apply_plan(bank, plan)
    sha = commit_plan(bank, repo, plan, results) if commit or branch else None
    return Applied(results, sha)
