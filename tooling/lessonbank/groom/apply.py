"""Grooming as one reviewable git change, all or nothing: the dirty refusal, the plan, the commit.

`carry_out` takes a plan from `plan.plan_groom` and computes every file it changes before
writing one: destinations, lesson edits and removals, INDEX.md and BANK.md rendered from the
lessons that remain, and what `rulesync` writes into CLAUDE.md, AGENTS.md and the other agents'
files (run on `_Overlay`, a scratch view of the bank). With a commit, git is asked first whether
it can commit (no `index.lock`, no merge in progress, an identity, no path it refuses: ignored,
invalid, inside a submodule or in the way of another file) and the commit object is built in a
scratch index; only then does `transaction.in_checkout` write, journaled, and move the ref.
`--branch` grooms HEAD in a linked worktree inside .git/ (`branch_worktree`) and only creates
the branch: the user's checkout, index, branch and uncommitted files are never touched.
It imports `bank`, `plan`, `rulesync`, `transaction` and `errors`.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from lessonbank.bank import render
from lessonbank.bank.git import GitRepo
from lessonbank.bank.lesson import Lesson, parse
from lessonbank.bank.store import TEMP_RE, Bank, remove, write_atomic
from lessonbank.errors import BankError, GitError
from lessonbank.groom import rulesync, transaction
from lessonbank.groom.plan import Plan, bank_paths, commit_message

# --------------------------------------------------------------------------- the dirty refusal


def watched(bank: Bank, repo: GitRepo, plan: Plan) -> list[str]:
    """The bank's files and the doc destinations in the plan, as git names them."""
    files, dirs = bank_paths(bank, repo)
    docs = [repo.rel(bank.root / rel) for rel in plan.writes]
    return sorted({*files, *(d.rstrip("/") for d in dirs), *docs})


def refuse_if_dirty(bank: Bank, repo: GitRepo, plan: Plan) -> None:
    """Raise when a file groom would touch has uncommitted changes (they would mix into its commit).

    Temporary files that killed writers left behind are not changes: they are not counted.
    """
    dirty = [
        p
        for p in repo.dirty(watched(bank, repo, plan))
        if not TEMP_RE.match(p.rsplit("/", 1)[-1])
    ]
    if dirty:
        shown = ", ".join(dirty[:5]) + (f" and {len(dirty) - 5} more" if len(dirty) > 5 else "")
        raise BankError(
            f"refused: the bank's files have uncommitted changes ({shown}); "
            "commit them first, or pass --allow-dirty"
        )


# --------------------------------------------------------------- the changes, before any write


def _lessons_after(bank: Bank, plan: Plan) -> list[Lesson]:
    """The lessons as they will be once the plan's removals and edits are written."""
    removed = {p.resolve() for p in plan.removals.values()}
    edited = {path.resolve(): text for path, text in plan.edits.values()}
    out = []
    for item in bank.load():
        where = item.path.resolve()
        if where in removed:
            continue
        out.append(parse(edited[where]) if where in edited else item.lesson)
    return out


class _Overlay(Bank):
    """The bank as `rulesync` will find it once the earlier changes are written, in a scratch folder.

    Every file rulesync opens goes through `inside`, which copies it (or its new text) from the
    real bank into the scratch folder on first use, with the real bank's containment checks; the
    rule files are there from the start. So rulesync runs unchanged and writes only scratch files.
    """

    def __init__(self, real: Bank, scratch: Path, overlay: dict[Path, str | None]) -> None:
        super().__init__(root=scratch, config=real.config)
        self.real = real
        self.overlay = overlay
        self.copied: set[Path] = set()
        rules = (real.root / "rules").resolve()
        names = {p.name: p.resolve() for p in rulesync.rule_files(real)}
        for path, text in overlay.items():
            if path.parent == rules and path.suffix == ".md" and text is not None:
                names[path.name] = path
        for name in sorted(names):
            self._copy(names[name], scratch / "rules" / name)

    def inside(self, relpath: str) -> Path:
        real = self.real.inside(relpath)
        mirror = self.root / real.relative_to(self.real.root.resolve())
        self._copy(real, mirror)
        return mirror

    def _copy(self, real: Path, mirror: Path) -> None:
        if real in self.copied:
            return
        self.copied.add(real)
        if real in self.overlay:
            text = self.overlay[real]
            data = None if text is None else text.encode("utf-8")
        elif real.is_file():
            data = real.read_bytes()
        elif real.is_dir():
            mirror.mkdir(parents=True, exist_ok=True)
            for child in real.iterdir():
                if child.is_file():
                    self._copy(child.resolve(), mirror / child.name)
            for path in self.overlay:
                if path.parent == real:
                    self._copy(path, mirror / path.name)
            return
        else:
            return
        if data is not None:
            mirror.parent.mkdir(parents=True, exist_ok=True)
            mirror.write_bytes(data)


