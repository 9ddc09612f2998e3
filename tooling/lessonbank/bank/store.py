"""The bank on disk: finding its root, reading lessons, atomic writes, the capture lock."""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from lessonbank import config
from lessonbank.config import Config
from lessonbank.errors import BankError, LessonFormatError, NoBankError, NotFoundError
from lessonbank.index import derived_write, listing
from lessonbank.state import statedir

if TYPE_CHECKING:  # the YAML parser is imported only when a lesson is parsed
    from lessonbank.bank.lesson import Lesson
    from lessonbank.bank.names import Destination

MARKER = statedir.MARKER  # bank.toml: the file that makes a folder a bank
# write_atomic's temporary files: `.NAME.XXXXXXXX.tmp` beside the file they replace (mkstemp names
# them); groom deletes the ones killed writers left and does not count them as changes.
TEMP_RE = re.compile(r"^\..+\.[a-z0-9_]{8}\.tmp$")


@dataclass
class Loaded:
    """A lesson read from disk, with the text it came from."""

    path: Path
    text: str
    lesson: Lesson


@dataclass
class Problem:
    """A problem in a file, printed as `path:line: message`."""

    path: Path
    line: int
    message: str


def write_atomic(path: Path, data: str | bytes | Iterable[bytes], dry_run: bool = False, sync: bool = True) -> str:
    """Write `data` to `path` atomically when its bytes change; return create, update or unchanged.

    `data` may be an iterable of byte parts (a 50,000-lesson BANK.md or compiled index is tens of
    MB): they are compared with the file on disk as they come, and a temporary file is started only
    at the first difference (the equal bytes before it copied from the old file), so neither the
    new bytes nor the old are ever held whole. `sync`: flush to disk before the rename (local state
    a later run rebuilds can skip it).
    """
    parts: Iterable[bytes] = (data.encode("utf-8"),) if isinstance(data, str) else (data,) if isinstance(data, bytes) else data
    try:
        old: BinaryIO | None = open(path, "rb")  # noqa: SIM115 -- closed below, read alongside the parts
    except FileNotFoundError:
        old = None
    except OSError as exc:
        raise BankError(f"cannot read {path}: {exc.strerror}") from None
    try:
        return _write_parts(path, parts, old, dry_run, sync)
    finally:
        if old is not None:
            old.close()


def _write_parts(path: Path, parts: Iterable[bytes], old: BinaryIO | None, dry_run: bool, sync: bool) -> str:
    action = "create" if old is None else "update"
    out: BinaryIO | None = None
    tmp = ""
    same = 0  # bytes equal to the old file's so far (while no temporary file is started)
    try:
        for part in parts:
            if out is None and old is not None:
                try:
                    if old.read(len(part)) == part:
                        same += len(part)
                        continue
                except OSError as exc:
                    raise BankError(f"cannot read {path}: {exc.strerror}") from None
            if dry_run:
                return action
            if out is None:
                out, tmp = _start(path)
                if old is not None:
                    derived_write.copy(old, out, 0, same)
            out.write(part)
        if out is None:
            if old is not None and not old.read(1):
                return "unchanged"
            if dry_run:
                return action
            out, tmp = _start(path)
            if old is not None:
                derived_write.copy(old, out, 0, same)
        out.flush()
        if sync:
            os.fsync(out.fileno())
        out.close()
        os.chmod(tmp, os.fstat(old.fileno()).st_mode & 0o7777 if old is not None else 0o644)
        os.replace(tmp, path)
        tmp = ""
    except OSError as exc:
        raise BankError(f"cannot write {path}: {exc.strerror}") from None
    finally:
        if out is not None and not out.closed:
            # On a full disk close() retries the failed flush and raises again: the temporary
            # file must still go, and the BankError naming the file must stand.
            with contextlib.suppress(OSError):
                out.close()
        if tmp:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
    return action


def _start(path: Path) -> tuple[BinaryIO, str]:
    """A temporary file beside `path`, named as TEMP_RE expects (groom deletes one a killed writer left)."""
    import tempfile  # here: with what it imports, a tenth of `bank list`'s start-up

    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    return os.fdopen(fd, "wb"), tmp


def remove(path: Path, dry_run: bool = False) -> str:
    """Delete a file; return delete or unchanged (when it was not there)."""
    if not path.exists():
        return "unchanged"
    if not dry_run:
        path.unlink()
    return "delete"


