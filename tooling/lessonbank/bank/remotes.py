"""Team banks: the user's registry of them, their clones under the data folder, pull and branch commits.

Where things live is index.layers' (the hooks read the same paths): the registry
`<data>/remotes.json` ({"teams": {NAME: {"url": URL, "branch": BRANCH}}}, written sorted and
indented) and one clone per team at `<data>/teams/NAME`. A clone's `.lessonbank/` (its compiled
index) is excluded through .git/info/exclude, so the hooks' state never makes it dirty.

`pull` only ever fast-forwards: a clone with uncommitted changes, on another branch, or whose
branch and the remote's have both moved on is reported with what to do, and left as it is.
Writing into a team bank (`on_branch`) happens on a new branch of its clone, ready for a pull
request there; the clone goes back to its tracked branch afterwards, so the hooks see a team
lesson only once it is merged and pulled.
"""

from __future__ import annotations

import contextlib
import json
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from lessonbank.bank.git import GitRepo, clone
from lessonbank.bank.store import MARKER, Bank, flocked, write_atomic
from lessonbank.errors import BankError, GitError
from lessonbank.index import layers
from lessonbank.state import statedir

EXCLUDE = "/" + statedir.STATE + "/"


def data_dir() -> Path:
    """The user's data folder for lessonbank (BankError when HOME is not set)."""
    found = layers.data_dir()
    if found is None:
        raise BankError("cannot tell where your data folder is: set HOME (or XDG_DATA_HOME)")
    return Path(found)


def registry() -> dict[str, dict[str, str]]:
    """name -> {"url", "branch"} of every registered team bank."""
    return layers.read_registry(str(data_dir()))


def _write_registry(teams: dict[str, dict[str, str]], dry_run: bool) -> str:
    text = json.dumps({"teams": {n: teams[n] for n in sorted(teams)}}, indent=2, sort_keys=True) + "\n"
    return write_atomic(Path(layers.registry_path(str(data_dir()))), text, dry_run=dry_run)


def clone_path(name: str) -> Path:
    return Path(layers.team_root(str(data_dir()), name))


def check_name(name: str) -> None:
    if not layers.valid_name(name):
        raise BankError(
            f"{name!r} is not a team bank name: use lower-case letters, digits, '-', '_' and '.' "
            "(not first), at most 64 characters"
        )


@contextlib.contextmanager
def _locked() -> Iterator[None]:
    """One change to the registry and clones at a time (two `bank pull`s must not race)."""
    folder = data_dir()
    folder.mkdir(parents=True, exist_ok=True)
    with flocked(folder / ".lock"):
        yield


def add(name: str, url: str, branch: str | None = None, dry_run: bool = False) -> tuple[Path, str]:
    """Register a team bank and clone it; return (clone folder, branch). The repository must hold a
    bank (bank.toml at its top)."""
    check_name(name)
    if "://" not in url and ":" not in url.split("/")[0] and Path(url).exists():
        url = str(Path(url).resolve())  # a folder on disk, named the same from every project
    with _locked():
        teams = registry()
        path = clone_path(name)
        if name in teams:
            raise BankError(f"team bank {name!r} is already registered ({teams[name]['url']}): `bank remote remove {name}` first")
        if path.exists():
            raise BankError(f"{path} exists but is not registered: move it away, then add {name!r} again")
        if dry_run:
            return path, branch or "(its default branch)"
        path.parent.mkdir(parents=True, exist_ok=True)
        clone(url, path, branch)
        try:
            repo = GitRepo(path)
            try:
                tracked = branch or _current_branch(repo)
                if tracked is None:
                    raise BankError(f"{url} has no branch to follow: give one with --branch")
                refused = _tracks_state(repo, "HEAD", url)
                if refused:
                    raise BankError(refused)
                _exclude_state(repo)
            finally:
                repo.close()
            if not (path / MARKER).is_file():
                raise BankError(_no_bank(url, path, branch))
            rebuild(path)  # before registering: a bank that cannot be read leaves nothing behind
            teams[name] = {"url": url, "branch": tracked}
            _write_registry(teams, dry_run=False)
        except BaseException:
            shutil.rmtree(path, ignore_errors=True)
            raise
    return path, tracked


def remove(name: str, force: bool = False, dry_run: bool = False) -> Path:
    """Forget a team bank and delete its clone; refused while the clone holds work that is not pushed."""
    check_name(name)
    with _locked():
        teams = registry()
        path = clone_path(name)
        if name not in teams:
            raise BankError(f"no team bank {name!r}: `bank remote list` shows them")
        if path.is_dir() and not force:
            unsaved = _unsaved(path)
            if unsaved:
                raise BankError(
                    f"the clone of {name!r} ({path}) holds work that is not pushed: {unsaved}; "
                    "push it (or pass --force to delete it anyway)"
                )
        if not dry_run:
            del teams[name]
            _write_registry(teams, dry_run=False)
            shutil.rmtree(path, ignore_errors=True)
    return path


