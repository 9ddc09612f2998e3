"""The groom's transaction in the checkout: a journal, a rollback, and recovery after a kill.

`in_checkout` writes the changes `apply` computed (and, with a commit, moves the ref and stages
them) as one transaction. Before the first write, a journal (`.lessonbank/groom-journal/`,
`statedir.GROOM_JOURNAL`) records each file's bytes and a digest of its new bytes, and the
commit and ref it will move; the real index stays under groom's own `index.lock` until the ref
has moved. A failure rolls every file back. After a kill -9, `recover` (run by `exclusive` at
the start of every `bank groom`) rolls back a journal whose commit did not land and completes
one whose commit did, keeping (and naming) any file someone changed since. It also deletes
write_atomic's temporary files that killed writers left. It imports `bank`, `plan` and `errors`.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
import secrets
import shutil
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lessonbank.bank import render
from lessonbank.bank.git import GitRepo
from lessonbank.bank.store import TEMP_RE, Bank, flocked, remove, write_atomic
from lessonbank.errors import BankError, GitError
from lessonbank.groom.plan import bank_paths
from lessonbank.state import statedir

JOURNAL = "journal.json"
_GROOM_LOCK = "lock"  # flock'd for a whole `bank groom` run: one groom at a time per bank
STALE_TEMP_SECONDS = 60.0  # younger temporary files may belong to a writer still running


def step(where: str, detail: str) -> None:
    """Called between the writes of a transaction; tests replace it to fail at a chosen point."""


@dataclass
class Change:
    """One file the groom changes: its name as printed, where it is, and its new text (None: delete)."""

    label: str
    path: Path
    text: str | None


# ------------------------------------------------------------------------------ the journal


def journal_dir(bank: Bank) -> Path:
    """The folder of the groom journal: .lessonbank/groom-journal/."""
    return bank.state_dir / statedir.GROOM_JOURNAL


def scratch_dir(bank: Bank, prefix: str) -> Path:
    """A scratch folder in the journal's folder (a kill's leftovers are cleared with the journal)."""
    try:
        folder = journal_dir(bank)
        folder.mkdir(parents=True, exist_ok=True)
        return Path(tempfile.mkdtemp(prefix=prefix, dir=folder)).resolve()
    except OSError:  # a read-only bank: the system's temporary folder then
        return Path(tempfile.mkdtemp(prefix="lessonbank-" + prefix)).resolve()


def _digest(path: Path) -> str | None:
    """sha256 of a file's bytes, or None when there is no file."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        return "folder"


def write_durably(path: Path, data: bytes) -> None:
    """write_atomic (which fsyncs the file), then fsync the folder so the rename survives a crash."""
    write_atomic(path, data)
    _fsync_dir(path.parent)


def _fsync_dir(folder: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def clear(folder: Path) -> None:
    """Empty the journal folder, the journal file first (it is what says a groom is unfinished)."""
    with contextlib.suppress(FileNotFoundError):
        (folder / JOURNAL).unlink()
        _fsync_dir(folder)
    if folder.is_dir():
        for entry in folder.iterdir():
            if entry.name == _GROOM_LOCK:
                continue
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry, ignore_errors=True)
            else:
                with contextlib.suppress(FileNotFoundError):
                    entry.unlink()


def _sweep_temps(folders: set[Path], names: set[str] | None, min_age: float) -> int:
    """Delete write_atomic temporaries in `folders` (of files named in `names`, if given)."""
    removed = 0
    now = time.time()
    for folder in sorted(folders):
        try:
            entries = list(folder.iterdir())
        except OSError:
            continue
        for entry in entries:
            if not TEMP_RE.match(entry.name) or not entry.is_file() or entry.is_symlink():
                continue
            if names is not None and entry.name[1:].rsplit(".", 2)[0] not in names:
                continue
            try:
                if now - entry.stat().st_mtime >= min_age:
                    entry.unlink()
                    removed += 1
            except OSError:
                continue
    return removed


@dataclass
class Commit:
    """A commit built before the working tree is touched, and where it goes."""

    ref: str
    old: str | None  # what the ref points to now (None: create it)
    new: str
    entries: list[tuple[str, str | None, str | None]]  # git path, mode, blob (None: delete)


def _owned_lock(path: Path, token: str) -> bool:
    try:
        return path.read_text(encoding="utf-8", errors="replace") == token
    except OSError:
        return False


def _install_index(repo: GitRepo, journal: dict[str, Any]) -> None:
    """Bring the real index in line with the commit for the groom's paths, under our index.lock."""
    index = Path(journal["index"])
    lock = Path(journal["index_lock"])
    scratch = Path(journal["index_scratch"])
    if not _owned_lock(lock, journal["token"]):
        return  # installed already (the lock is gone), or never taken
    # A scratch index and its lock left by a killed `git update-index` are ours (the name and
    # the index.lock holding our token say so); git refuses to stage into a locked one.
    for stale in (scratch, scratch.with_name(scratch.name + ".lock")):
        with contextlib.suppress(FileNotFoundError):
            stale.unlink()
    if index.exists():
        shutil.copyfile(index, scratch)
    else:
        repo.read_tree(scratch, journal["new"])
    entries = [(f["git"], f["mode"], f["blob"]) for f in journal["files"]]
    repo.stage_entries(scratch, entries)
    step("index", str(index))
    os.replace(scratch, index)
    lock.unlink()