@dataclass
class Bank:
    """A bank: the folder holding bank.toml, lessons/ and the generated files."""

    root: Path
    config: Config = field(default_factory=Config)
    load_problems: list[Problem] = field(default_factory=list)

    @property
    def lessons_dir(self) -> Path:
        return self.root / "lessons"

    @property
    def state_dir(self) -> Path:
        return self.root / statedir.STATE

    @property
    def templates_dir(self) -> Path:
        return self.root / "templates"

    @classmethod
    def find(cls, start: Path | None = None, root: Path | None = None) -> Bank:
        """The bank at `root` (or $BANK_ROOT), else the nearest folder above `start` with bank.toml."""
        if root is None and os.environ.get("BANK_ROOT"):
            root = Path(os.environ["BANK_ROOT"])
        if root is not None:
            root = root.expanduser().resolve()
            if not (root / MARKER).is_file():
                raise NoBankError(f"No bank at {root}: run `bank init {root}`, or pass another --root")
            return cls.open(root)
        here = (start or Path.cwd()).resolve()
        for folder in (here, *here.parents):
            if (folder / MARKER).is_file():
                return cls.open(folder)
        raise NoBankError("No bank here: run `bank init`, or pass --root")

    @classmethod
    def open(cls, root: Path) -> Bank:
        """Open the bank at `root`, reading its settings; a symlinked `.lessonbank` is refused."""
        if (root / statedir.STATE).is_symlink():
            # Every write there would land wherever the link points (a repository may commit one).
            raise BankError(f"{root / statedir.STATE} is a symbolic link: remove it (lessonbank writes nothing through it)")
        try:
            data = (root / MARKER).read_bytes()
        except OSError as exc:
            raise BankError(f"cannot read {root / MARKER}: {exc.strerror}") from None
        return cls(root=root, config=config.read(data, str(root / MARKER)))

    def lesson_paths(self) -> list[Path]:
        """Every lessons/*.md file, sorted by name."""
        return [self.lessons_dir / name for name, _ in self.lesson_keys()]

    def lesson_keys(self) -> list[tuple[str, tuple[int, int, int, int]]]:
        """(name, stat key) of every lessons/*.md file (not hidden, links followed), sorted by
        name (index.listing.lesson_keys)."""
        return listing.lesson_keys(self.lessons_dir)

    def read(self, path: Path) -> Loaded:
        """Read and parse one lesson file; LessonFormatError (with a line) when it is malformed."""
        from lessonbank.bank import lesson

        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            raise LessonFormatError("not UTF-8 text", 1) from None
        except OSError as exc:
            raise BankError(f"cannot read {path}: {exc.strerror}") from None
        return Loaded(path, text, lesson.parse(text))

    def load(self) -> list[Loaded]:
        """All well-formed lessons; malformed files go to `load_problems` instead of raising.

        Parsed lessons are kept in `.lessonbank/lessons.cache` (index.lesson_cache) by file name
        with the file's (size, mtime, ctime, inode): only files that changed since are read and
        parsed again.
        """
        from lessonbank.bank import lesson
        from lessonbank.index import lesson_cache  # here, as the parser: `bank list` loads no lesson

        def read(path: Path) -> tuple[str, Lesson]:
            item = self.read(path)
            return item.text, item.lesson

        loaded, problems = lesson_cache.load(self.lessons_dir, self.state_dir, read, lesson.Lesson)
        self.load_problems = [Problem(path, line, message) for path, line, message in problems]
        return [Loaded(path, text, parsed) for path, text, parsed in loaded]

    def find_lesson(self, key: str) -> Loaded:
        """The lesson whose slug or id is `key` (an id prefix of 6+ characters also works)."""
        matches = []
        for item in self.load():
            lesson = item.lesson
            if key in (lesson.slug, lesson.id) or (len(key) >= 6 and lesson.id.startswith(key.upper())):
                matches.append(item)
        if not matches:
            broken = [p for p in self.load_problems if p.path.stem == key]
            if broken:
                p = broken[0]
                raise NotFoundError(
                    f"{self.relative(p.path)}:{p.line}: {p.message} (fix the file; `bank check` lists every problem)"
                )
            raise NotFoundError(f"No lesson {key!r}: `bank list` shows the slugs and ids")
        if len(matches) > 1:
            raise NotFoundError(f"{key!r} names {len(matches)} lessons; use the full id")
        return matches[0]

    def relative(self, path: Path) -> str:
        """`path` relative to the bank root, with forward slashes, for messages."""
        try:
            return path.resolve().relative_to(self.root).as_posix()
        except ValueError:
            return str(path)

    def inside(self, relpath: str) -> Path:
        """The absolute path of `relpath`, refusing anything that leaves the root (.., links)."""
        candidate = (self.root / relpath).resolve()
        if candidate != self.root and self.root not in candidate.parents:
            raise BankError(f"{relpath} leads outside the repository ({self.root})")
        return candidate

    def destination_path(self, dest: Destination) -> Path:
        """The file a destination names: rules/<name>.md, <skills>/<name>/SKILL.md or the doc."""
        if dest.kind == "rule":
            rel = f"rules/{dest.name}.md"
        elif dest.kind == "skill":
            rel = f"{self.config.get('groom.skills_dir').strip('/')}/{dest.name}/SKILL.md"
        else:
            rel = dest.name
        return self.inside(rel)

    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        """An exclusive lock around read-modify-write of lessons (concurrent captures lose nothing)."""
        self.state_dir.mkdir(parents=True, exist_ok=True)
        with flocked(self.state_dir / statedir.LOCK):
            yield


@contextlib.contextmanager
def flocked(path: Path, wait: bool = True) -> Iterator[None]:
    """An exclusive flock on `path` (created when missing) while the block runs.

    With `wait` False, BlockingIOError at once when another process holds it.
    """
    import fcntl  # here: `bank list` takes no lock

    # Never through a symlink: a repository may commit `.lessonbank/lock` as one (statedir).
    with os.fdopen(statedir.open_for_write(str(path), os.O_RDWR), "r+b") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
