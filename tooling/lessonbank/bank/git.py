"""The git adapter: the only module that imports gitpython."""

from __future__ import annotations

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


class GitRepo:
    """A git working tree, seen through the few operations groom needs."""

    def __init__(self, path: Path) -> None:
        try:
            self.repo = git.Repo(path, search_parent_directories=True)
        except (git.InvalidGitRepositoryError, git.NoSuchPathError):
            raise GitError(f"{path} is not inside a git repository; run `git init` there first") from None
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
            entry = tree.get(path)
            if entry is not None and entry[0] != "120000" and entry[2] <= MAX_BLOB_BYTES:
                wanted.append((path, entry[1]))
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
            found.append(entry[3:])
            if entry[0] in "RC":
                i += 1  # a rename carries its old path as the next entry
        return sorted(found)

    def create_branch(self, name: str) -> None:
        """Create branch `name` at HEAD and switch to it, keeping the working tree as it is."""
        try:
            self.repo.git.check_ref_format("--branch", name)
        except git.GitCommandError:
            raise GitError(f"{name!r} is not a valid branch name") from None
        if name in [h.name for h in self.repo.heads]:
            raise GitError(f"branch {name!r} already exists; pick another name or delete it first")
        if self.head() is None:
            raise GitError("the repository has no commit yet; make one before grooming on a branch")
        self._git("checkout", "-q", "-b", name)

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