def _roll_back(journal: dict[str, Any], folder: Path) -> list[str]:
    """Put every journaled file back as it was; return the files kept because someone changed them."""
    kept: list[str] = []
    for entry in reversed(journal["files"]):
        path = Path(entry["path"])
        now = _digest(path)
        if now == entry["before_sha"]:
            continue
        if now != entry["after_sha"]:
            kept.append(entry["path"])
            continue
        if entry["before"] is None:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
        else:
            write_atomic(path, base64.b64decode(entry["before"]))
    for made in journal["dirs"]:
        with contextlib.suppress(OSError):
            Path(made).rmdir()
    return kept


def finish(
    bank: Bank,
    repo: GitRepo | None,
    journal: dict[str, Any],
    folder: Path,
    landed: bool,
    sweep: bool = True,
) -> list[str]:
    """Roll back or complete a journaled groom, then clear the journal; return files kept.

    The compiled index (local state the hooks read) is rebuilt from the lessons as they end up.
    `sweep` also deletes write_atomic temporaries of the journaled files (a kill's leftovers).
    """
    kept: list[str] = []
    if journal["mode"] == "commit" and repo is not None:
        _drop_ref_locks(repo, journal)
    if journal["mode"] in ("work", "commit"):
        if landed:
            if journal["mode"] == "commit" and repo is not None:
                _install_index(repo, journal)
            kept = [f["path"] for f in journal["files"] if _digest(Path(f["path"])) != f["after_sha"]]
        else:
            kept = _roll_back(journal, folder)
            lock = journal.get("index_lock")
            if lock and _owned_lock(Path(lock), journal["token"]):
                Path(lock).unlink()
        scratch = journal.get("index_scratch")
        if scratch:
            with contextlib.suppress(FileNotFoundError):
                Path(scratch).unlink()
        if sweep:
            names = {Path(f["path"]).name for f in journal["files"]}
            _sweep_temps({Path(f["path"]).parent for f in journal["files"]}, names, 0.0)
        if journal.get("compiled"):
            compiled = render.compiled_path(bank)
            if sweep:
                _sweep_temps({compiled.parent}, {compiled.name}, 0.0)
            step("compiled", str(compiled))
            with contextlib.suppress(BankError):  # local state: `bank index` rebuilds it
                render.write_compiled(bank)
    worktree = journal.get("worktree")
    if worktree and repo is not None:
        repo.worktree_remove(Path(worktree))
        shutil.rmtree(worktree, ignore_errors=True)
    clear(folder)
    return kept


def _drop_ref_locks(repo: GitRepo, journal: dict[str, Any]) -> None:
    """Delete the ref locks a `git update-ref` killed with the groom left, and only those.

    git writes the new sha into `<ref>.lock` right after making it, and takes an empty
    `HEAD.lock` for HEAD's reflog; a kill between that and the rename leaves both, and every
    later git command (the next groom's included) refuses. A ref lock holding nothing or this
    journal's brand-new commit, which no other process can know, is ours.
    """
    ref_lock = repo.git_path(journal["ref"] + ".lock")
    try:
        content = ref_lock.read_text(encoding="ascii", errors="replace").strip()
    except OSError:  # no lock, or one we cannot read: nothing of ours to clear
        return
    if content not in ("", journal["new"]):
        return  # another process is moving the ref: not ours to touch
    with contextlib.suppress(FileNotFoundError):
        ref_lock.unlink()
    head_lock = repo.git_path("HEAD.lock")
    with contextlib.suppress(OSError):
        if head_lock.stat().st_size == 0:
            head_lock.unlink()