def _rules_after(
    bank: Bank, overlay: dict[Path, str | None], cursor: bool | None
) -> list[tuple[str, Path, str | None, str]]:
    """What `rulesync.sync` would write once `overlay` is applied, run on an `_Overlay` of the bank."""
    scratch = transaction.scratch_dir(bank, "rules-")
    try:
        view = _Overlay(bank, scratch, overlay)
        out = []
        for label, action in rulesync.sync(view, cursor=cursor):
            written = action not in ("delete", "unchanged")
            text = view.inside(label).read_text(encoding="utf-8") if written else None
            out.append((label, bank.inside(label), text, action))
        return out
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def changes_of(
    bank: Bank, plan: Plan, cursor: bool | None = None
) -> tuple[list[tuple[str, str]], list[transaction.Change]]:
    """Every file the plan changes, with its new text, computed before anything is written.

    Returns the (name, action) lines `bank groom` prints, in the order it always printed them
    (destinations, lesson edits, removals, INDEX.md and BANK.md, the rules blocks), and the changes.
    """
    results: list[tuple[str, str]] = []
    changes: list[transaction.Change] = []
    overlay: dict[Path, str | None] = {}

    def add(label: str, path: Path, text: str | None, action: str) -> None:
        results.append((label, action))
        if action != "unchanged":
            changes.append(transaction.Change(label, path, text))
            overlay[path.resolve()] = text

    for rel in sorted(plan.writes):
        path, text, _ = plan.writes[rel]
        add(rel, path, text, write_atomic(path, text, dry_run=True))
    for rel in sorted(plan.edits):
        path, text = plan.edits[rel]
        add(rel, path, text, write_atomic(path, text, dry_run=True))
    for rel in sorted(plan.removals):
        path = plan.removals[rel]
        add(rel, path, None, remove(path, dry_run=True))
    if plan.removals or plan.edits:
        for name, generated in render.render(bank, _lessons_after(bank, plan)).items():
            path = bank.root / name
            add(name, path, generated, write_atomic(path, generated, dry_run=True))
    for label, path, synced, action in _rules_after(bank, overlay, cursor):
        add(label, path, synced, action)
    return results, changes


def _preflight(repo: GitRepo, changes: list[transaction.Change], ref: str, checkout: bool) -> None:
    """Refuse, before anything is written, what would make git fail to commit the groom."""
    problems = []
    if checkout:
        lock = repo.git_path("index.lock")
        if lock.exists():
            problems.append(
                f"{lock} exists: another git command is running, or one was killed; "
                "remove that file once no git command is running"
            )
        if repo.unmerged():
            problems.append("a merge, cherry-pick or revert is in progress; finish or abort it first")
    if ref != "HEAD" and repo.git_path(ref + ".lock").exists():
        problems.append(f"{repo.git_path(ref + '.lock')} exists: another git command is updating {ref}")
    folders = {repo.git_path("objects")}
    if checkout:
        for change in changes:
            folder = change.path.parent
            while not folder.exists() and folder != folder.parent:
                folder = folder.parent
            folders.add(folder)
    for folder in sorted(folders):
        if not os.access(folder, os.W_OK):  # a read-only checkout or disk: say where, write nothing
            problems.append(f"cannot write {folder}: read-only file system or no permission")
    identity = repo.identity_problem()
    if identity:
        problems.append(f"git has no identity to commit with ({identity}); set user.name and user.email")
    written = [repo.rel(c.path) for c in changes if c.text is not None]
    try:
        for path, rule in sorted(repo.ignored([p for p in written if repo.mode_at_head(p) is None]).items()):
            problems.append(f"git ignores {path} ({rule}), so it cannot be committed")
    except GitError as exc:  # e.g. a path inside a submodule
        problems.append(str(exc))
    if problems:
        raise GitError("refused before writing anything: " + "; ".join(problems))


