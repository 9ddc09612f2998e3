"""Grooming as one reviewable git change: the dirty-tree refusal, carrying out a plan, the commit."""

from __future__ import annotations

from dataclasses import dataclass, field

from lessonbank.bank.git import GitRepo
from lessonbank.bank.store import Bank
from lessonbank.errors import BankError
from lessonbank.groom import promote, rulesync


def watched(bank: Bank, repo: GitRepo, plan: promote.Plan) -> list[str]:
    """The bank's files and the doc destinations in the plan, as git names them."""
    files, dirs = promote.bank_paths(bank, repo)
    docs = [repo.rel(bank.root / rel) for rel in plan.writes]
    return sorted({*files, *(d.rstrip("/") for d in dirs), *docs})


def refuse_if_dirty(bank: Bank, repo: GitRepo, plan: promote.Plan) -> None:
    """Raise when a file groom would touch has uncommitted changes (they would mix into its commit)."""
    dirty = repo.dirty(watched(bank, repo, plan))
    if dirty:
        shown = ", ".join(dirty[:5]) + (f" and {len(dirty) - 5} more" if len(dirty) > 5 else "")
        raise BankError(
            f"refused: the bank's files have uncommitted changes ({shown}); "
            "commit them first, or pass --allow-dirty"
        )


@dataclass
class Applied:
    """What carrying out a plan did: the files written or deleted, and the commit (if one was made)."""

    results: list[tuple[str, str]] = field(default_factory=list)
    sha: str | None = None
    nothing: bool = False  # nothing to change: no write, no branch, no commit


def carry_out(
    bank: Bank, repo: GitRepo, plan: promote.Plan, branch: str | None = None, commit: bool = False
) -> Applied:
    """Write the plan (on a new branch if asked) and commit it when asked or on a branch."""
    if not plan.changes and all(a == "unchanged" for _, a in rulesync.sync(bank, dry_run=True)):
        return Applied(nothing=True)
    if branch:
        repo.create_branch(branch)
    results = promote.apply_plan(bank, plan)
    sha = promote.commit_plan(bank, repo, plan, results) if commit or branch else None
    return Applied(results, sha)


def demo_step(bank: Bank) -> list[str]:
    """`bank demo`: a lesson seen in two sessions graduates into a rule, as one git commit."""
    repo = GitRepo(bank.root)
    try:
        lines: list[str] = []
        pending = repo.dirty([repo.rel(bank.root)])
        if pending:
            sha = repo.commit(pending, "demo: lessons captured so far")
            lines.append(f"committed the captured lessons ({sha[:7]}) so groom starts from a clean bank")
        plan = promote.plan_groom(bank, repo)
        lines.append("bank groom --commit")
        for d in plan.decisions:
            where = f" -> {plan.targets[d.lesson_id]}" if d.lesson_id in plan.targets else ""
            lines.append(f"  {d.outcome:12} {d.slug}: {d.reason}{where}")
        applied = carry_out(bank, repo, plan, commit=True)
        lines += [f"  {action:9} {rel}" for rel, action in applied.results if action != "unchanged"]
        if applied.sha:
            lines.append(f"  committed {applied.sha[:7]}: {promote.commit_message(plan).splitlines()[0]}")
        for rel in sorted(set(plan.targets.values())):
            text = (bank.root / rel).read_text(encoding="utf-8")
            lines.append(f"{rel} now holds:")
            lines += [
                f"  {ln}"
                for ln in rulesync.strip_sections(text).splitlines()
                if ln.startswith(("## ", "**When**"))
            ]
        claude = bank.root / "CLAUDE.md"
        if claude.is_file():
            imports = [ln for ln in claude.read_text(encoding="utf-8").splitlines() if ln.startswith("@")]
            lines.append(f"CLAUDE.md imports: {' '.join(imports) or '(nothing)'}")
        again = promote.plan_groom(bank, repo)
        lines.append("groom again: " + ("nothing to change" if not again.changes else "more to do"))
        return lines
    finally:
        repo.close()
