"""The git adapter: the only module that imports gitpython."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterable, Sequence
from pathlib import Path

import git

from lessonbank.errors import GitError

# Files larger than this are skipped when reading contents: generated blobs, not code to verify.
MAX_BLOB_BYTES = 8 * 1024 * 1024
_BINARY_PROBE = 8000


def _short(exc: BaseException) -> str:
    """The useful line of a git failure."""
    if isinstance(exc, git.GitCommandError):
        text = (exc.stderr or exc.stdout or "").strip()
        for line in text.splitlines():
            line = line.strip().strip("'").strip()
            if line.startswith("stderr:"):
                line = line[len("stderr:") :].strip().strip("'")
            if line:
                return line
        return f"git {exc.command[1] if len(exc.command) > 1 else ''} exited {exc.status}"
    return str(exc)


def init(path: Path) -> None:
    """Make `path` a new git repository on branch main (for `bank demo`)."""
    try:
        git.Repo.init(path, initial_branch="main").close()
    except git.GitCommandError as exc:
        raise GitError(f"git init failed in {path}: {_short(exc)}") from None


def init_bare(path: Path) -> None:
    """Make `path` a new bare git repository on branch main (for `bank demo`'s team bank)."""
    try:
        git.Repo.init(path, bare=True, initial_branch="main").close()
    except git.GitCommandError as exc:
        raise GitError(f"git init --bare failed in {path}: {_short(exc)}") from None


def clone(url: str, path: Path, branch: str | None = None) -> None:
    """Clone `url` into the new folder `path` (its `branch`, else its default one); no hooks run."""
    args = ["git", "-c", "core.hooksPath=/dev/null", "clone", "-q", *(["--branch", branch] if branch else []), "--", url, str(path)]
    try:
        done = subprocess.run(args, capture_output=True, env={**os.environ, "GIT_TERMINAL_PROMPT": "0"})
    except OSError as exc:
        raise GitError(f"cannot run git: {exc}") from None
    if done.returncode != 0:
        lines = [ln.strip() for ln in done.stderr.decode(errors="replace").splitlines() if ln.strip()]
        raise GitError(f"git clone {url} failed: {lines[-1] if lines else f'exit {done.returncode}'}")


# Reading commands (status above all) take index.lock only to refresh stat data; killed while
# holding it they would leave a lock that stops every later git command, the next groom's too.
_NO_OPTIONAL_LOCKS = {"GIT_OPTIONAL_LOCKS": "0"}


def unrecoverable(path: Path) -> str | None:
    """Why git could not give this file back once deleted, or None when HEAD holds it as it is."""
    try:
        repo = GitRepo(path.parent)
    except GitError:
        return "the bank is not in a git repository"
    try:
        rel = repo.rel(path)
        return "it was never committed" if repo.mode_at_head(rel) is None else (
            "it has uncommitted changes" if repo.dirty([rel]) else None)
    finally:
        repo.close()


class GitRepo:
    """A git working tree, seen through the few operations groom needs."""

    def __init__(self, path: Path) -> None:
        try:
            self.repo = git.Repo(path, search_parent_directories=True)
        except (git.InvalidGitRepositoryError, git.NoSuchPathError):
            raise GitError(f"{path} is not inside a git repository; run `git init` there first") from None
        self.repo.git.update_environment(**_NO_OPTIONAL_LOCKS)
        if self.repo.bare or self.repo.working_tree_dir is None:
            raise GitError(f"{path} is a bare git repository; groom needs a working tree")
        self.top = Path(self.repo.working_tree_dir).resolve()
        self._head_tree: dict[str, tuple[str, str, int]] | None = None
        self._changed: dict[str, frozenset[str] | None] = {}

    def close(self) -> None:
        """End the git helper processes gitpython keeps alive."""
        self.repo.close()

    def head(self) -> str | None:
        """The commit HEAD points to, or None in a repository without commits."""
        try:
            return str(self.repo.head.commit.hexsha)
        except ValueError:
            return None

    def rel(self, path: Path) -> str:
        """A path as git names it: relative to the top of the working tree, with '/'."""
        return Path(path).resolve().relative_to(self.top).as_posix()

    def _tree(self) -> dict[str, tuple[str, str, int]]:
        """path -> (mode, blob sha, size) for every file in HEAD's tree."""
        if self._head_tree is None:
            tree: dict[str, tuple[str, str, int]] = {}
            if self.head() is not None:
                out = self._git("ls-tree", "-r", "-z", "-l", "--full-tree", "HEAD")
                for entry in out.split("\0"):
                    if not entry:
                        continue
                    meta, _, path = entry.partition("\t")
                    mode, kind, sha, size = meta.split()
                    if kind == "blob":
                        tree[path] = (mode, sha, int(size) if size.isdigit() else 0)
            self._head_tree = tree
        return self._head_tree

    def tracked(self) -> list[str]:
        """Every file committed at HEAD, sorted, relative to the top of the working tree."""
        return sorted(self._tree())

    def read_head(self, paths: Iterable[str]) -> dict[str, str]:
        """The text of files at HEAD; binary, oversized, symlinked and unknown files are left out."""
        tree = self._tree()
        wanted: list[tuple[str, str]] = []
        for path in paths:
            mode, sha, size = tree.get(path) or ("", "", 0)  # no sha: not in HEAD's tree
            if sha and mode != "120000" and size <= MAX_BLOB_BYTES:
                wanted.append((path, sha))
        if not wanted:
            return {}
        # One `git cat-file --batch` for every blob: a process per file would dominate the run.
        request = "".join(f"{sha}\n" for _, sha in wanted).encode("ascii")
        try:
            done = subprocess.run(
                ["git", "cat-file", "--batch"], cwd=self.top, input=request, capture_output=True, check=True
            )
        except (OSError, subprocess.CalledProcessError) as exc:
            raise GitError(f"cannot read files at HEAD: {exc}") from None
        data = done.stdout
        out: dict[str, str] = {}
        pos = 0
        for path, _sha in wanted:
            nl = data.index(b"\n", pos)
            header = data[pos:nl].split()
            if len(header) < 3 or header[1] != b"blob":
                pos = nl + 1
                continue
            size = int(header[2])
            blob = data[nl + 1 : nl + 1 + size]
            pos = nl + 1 + size + 1
            if b"\0" not in blob[:_BINARY_PROBE]:
                out[path] = blob.decode("utf-8", errors="replace")
        return out

    def changed_since(self, commit: str) -> frozenset[str] | None:
        """Files that differ between `commit` and HEAD, or None when the commit is unknown here."""
        if commit not in self._changed:
            try:
                full = self._git("rev-parse", "--verify", "--quiet", f"{commit}^{{commit}}").strip()
            except GitError:
                full = ""
            if not full or self.head() is None:
                self._changed[commit] = None
            else:
                out = self._git("diff", "--name-only", "-z", "--no-renames", full, "HEAD")
                self._changed[commit] = frozenset(p for p in out.split("\0") if p)
        return self._changed[commit]

    def dirty(self, paths: Sequence[str]) -> list[str]:
        """Uncommitted changes (staged, unstaged or untracked) under the given paths only."""
        if not paths:
            return []
        out = self._git("status", "--porcelain", "-z", "--untracked-files=all", "--", *paths)
        found: list[str] = []
        entries = out.split("\0")
        i = 0
        while i < len(entries):
            entry = entries[i]
            i += 1
            if not entry:
                continue
            index_status, path = entry[0], entry[3:]  # "XY path": X the index's status, Y the work tree's
            found.append(path)
            if index_status in "RC":
                i += 1  # a rename carries its old path as the next entry
        return sorted(found)

    def check_new_branch(self, name: str) -> str:
        """Refuse an invalid or existing branch name; return its full ref (refs/heads/NAME)."""
        try:
            self.repo.git.check_ref_format("--branch", name)
        except git.GitCommandError:
            raise GitError(f"{name!r} is not a valid branch name") from None
        if name in [h.name for h in self.repo.heads]:
            raise GitError(f"branch {name!r} already exists; pick another name or delete it first")
        if self.head() is None:
            raise GitError("the repository has no commit yet; make one before grooming on a branch")
        return f"refs/heads/{name}"

    # Plumbing for a groom that is all-or-nothing (groom.apply): objects are written and checked
    # before the working tree is touched, and one ref update is the moment the commit exists.

    def git_path(self, name: str) -> Path:
        """A path inside the git directory (`git rev-parse --git-path`), absolute."""
        return (self.top / self._git("rev-parse", "--git-path", name).strip()).resolve()

    def head_ref(self) -> str:
        """The ref HEAD points to (refs/heads/main), or HEAD itself when detached."""
        done = self._run(["symbolic-ref", "-q", "HEAD"], check=False)
        return done.stdout.decode().strip() if done.returncode == 0 else "HEAD"

    def ref_sha(self, ref: str) -> str | None:
        """The commit a ref points to, or None when it does not exist."""
        done = self._run(["rev-parse", "--verify", "-q", f"{ref}^{{commit}}"], check=False)
        return done.stdout.decode().strip() or None if done.returncode == 0 else None

    def identity_problem(self) -> str | None:
        """Why git could not write a commit here (no author or committer identity), or None."""
        for var in ("GIT_AUTHOR_IDENT", "GIT_COMMITTER_IDENT"):
            done = self._run(["var", var], check=False)
            if done.returncode != 0:
                last = [ln for ln in done.stderr.decode(errors="replace").splitlines() if ln.strip()]
                return last[-1].strip() if last else f"git var {var} failed"
        return None

    def ignored(self, paths: Sequence[str]) -> dict[str, str]:
        """Untracked paths among `paths` that git's ignore rules make `git add` refuse: path -> rule."""
        if not paths:
            return {}
        done = self._run(
            ["check-ignore", "-v", "-z", "--stdin"],
            data="".join(p + "\0" for p in paths).encode(),
            check=False,
        )
        if done.returncode not in (0, 1):  # 1: none of them is ignored
            lines = [ln for ln in done.stderr.decode(errors="replace").splitlines() if ln.strip()]
            why = lines[-1].strip().removeprefix("fatal: ") if lines else f"exit {done.returncode}"
            raise GitError(f"git refuses a path: {why}")
        fields = done.stdout.decode(errors="replace").split("\0")
        out: dict[str, str] = {}
        for i in range(0, len(fields) - 3, 4):
            source, line, pattern, path = fields[i : i + 4]
            out[path] = f"{source}:{line} `{pattern}`"
        return out

    def mode_at_head(self, path: str) -> str | None:
        """The file mode of `path` at HEAD (100644, 100755, ...), or None when HEAD has no such file."""
        mode, _, _ = self._tree().get(path) or (None, "", 0)
        return mode

    def hash_files(self, files: Sequence[Path]) -> list[str]:
        """Write files' bytes as blobs (as they are: no filters); return their ids in order."""
        if not files:
            return []
        done = self._run(
            ["hash-object", "-w", "--no-filters", "--stdin-paths"],
            data="".join(f"{f}\n" for f in files).encode(),
        )
        shas = done.stdout.decode().split()
        if len(shas) != len(files):
            raise GitError("git hash-object returned fewer ids than files")
        return shas

    def build_commit(
        self, parent: str, entries: Sequence[tuple[str, str | None, str | None]], message: str, index: Path
    ) -> str:
        """The commit of `parent`'s tree with entries (path, mode, blob; None deletes) applied.

        Built in a scratch index (`index`), checked to change exactly those paths, and written as
        an object that no ref points to yet: the working tree and the real index are not touched.
        Git refusing a path (an invalid name, a file where a folder or submodule is) raises here.
        """
        env = {"GIT_INDEX_FILE": str(index)}
        self.read_tree(index, parent)
        self.stage_entries(index, entries, refresh=False)
        done = self._run(["diff-index", "--cached", "--name-only", "-z", "--no-renames", parent], env=env)
        changed = {p for p in done.stdout.decode(errors="replace").split("\0") if p}
        wanted = {path for path, _, _ in entries}
        extra = sorted(changed - wanted)
        if extra:
            raise GitError(
                f"git would also change {', '.join(extra[:3])}: a path of the groom conflicts with it"
            )
        for path, mode, _ in entries:
            if path not in changed and (mode is None) == (self.mode_at(parent, path, env) is not None):
                raise GitError(f"git refuses the path {path!r}")
        tree = self._run(["write-tree"], env=env).stdout.decode().strip()
        text = self._run(["stripspace"], data=message.encode()).stdout
        done = self._run(["commit-tree", tree, "-p", parent, "-F", "-"], data=text, env=env)
        return done.stdout.decode().strip()

    def mode_at(self, commit: str, path: str, env: dict[str, str] | None = None) -> str | None:
        """The mode of `path` in `commit`, or None when it has no such file."""
        done = self._run(["ls-tree", "-z", commit, "--", path], env=env)
        entry = done.stdout.decode(errors="replace").split("\0")[0]
        return entry.split()[0] if entry else None

    def update_ref(self, ref: str, new: str, old: str | None) -> None:
        """Point `ref` at `new` if it still points at `old` (None: only if it does not exist yet)."""
        self._run(["update-ref", "-m", "bank groom", ref, new, old or "0" * 40])
        self._head_tree = None
        self._changed.clear()

    def stage_entries(
        self, index: Path, entries: Sequence[tuple[str, str | None, str | None]], refresh: bool = True
    ) -> None:
        """Set entries (path, mode, blob; None removes) in the index file `index`, then refresh its stat data."""
        env = {"GIT_INDEX_FILE": str(index)}
        lines = [
            f"{mode} {blob}\t{path}\n" if mode and blob else f"0 {'0' * 40}\t{path}\n"
            for path, mode, blob in entries
        ]
        self._run(["update-index", "--index-info"], data="".join(lines).encode(), env=env)
        if refresh:
            self._run(["update-index", "-q", "--refresh"], env=env, check=False)

    def read_tree(self, index: Path, commit: str) -> None:
        """Fill the index file `index` from `commit`."""
        self._run(["read-tree", commit], env={"GIT_INDEX_FILE": str(index)})

    def unmerged(self) -> bool:
        """Whether a merge, cherry-pick or revert is in progress (a partial commit is refused then)."""
        if any(self.git_path(name).exists() for name in ("MERGE_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD")):
            return True
        return bool(self._git("ls-files", "-u").strip())

    def worktree_add(self, path: Path, commit: str) -> None:
        """Check `commit` out, detached, into a new linked worktree at `path` (no hooks run)."""
        env = {"GIT_LFS_SKIP_SMUDGE": "1"}
        self._run(
            ["-c", "core.hooksPath=/dev/null", "worktree", "add", "-q", "--detach", str(path), commit],
            env=env,
        )

    def worktree_remove(self, path: Path) -> None:
        """Remove a linked worktree (its folder and git's record of it); never raise."""
        self._run(["worktree", "remove", "--force", "--force", str(path)], check=False)
        # A `worktree add` killed half-way leaves its record locked ("initializing") and its folder
        # half made: remove refuses that, and prune skips locked records and those whose folder is
        # still there. So unlock, delete the folder, then prune: the next add finds nothing.
        self._run(["worktree", "unlock", str(path)], check=False)
        shutil.rmtree(path, ignore_errors=True)
        self._run(["worktree", "prune"], check=False)
        # Killed before its record was whole (no commondir, say), the record is one prune cannot
        # read, and the next add stops on it. The folder it describes is gone (above) and the
        # record is named after it, so it goes too.
        record = self.git_path("worktrees") / path.name
        if record.is_dir():
            shutil.rmtree(record, ignore_errors=True)

    def _run(
        self,
        args: list[str],
        data: bytes | None = None,
        env: dict[str, str] | None = None,
        check: bool = True,
    ) -> subprocess.CompletedProcess[bytes]:
        """Run git at the top of the working tree, bytes in and out; GitError on failure when `check`."""
        try:
            done = subprocess.run(
                ["git", *args], cwd=self.top, input=data, capture_output=True,
                env={**os.environ, **_NO_OPTIONAL_LOCKS, **(env or {})},
            )  # fmt: skip
        except OSError as exc:
            raise GitError(f"cannot run git: {exc}") from None
        if check and done.returncode != 0:
            lines = [ln.strip() for ln in done.stderr.decode(errors="replace").splitlines() if ln.strip()]
            raise GitError(f"git {args[0]} failed: {lines[-1] if lines else f'exit {done.returncode}'}")
        return done

    def run(self, *args: str, check: bool = True) -> tuple[int, str]:
        """(exit status, stdout) of a git command at the top of the working tree (GitError on failure when `check`)."""
        done = self._run(list(args), env={"GIT_TERMINAL_PROMPT": "0"}, check=check)
        self._head_tree = None
        self._changed.clear()
        return done.returncode, done.stdout.decode(errors="replace")

    def commit(self, paths: Sequence[str], message: str) -> str:
        """Commit exactly these paths (written or deleted) with `message`; return the new sha."""
        present = [p for p in paths if (self.top / p).exists()]
        gone = [p for p in paths if not (self.top / p).exists()]
        if present:
            self._git("add", "--", *present)
        if gone:
            self._git("rm", "-q", "--cached", "--ignore-unmatch", "--", *gone)
        known = set(self._git("ls-files", "-z").split("\0")) | set(self._tree())
        wanted = sorted({p for p in paths if p in known})
        if not wanted:
            raise GitError("nothing to commit: groom changed no file")
        self._git("commit", "-q", "-m", message, "--", *wanted)
        self._head_tree = None
        self._changed.clear()
        sha = self.head()
        assert sha is not None
        return sha

    def commit_all(self, message: str) -> str:
        """Stage everything git does not ignore and commit it; return the new sha."""
        self._git("add", "-A")
        self._git("commit", "-q", "-m", message)
        self._head_tree = None
        self._changed.clear()
        return self.head() or ""

    def _git(self, *args: str) -> str:
        try:
            return str(self.repo.git.execute(["git", *args], strip_newline_in_stdout=False))
        except git.GitCommandError as exc:
            raise GitError(f"git {args[0]} failed: {_short(exc)}") from None
