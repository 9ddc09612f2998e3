"""`.lessonbank/`, the bank's git-ignored state folder: every name in it, and writing there. `posix` only.

Every module that touches the folder takes its names from here:

    mode                         `on` (also when absent), `off` or `test`; read on every hook call
    hook.log                     errors the hooks swallowed (they never break the agent), and
                                 triggers that gave up past their matching step budget
    index.bin                    the compiled index (see index.compiled_build)
    lessons.cache                parsed lessons by file name and stat, so that commands re-parse
                                 only the files that changed (see index.lesson_cache)
    triggers.cache               command regexes compiled by `bank index`, so that only new ones
                                 are compiled again (see index.compiled_update)
    derived.cache                what each lesson file gives list, stats, check, capture and
                                 `bank index` (summary, problems, INDEX.md row, BANK.md section,
                                 compiled piece), by file stat and content hash (see index.derived)
    ledger.jsonl                 one line per injection or would-be injection (see state.records)
    pending-lessons.jsonl        #lesson blocks the Stop hook could not capture yet (in the
                                 user's state folder instead when this one cannot be written:
                                 `userdirs.user_pending`)
    lock                         flock'd by captures and scans that change the bank
    groom-journal/               `bank groom`'s journal: what an unfinished groom changes, so the
                                 next run rolls it back or completes it (see groom.transaction)
    groom.log                    what the weekly groom `bank schedule`'s crontab line runs printed
    sessions/<session>/
        claims/<slug>            a lesson handed over in this session: created with O_EXCL, so
                                 exactly one hook process wins it, also across parallel
                                 subagents; holds the lesson's priority (for compaction)
        stops/<turn>             the Stop hook blocked once in this turn
        turn                     the turn counter, advanced at each UserPromptSubmit
        checks.jsonl             the checks run in this session (see state.records)
    trial/                       the trial's arms (see state.arms)
    scan/                        the scan's candidate store (see scan.candidates)
        next-scan                its mtime is when the SessionStart hook next starts a scheduled
                                 `bank scan` (absent: due now); see hooks.discover
        scheduled.log            what the scheduled scans printed

`Session` is one session's folder: the lessons claimed in it (once per session, across parallel
hook processes) and its turns. It lives here rather than in `hooks` to save the hook process
an import (each costs about 0.1 ms). `os` is not imported: its start-up cost is a visible share
of a hook's whole run.
"""

import posix

# Set by `bank hook` (a dry run): nothing is claimed, released, appended or written.
READ_ONLY = False
MARKER = "bank.toml"
STATE = ".lessonbank"
MODES = ("on", "off", "test")
# The names inside STATE (paths relative to it).
MODE = "mode"
HOOK_LOG = "hook.log"
COMPILED_INDEX = "index.bin"
LESSON_CACHE = "lessons.cache"
TRIGGER_CACHE = "triggers.cache"
DERIVED_CACHE = "derived.cache"
LEDGER = "ledger.jsonl"
PENDING_LESSONS = "pending-lessons.jsonl"
LOCK = "lock"
GROOM_JOURNAL = "groom-journal"
GROOM_LOG = "groom.log"
SESSIONS = "sessions"
CLAIMS = "claims"
STOPS = "stops"
TURN = "turn"
CHECKS = "checks.jsonl"
TRIAL = "trial"
SCAN = "scan"
NEXT_SCAN = "next-scan"
SCHEDULED_LOG = "scheduled.log"
_SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.")


def find_root(cwd: str) -> str | None:
    """The nearest folder at or above `cwd` holding bank.toml, or None."""
    if not cwd or cwd[0] != "/":
        return None
    path = cwd.rstrip("/") or "/"
    while True:
        try:
            posix.stat(path + "/" + MARKER if path != "/" else "/" + MARKER)
            return path
        except OSError:
            pass
        if path == "/":
            return None
        path = path.rpartition("/")[0] or "/"