@dataclass
class Pulled:
    """What `pull` did with one team bank: ok (up to date or fast-forwarded) or not, and why."""

    name: str
    ok: bool
    message: str
    changed: list[str] = field(default_factory=list)  # lesson files the pull brought, relative to the clone


def pull(names: list[str] | None = None) -> list[Pulled]:
    """Fetch each team bank (all, or `names`) and fast-forward its clone; never overwrite local work."""
    with _locked():
        teams = registry()
        for name in names or []:
            if name not in teams:
                raise BankError(f"no team bank {name!r}: `bank remote list` shows them")
        return [_pull_one(name, teams[name]) for name in sorted(names or teams)]


def _pull_one(name: str, entry: dict[str, str]) -> Pulled:
    path = clone_path(name)
    branch = entry["branch"]
    if not (path / ".git").exists():
        return Pulled(name, False, f"no clone at {path}: `bank remote remove {name}`, then add it again")
    repo = GitRepo(path)
    try:
        dirty = repo.dirty(["."])
        if dirty:
            shown = ", ".join(dirty[:3]) + (", …" if len(dirty) > 3 else "")
            return Pulled(
                name, False,
                f"not updated: {path} has uncommitted changes ({shown}); commit or discard them there, then `bank pull {name}`",
            )  # fmt: skip
        current = _current_branch(repo)
        if current != branch:
            return Pulled(
                name, False,
                f"not updated: {path} is on {current or 'a detached HEAD'}, not {branch}; "
                f"`git -C {path} switch {branch}`, then `bank pull {name}`",
            )  # fmt: skip
        # Commits of the clone that no remote-tracking ref holds: local work, never thrown away.
        local_work = _local_commits(repo, "HEAD")
        try:
            repo.run("fetch", "-q", "origin", f"+refs/heads/{branch}:refs/remotes/origin/{branch}")
        except GitError as exc:
            return Pulled(name, False, f"not updated: {exc}")
        local, remote = repo.ref_sha("HEAD"), repo.ref_sha(f"refs/remotes/origin/{branch}")
        if local == remote:
            return Pulled(name, True, f"up to date ({branch} at {str(local)[:7]})")
        if remote is None or local is None:
            return Pulled(name, False, f"not updated: origin has no branch {branch}")
        refused = _tracks_state(repo, remote, f"origin/{branch}")
        if refused:
            return Pulled(name, False, f"not updated: {refused}")
        how = "updated"
        if _ancestor(repo, local, remote):
            repo.run("merge", "-q", "--ff-only", remote)
        elif not local_work:
            # A rewind or force-push (how a team retracts a lesson): the clone holds nothing of its
            # own, so it follows origin, and the retracted lessons stop being injected.
            repo.run("reset", "-q", "--hard", remote)
            how = f"followed origin's rewrite of {branch} (the clone held no local work):"
        elif _ancestor(repo, remote, local):
            return Pulled(name, True, f"up to date; {branch} has local commits origin does not have: push them")
        else:
            return Pulled(
                name, False,
                f"not updated: {branch} in {path} and origin/{branch} have diverged (local commits origin does "
                f"not have); push them as a branch for a pull request, or drop them with "
                f"`git -C {path} reset --hard origin/{branch}`, then `bank pull {name}`",
            )  # fmt: skip
        _, changed = repo.run("diff", "--name-only", "--diff-filter=AM", "-z", local, remote, "--", "lessons")
    finally:
        repo.close()
    warning = rebuild(path)
    message = f"{how} {local[:7]}..{remote[:7]}" + (f"; {warning}" if warning else "")
    return Pulled(name, True, message, sorted(p for p in changed.split("\0") if p.endswith(".md")))


def rebuild(path: Path) -> str:
    """Rebuild a team clone's compiled index from its INDEX.md; say so when INDEX.md does not
    list the lessons as they are (the team repository needs a `bank index`)."""
    from lessonbank.bank import render

    bank = Bank.open(path)
    render.write_compiled(bank)
    stale = render.stale(bank)
    if stale:
        return f"out of date with its lessons: {', '.join(stale)}; the hooks read INDEX.md, so run `bank index` in the team repository and merge that"
    return ""


def status(name: str) -> str:
    """One line on a clone: its branch and commit, or why it is missing."""
    path = clone_path(name)
    if not (path / ".git").exists():
        return "no clone"
    repo = GitRepo(path)
    try:
        head = repo.head()
        return f"{_current_branch(repo) or 'detached'} at {head[:7] if head else 'no commit'}"
    finally:
        repo.close()