def _build(
    repo: GitRepo, changes: list[transaction.Change], message: str, ref: str, parent: str, scratch: Path
) -> transaction.Commit:
    """Write the blobs, tree and commit object (no ref moves, no file of the checkout changes)."""
    blobs_dir = scratch / "blobs"
    blobs_dir.mkdir(parents=True, exist_ok=True)
    written = [c for c in changes if c.text is not None]
    files = []
    for i, change in enumerate(written):
        blob = blobs_dir / str(i)
        blob.write_bytes(change.text.encode("utf-8") if change.text is not None else b"")
        files.append(blob)
    shas = dict(zip((id(c) for c in written), repo.hash_files(files), strict=True))
    entries: list[tuple[str, str | None, str | None]] = []
    for change in changes:
        path = repo.rel(change.path)
        if change.text is None:
            entries.append((path, None, None))
        else:
            mode = repo.mode_at_head(path) or "100644"
            entries.append((path, mode if mode in ("100644", "100755") else "100644", shas[id(change)]))
    try:
        new = repo.build_commit(parent, entries, message, scratch / "tree.index")
    except GitError as exc:
        raise GitError(f"refused before writing anything: {exc}") from None
    finally:
        shutil.rmtree(blobs_dir, ignore_errors=True)
        with contextlib.suppress(FileNotFoundError):
            (scratch / "tree.index").unlink()
    return transaction.Commit(ref, parent, new, entries)


def _prepare(
    bank: Bank, repo: GitRepo, changes: list[transaction.Change], message: str, ref: str, checkout: bool
) -> transaction.Commit:
    """Ask git whether it can commit, then build the commit on HEAD; nothing of the checkout changes."""
    head = repo.head()
    if head is None:
        raise GitError("the repository has no commit yet; groom verifies lessons against committed code")
    _preflight(repo, changes, ref, checkout)
    scratch = transaction.scratch_dir(bank, "commit-")
    try:
        return _build(repo, changes, message, ref, head, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _on_branch(bank: Bank, repo: GitRepo, changes: list[transaction.Change], message: str, ref: str) -> str:
    """Create branch `ref` with the groom's commit on HEAD; the checkout is not touched."""
    commit = _prepare(bank, repo, changes, message, ref, checkout=False)
    transaction.step("ref", ref)
    repo.update_ref(ref, commit.new, None)
    return commit.new


@contextlib.contextmanager
def branch_worktree(bank: Bank, repo: GitRepo) -> Iterator[tuple[Bank, GitRepo]]:
    """HEAD checked out in a temporary linked worktree, with the bank at the same place in it.

    `bank groom --branch` plans and commits there, so the user's checkout, index and current
    branch stay as they are. The worktree is journaled: a kill leaves nothing the next run does
    not remove.
    """
    head = repo.head()
    if head is None:
        raise GitError("the repository has no commit yet; make one before grooming on a branch")
    folder = transaction.journal_dir(bank)
    where = repo.git_path("lessonbank-groom-worktree")  # inside .git: nothing walks or indexes it
    # Left by a kill before its journal was written: the folder, or only git's record of it.
    repo.worktree_remove(where)
    journal = {"version": 1, "mode": "branch", "files": [], "dirs": [], "worktree": str(where)}
    with bank.lock():
        transaction.clear(folder)
        transaction.write_durably(folder / transaction.JOURNAL, json.dumps(journal, indent=1).encode())
    try:
        repo.worktree_add(where, head)
        inner = where / repo.rel(bank.root) if repo.rel(bank.root) not in ("", ".") else where
        wt_repo = GitRepo(where)
        try:
            yield Bank.open(inner), wt_repo
        finally:
            wt_repo.close()
    finally:
        with bank.lock():
            transaction.finish(bank, repo, journal, folder, landed=True)


@dataclass
class Applied:
    """What carrying out a plan did: the files written or deleted, and the commit (if one was made)."""

    results: list[tuple[str, str]] = field(default_factory=list)
    sha: str | None = None
    nothing: bool = False  # nothing to change: no write, no branch, no commit


def carry_out(
    bank: Bank, repo: GitRepo, plan: Plan, branch: str | None = None, commit: bool = False
) -> Applied:
    """Carry the plan out as one transaction: written (and committed when asked), or not at all.

    With `branch`, the bank and repo are the temporary worktree of `branch_worktree`: the commit
    goes onto a new branch NAME and nothing is written to any checkout.
    """
    results, changes = changes_of(bank, plan)
    if not changes:
        return Applied(results, nothing=True)
    message = commit_message(plan)
    if branch:
        ref = repo.check_new_branch(branch)
        return Applied(results, _on_branch(bank, repo, changes, message, ref))
    built: transaction.Commit | None = None
    if commit:
        built = _prepare(bank, repo, changes, message, repo.head_ref(), checkout=True)
    transaction.in_checkout(bank, repo, changes, built, compiled=bool(plan.removals or plan.edits))
    return Applied(results, built.new if built else None)