def recover(bank: Bank, repo: GitRepo) -> list[str]:
    """Finish what an interrupted groom left: roll it back, or complete it if its commit landed.

    Also deletes write_atomic temporaries older than a minute in the bank's folders. Returns
    lines for the user (nothing when there was nothing to do).
    """
    folder = journal_dir(bank)
    notes: list[str] = []
    with bank.lock():
        try:
            journal = json.loads((folder / JOURNAL).read_text(encoding="utf-8"))
        except FileNotFoundError:
            journal = None
        except (OSError, ValueError) as exc:
            raise BankError(
                f"{bank.relative(folder / JOURNAL)} cannot be read ({exc}); an interrupted groom "
                "cannot be undone automatically: check `git status`, then delete that folder"
            ) from None
        if journal is not None:
            landed = False
            if journal["mode"] == "commit":
                landed = repo.ref_sha(journal["ref"]) != journal["head"]
            kept = finish(bank, repo, journal, folder, landed)
            files = len(journal["files"])
            if journal["mode"] == "branch":
                notes.append("recovered: removed the worktree of an interrupted `bank groom --branch`")
            elif landed:
                notes.append(
                    f"recovered: completed an interrupted groom whose commit had landed ({files} files)"
                )
            else:
                notes.append(f"recovered: rolled back an interrupted groom ({files} files restored)")
            notes += [f"kept {bank.relative(Path(p))}: changed after the interrupted groom" for p in kept]
        else:
            clear(folder)
        _, dirs = bank_paths(bank, repo)
        managed = [repo.top / d.rstrip("/") for d in dirs]
        folders = {bank.root, *managed}
        folders |= {sub for d in managed if d.is_dir() for sub in d.rglob("*") if sub.is_dir()}
        inside = {f for f in folders if f == repo.top or repo.top in f.parents}
        swept = _sweep_temps(inside, None, STALE_TEMP_SECONDS)
        if swept:
            notes.append(f"cleaned {swept} temporary file{'s' if swept != 1 else ''} left by killed writers")
    return notes


@contextlib.contextmanager
def exclusive(bank: Bank, repo: GitRepo) -> Iterator[list[str]]:
    """One groom at a time on a bank; recover whatever an interrupted one left before starting."""
    folder = journal_dir(bank)
    with contextlib.ExitStack() as held:
        try:
            folder.mkdir(parents=True, exist_ok=True)
            held.enter_context(flocked(folder / _GROOM_LOCK, wait=False))
        except BlockingIOError:
            raise BankError("another `bank groom` is running on this bank; wait for it to finish") from None
        except OSError:
            if (folder / JOURNAL).exists():
                raise BankError(f"cannot write {folder}: an interrupted groom needs it to recover") from None
            yield []  # a read-only bank: no groom can have written (or will write) here
            return
        yield recover(bank, repo)


# ----------------------------------------------------------------- the transaction


def _missing_dirs(path: Path, stop: Path) -> list[Path]:
    out = []
    folder = path.parent
    while folder != stop and stop in folder.parents and not folder.exists():
        out.append(folder)
        folder = folder.parent
    return out


def in_checkout(
    bank: Bank, repo: GitRepo | None, changes: list[Change], commit: Commit | None, compiled: bool
) -> None:
    """Write the changes into the checkout (and move the ref, and stage them) as one transaction."""
    folder = journal_dir(bank)
    top = repo.top if repo is not None else bank.root
    with bank.lock():
        clear(folder)
        files: list[dict[str, Any]] = []
        dirs: list[str] = []
        for i, change in enumerate(changes):
            path = change.path
            try:
                old = path.read_bytes()
            except FileNotFoundError:
                old = None
            except OSError as exc:
                raise BankError(f"cannot read {path}: {exc.strerror}") from None
            git_path, mode, blob = commit.entries[i] if commit else (None, None, None)
            files.append({
                "path": str(path), "git": git_path, "mode": mode, "blob": blob,
                "before": None if old is None else base64.b64encode(old).decode("ascii"),
                "before_sha": None if old is None else hashlib.sha256(old).hexdigest(),
                "after_sha": None if change.text is None else hashlib.sha256(change.text.encode()).hexdigest(),
            })  # fmt: skip
            for made in _missing_dirs(path, top):
                if str(made) not in dirs:
                    dirs.append(str(made))
        dirs.sort(key=lambda d: -d.count("/"))
        journal: dict[str, Any] = {
            "version": 1, "mode": "work", "files": files, "dirs": dirs, "compiled": compiled,
        }  # fmt: skip
        if commit is not None:
            assert repo is not None
            journal.update(
                mode="commit", ref=commit.ref, head=commit.old, new=commit.new,
                token=f"lessonbank groom {os.getpid()} {secrets.token_hex(8)}\n",
                index=str(repo.git_path("index")), index_lock=str(repo.git_path("index.lock")),
                index_scratch=str(repo.git_path("lessonbank-groom.index")),
            )  # fmt: skip
        write_durably(folder / JOURNAL, json.dumps(journal, indent=1).encode())
        landed = False
        try:
            if commit is not None:
                try:
                    fd = os.open(journal["index_lock"], os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
                except FileExistsError:
                    raise GitError(
                        f"refused: {journal['index_lock']} exists: another git command is running"
                    ) from None
                with os.fdopen(fd, "w") as handle:
                    handle.write(journal["token"])
            for change in changes:
                step("write", change.label)
                if change.text is None:
                    remove(change.path)
                else:
                    write_atomic(change.path, change.text)
            if commit is not None:
                assert repo is not None
                step("ref", commit.ref)
                repo.update_ref(commit.ref, commit.new, commit.old)
                landed = True
                step("landed", commit.ref)
            elif changes:
                landed = True
        except BaseException:
            finish(bank, repo, journal, folder, landed=landed)  # roll back, or complete what landed
            raise
        finish(bank, repo, journal, folder, landed=True, sweep=False)