def read_text(path: str, limit: int | None = None, links: bool = True) -> str | None:
    """A small file's text (at most its first `limit` bytes when given), or None when it cannot be
    read or is no regular file (a committed link to /dev/zero must not be read for ever); with
    `links` False, None also when `path` itself is a symlink (it could point out of a repository)."""
    try:
        # O_NONBLOCK: opening a FIFO (a committed lesson linked to one) would wait for a writer
        # before fstat could refuse it; a regular file reads as it always does.
        fd = posix.open(path, posix.O_RDONLY | posix.O_NONBLOCK | (0 if links else posix.O_NOFOLLOW))
    except OSError:
        return None
    try:
        if posix.fstat(fd).st_mode & 0o170000 != 0o100000:
            return None
        chunks = []
        size = 0
        while limit is None or size < limit:
            chunk = posix.read(fd, 65536 if limit is None else min(65536, limit - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks).decode("utf-8", "replace")
    except OSError:  # e.g. a folder where a file should be
        return None
    finally:
        posix.close(fd)


def mode(state_dir: str) -> str:
    """The bank's mode: on, off or test (anything unreadable or unknown counts as on)."""
    text = read_text(state_dir + "/" + MODE)
    value = text.strip().lower() if text else "on"
    return value if value in MODES else "on"


def discovery_due(state_dir: str, now: float) -> bool:
    """Should this session start the scheduled scan: due, not a dry run, not LESSONBANK_DISCOVER=off?"""
    if READ_ONLY or posix.environ.get(b"LESSONBANK_DISCOVER", b"").lower() == b"off":
        return False
    return scan_due(state_dir, now)


def scan_due(state_dir: str, now: float) -> bool:
    """Is a scheduled scan due? One stat: the next-scan stamp's mtime is the time it falls due."""
    try:
        return posix.stat(state_dir + "/" + SCAN + "/" + NEXT_SCAN).st_mtime <= now
    except FileNotFoundError:
        return True
    except OSError:  # an unreadable state folder: never start a scan from it
        return False


def postpone_scan(state_dir: str, until: float) -> None:
    """Set the next scheduled scan to `until` (seconds since the epoch): the stamp's mtime."""
    if READ_ONLY:
        return
    path = state_dir + "/" + SCAN + "/" + NEXT_SCAN
    posix.close(open_for_write(path, posix.O_WRONLY))
    posix.utime(path, (until, until))


def safe_name(value: str) -> str:
    """A file name for any id: unsafe characters become %XX, so distinct ids never collide (up to 200)."""
    out = "".join(c if c in _SAFE else "".join(f"%{b:02X}" for b in c.encode()) for c in value)
    if not out:
        return "%00"
    if out[0] == ".":
        out = "%2E" + out[1:]
    return out[:200]


def unsafe_name(name: str) -> str:
    """Undo `safe_name` (for names it did not cut short)."""
    parts = name.split("%")
    data = bytearray(parts[0].encode())
    for part in parts[1:]:
        try:
            data.append(int(part[:2], 16))
            data.extend(part[2:].encode())
        except ValueError:
            data.extend(("%" + part).encode())
    return data.decode("utf-8", "replace")


def makedirs(path: str) -> None:
    """mkdir -p with `posix` alone."""
    try:
        posix.mkdir(path, 0o755)
        return
    except FileExistsError:
        return
    except FileNotFoundError:
        parent = path.rpartition("/")[0]
        if not parent or parent == path:
            raise
        makedirs(parent)
    # Another hook process of the same session may make it between the two calls. (Not
    # contextlib.suppress: contextlib would cost the hook its import.)
    try:  # noqa: SIM105
        posix.mkdir(path, 0o755)
    except FileExistsError:
        pass


def refuse_links(path: str) -> None:
    """Raise OSError when `.lessonbank` or a folder under it on the way to `path` is a symlink."""
    # A repository may commit one (hook.log -> a shell start-up file); the final name is refused
    # by O_NOFOLLOW at the open; the user's own folders (no `.lessonbank` in the path) are trusted.
    at = path.rfind("/" + STATE + "/")
    if at < 0:
        return
    folder = path[:at]
    for part in path[at + 1 :].split("/")[:-1]:  # `.lessonbank`, then each folder under it
        if not part:
            continue
        folder += "/" + part
        try:
            mode = posix.lstat(folder).st_mode
        except FileNotFoundError:
            return  # made afresh below it, as a real folder
        if mode & 0o170000 == 0o120000:
            raise OSError(f"{folder} is a symbolic link: lessonbank writes nothing through it (remove it)")


def open_for_write(path: str, flags: int) -> int:
    """A descriptor of `path` opened with `flags` (plus O_CREAT and O_NOFOLLOW), its folders made
    as needed: never through a symlink under `.lessonbank` (refuse_links), nor at the name itself."""
    refuse_links(path)
    flags |= posix.O_CREAT | posix.O_NOFOLLOW
    try:
        return posix.open(path, flags, 0o644)
    except FileNotFoundError:
        makedirs(path.rpartition("/")[0])
        return posix.open(path, flags, 0o644)


def session_dir(state_dir: str, session_id: str) -> str:
    """The folder of one session's state."""
    return state_dir + "/" + SESSIONS + "/" + safe_name(session_id)


class Session:
    """One session's folder in the state folder."""

    def __init__(self, state_dir: str, session_id: str) -> None:
        self.state_dir = state_dir
        self.id = session_id or "unknown"
        self.dir = session_dir(state_dir, self.id)

    def claim_path(self, slug: str) -> str:
        return self.dir + "/" + CLAIMS + "/" + safe_name(slug)

    def claimed(self, slug: str) -> bool:
        """Was this lesson already handed over in this session?"""
        return posix.access(self.claim_path(slug), posix.F_OK)

    def claimed_slugs(self) -> "set[str]":
        """The slugs of every lesson claimed in this session (their file names with `safe_name`'s
        %XX undone): one listing for a whole call instead of a check per candidate."""
        try:
            names = posix.listdir(self.dir + "/" + CLAIMS)
        except OSError:
            return set()
        return {unsafe_name(name) if "%" in name else name for name in names}

    def claim(self, slug: str, priority: int) -> bool:
        """Atomically claim a lesson for this session; False when another process has it."""
        if READ_ONLY:
            return not self.claimed(slug)
        return self._exclusive(self.dir + "/" + CLAIMS, safe_name(slug), str(priority))

    def claim_stop(self, turn: str) -> bool:
        """Claim the one Stop block allowed per turn."""
        if READ_ONLY:
            return not posix.access(self.dir + "/" + STOPS + "/" + safe_name(turn), posix.F_OK)
        return self._exclusive(self.dir + "/" + STOPS, safe_name(turn), "")

    def _exclusive(self, folder: str, name: str, content: str) -> bool:
        path = folder + "/" + name
        refuse_links(path)
        flags = posix.O_WRONLY | posix.O_CREAT | posix.O_EXCL | posix.O_NOFOLLOW
        try:
            fd = posix.open(path, flags, 0o644)
        except FileExistsError:
            return False
        except FileNotFoundError:
            makedirs(folder)
            try:
                fd = posix.open(path, flags, 0o644)
            except FileExistsError:
                return False
        try:
            if content:
                posix.write(fd, content.encode())
        finally:
            posix.close(fd)
        return True

    def release(self, min_priority: int | None = None) -> list[str]:
        """Forget claims (all, or those at or above `min_priority`); return the slugs released."""
        folder = self.dir + "/" + CLAIMS
        if READ_ONLY:
            return []
        try:
            names = sorted(posix.listdir(folder))
        except OSError:
            return []
        released = []
        for name in names:
            path = folder + "/" + name
            if min_priority is not None:
                text = read_text(path) or ""
                try:
                    priority = int(text.strip() or "0")
                except ValueError:
                    priority = 0
                if priority < min_priority:
                    continue
            try:
                posix.unlink(path)
                released.append(name)
            except FileNotFoundError:
                pass
        return released

    def counter(self) -> int:
        text = read_text(self.dir + "/" + TURN)
        try:
            return int((text or "0").strip() or "0")
        except ValueError:
            return 0

    def advance_turn(self) -> int:
        """Count a new prompt; returns the new turn number."""
        number = self.counter() + 1
        write_atomic(self.dir + "/" + TURN, str(number).encode())
        return number

    def turn(self, prompt_id: object) -> str:
        """The turn key: the payload's prompt_id when present, else the prompt counter."""
        if isinstance(prompt_id, str) and prompt_id:
            return prompt_id
        return str(self.counter())


def write_atomic(path: str, data: bytes) -> None:
    """Write a file through a temporary name and a rename, creating folders as needed."""
    if READ_ONLY:
        return
    refuse_links(path)
    folder = path.rpartition("/")[0]
    tmp = f"{folder}/.{path.rpartition('/')[2]}.{posix.getpid()}.tmp"
    flags = posix.O_WRONLY | posix.O_CREAT | posix.O_TRUNC | posix.O_NOFOLLOW
    try:
        fd = posix.open(tmp, flags, 0o644)
    except FileNotFoundError:
        makedirs(folder)
        fd = posix.open(tmp, flags, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[posix.write(fd, view) :]
    except OSError as exc:  # e.g. a full disk: say which file, and leave no temporary behind
        posix.close(fd)
        try:  # noqa: SIM105 - no contextlib: the hooks import as little as they can
            posix.unlink(tmp)
        except OSError:
            pass
        raise OSError(exc.errno, exc.strerror, path) from None
    posix.close(fd)
    posix.replace(tmp, path)


def append_line(path: str, line: str) -> None:
    """Append one line with a single O_APPEND write (lines from parallel hooks do not interleave)."""
    if READ_ONLY:
        return
    data = (line.rstrip("\n") + "\n").encode("utf-8")
    fd = open_for_write(path, posix.O_WRONLY | posix.O_APPEND)
    try:
        posix.write(fd, data)
    except OSError as exc:  # e.g. a full disk: say which file
        raise OSError(exc.errno, exc.strerror, path) from None
    finally:
        posix.close(fd)


def log_line(state_dir: str | None, event: str, message: str) -> None:
    """Append one line (no traceback) to hook.log; never raise."""
    if state_dir is None:
        return
    try:
        import time

        from lessonbank.state.scrub import scrub

        append_line(state_dir + "/" + HOOK_LOG, f"{time.strftime('%Y-%m-%dT%H:%M:%S')} {event}: {scrub(message)}")
    except Exception:
        pass


def log_error(state_dir: str | None, event: str, exc: BaseException) -> None:
    """Append an error and its traceback to hook.log; never raise."""
    if state_dir is None:
        return
    try:
        import time
        import traceback

        stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
        trace = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        from lessonbank.state.scrub import scrub

        append_line(state_dir + "/" + HOOK_LOG, f"{stamp} {event}: {scrub(trace.rstrip())}")
    except Exception:
        pass