def on_branch(name: str, write: Callable[[Bank], tuple[list[str], str]]) -> tuple[str, Path]:
    """Run `write` on the team bank's clone and commit what it changed on a new branch
    `lessonbank/<label>`, then go back to the tracked branch; return (branch, clone folder).

    `write` returns the paths (relative to the clone) it changed and the label; no path: no
    branch is made ("" is returned).
    """
    check_name(name)
    with _locked():
        teams = registry()
        if name not in teams:
            raise BankError(f"no team bank {name!r}: `bank remote add {name} URL` first")
        path = clone_path(name)
        tracked = teams[name]["branch"]
        repo = GitRepo(path)
        try:
            if repo.dirty(["."]):
                raise BankError(f"{path} has uncommitted changes: commit or discard them there first")
            if _current_branch(repo) != tracked:
                raise BankError(f"{path} is not on {tracked}: `git -C {path} switch {tracked}` first")
            changed, label = write(Bank.open(path))
            if not changed:
                return "", path
            _, branches = repo.run("for-each-ref", "--format=%(refname:short)", "refs/heads")
            existing = set(branches.split())
            new = f"lessonbank/{label}"
            number = 2
            while new in existing:
                new, number = f"lessonbank/{label}-{number}", number + 1
            try:
                repo.run("switch", "-q", "-c", new)
                repo.commit(changed, f"lessonbank: {label}")
            finally:
                repo.run("switch", "-q", tracked, check=False)  # no -f: work that failed to commit stays, and is reported
        finally:
            repo.close()
    rebuild(path)
    return new, path


def _no_bank(url: str, path: Path, branch: str | None) -> str:
    """Why a fresh clone shows no bank.toml, and what to do: a bare repository whose HEAD names a
    branch nobody pushed (`git init --bare` says master, the pushes went to main) checks out nothing."""
    others: list[str] = []
    if branch is None:
        repo = GitRepo(path)
        try:
            code, _ = repo.run("rev-parse", "--verify", "-q", "HEAD", check=False)
            if code != 0:
                _, listed = repo.run("branch", "-r", "--format=%(refname:lstrip=3)", check=False)
                others = sorted(b for b in listed.split() if b and b != "HEAD")
        finally:
            repo.close()
    if others:
        return (
            f"{url}: its default branch has no commits, so nothing was checked out; it has "
            f"{', '.join(others)}: give one with --branch {others[0]}"
        )
    return f"{url} holds no bank ({MARKER} at its top): run `bank init` in that repository and push it"


def _current_branch(repo: GitRepo) -> str | None:
    ref = repo.head_ref()
    return ref.removeprefix("refs/heads/") if ref.startswith("refs/heads/") else None


def _ancestor(repo: GitRepo, older: str, newer: str) -> bool:
    code, _ = repo.run("merge-base", "--is-ancestor", older, newer, check=False)
    return code == 0


def _local_commits(repo: GitRepo, ref: str) -> bool:
    """Whether `ref` holds commits that no remote-tracking ref holds (local work)."""
    _, count = repo.run("rev-list", "--count", ref, "--not", "--remotes")
    return count.strip() not in ("", "0")


def _tracks_state(repo: GitRepo, rev: str, where: str) -> str:
    """Why a team bank at `rev` cannot be followed: it tracks `.lessonbank/` (each machine's own
    state: a committed file or symlink there would be read or written through); "" when it does not."""
    code, listed = repo.run("ls-tree", "-r", "-z", "--name-only", rev, "--", statedir.STATE, check=False)
    if code != 0:  # no such commit (an empty clone): nothing is tracked, and the caller says why
        return ""
    files = sorted(p for p in listed.split("\0") if p)
    if not files:
        return ""
    shown = ", ".join(files[:3]) + (", …" if len(files) > 3 else "")
    return (
        f"{where} tracks {statedir.STATE}/ ({shown}), each machine's own state, so lessonbank will not follow it; "
        f"the team should run `git rm -r --cached {statedir.STATE}` there and commit"
    )


def _exclude_state(repo: GitRepo) -> None:
    """Keep the clone's `.lessonbank/` out of git's sight (its own .gitignore may not name it)."""
    path = repo.git_path("info/exclude")
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    if EXCLUDE not in text.splitlines():
        write_atomic(path, text + ("" if not text or text.endswith("\n") else "\n") + EXCLUDE + "\n")


def _unsaved(path: Path) -> str:
    """What in a clone is not on its remote: uncommitted files, local commits; "" for nothing."""
    repo = GitRepo(path)
    try:
        dirty = repo.dirty(["."])
        _, branches = repo.run("for-each-ref", "--format=%(refname:short)", "refs/heads")
        unpushed = [b for b in branches.split() if _local_commits(repo, b)]
    finally:
        repo.close()
    parts = ([f"uncommitted changes ({', '.join(dirty[:3])})"] if dirty else [])
    parts += ([f"branches with commits not pushed ({', '.join(unpushed)})"] if unpushed else [])
    return "; ".join(parts)
