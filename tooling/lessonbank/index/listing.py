"""What a lessons folder holds, as the caches of the lessons compare it: each lesson file's name and
stat key, and the keys packed as one bytes object (derived.cache's listing).

The one `stat` per file stays (an edit in place moves no folder's mtime); what is around it is done
in C where it can be, so that 10,000 files cost their system calls and little more.
"""

from __future__ import annotations

import contextlib
import operator
import os
import posix
import stat
import struct
from pathlib import Path

# A file's stat key, what the records keep; taken from each stat result in C, no Python per file.
STAT_KEY = operator.attrgetter("st_size", "st_mtime_ns", "st_ctime_ns", "st_ino")
KEY_FIELDS = [operator.attrgetter(name) for name in ("st_size", "st_mtime_ns", "st_ctime_ns", "st_ino")]
# The fields of a stat key (a plain tuple: the caches marshal it).
K_SIZE, K_MTIME, K_CTIME, K_INODE = range(4)
MODE = operator.attrgetter("st_mode")
# A listing (derived.cache's meta "listing", a marshalled tuple): the names joined by NULs, their
# stat keys `listed`, and name -> content hash of the files not settled then.
LISTED_NAMES, LISTED_KEYS, LISTED_HASHES = range(3)


def scan(lessons_dir: Path) -> tuple[list[str], list[os.stat_result]]:
    """The names, sorted, and stat results of every *.md file in `lessons_dir` (not hidden, links
    followed, regular files only). One `stat` per file relative to the folder's descriptor: a third
    cheaper than os.scandir's entries at 10,000 files."""
    try:
        fd = posix.open(str(lessons_dir), posix.O_RDONLY | posix.O_DIRECTORY)
    except (FileNotFoundError, NotADirectoryError):
        return [], []
    try:
        names = [name for name in posix.listdir(fd) if name.endswith(".md") and name[0] != "."]
        names.sort()
        lstat = posix.stat
        try:
            stats = [lstat(name, dir_fd=fd) for name in names]
        except OSError:  # one went meanwhile, or is a dangling link: file by file, those left out
            found = []
            for name in names:
                with contextlib.suppress(OSError):
                    found.append((name, lstat(name, dir_fd=fd)))
            names, stats = [name for name, _ in found], [st for _, st in found]
    finally:
        posix.close(fd)
    if not all(map(stat.S_ISREG, map(MODE, stats))):
        kept = [i for i, st in enumerate(stats) if stat.S_ISREG(st.st_mode)]
        names, stats = [names[i] for i in kept], [stats[i] for i in kept]
    return names, stats


def lesson_keys(lessons_dir: Path) -> list[tuple[str, tuple[int, int, int, int]]]:
    """(name, stat key) of every lesson file (`scan`'s), sorted by name; the key is (size,
    mtime_ns, ctime_ns, inode), what the caches compare (a stat result each would be 40 MB at
    50,000 lessons)."""
    names, stats = scan(lessons_dir)
    return list(zip(names, map(STAT_KEY, stats), strict=True))


def listed(stats: list[os.stat_result]) -> bytes | None:
    """The stat keys of `stats` packed, as the listing keeps them (compared as one bytes object, not
    10,000 tuples); None for a key that does not fit 64 bits (such a bank just keeps no listing)."""
    packed = struct.Struct(f"{len(stats)}q")  # field by field, no tuple per file (and twice array's speed)
    try:
        return b"".join([packed.pack(*map(field, stats)) for field in KEY_FIELDS])
    except struct.error:
        return None


def stat_key(path: Path) -> tuple[int, int, int, int] | None:
    """One file's stat key (`STAT_KEY`); None when it is not a regular file, or not there."""
    try:
        st = posix.stat(str(path))
    except OSError:
        return None
    return STAT_KEY(st) if stat.S_ISREG(st.st_mode) else None


def patched(listing: tuple, keys: dict[str, tuple | None], unsettled: dict[str, bytes | None]) -> tuple | None:
    """A listing (names joined by NULs, `listed` keys, name -> content hash of those not settled)
    with the files of `keys` at their new stat keys (None: gone) and `unsettled` brought in (None:
    settled); None when a key does not fit (`listed`)."""
    names = listing[LISTED_NAMES].split("\0") if listing[LISTED_NAMES] else []
    count = len(names)
    values = struct.unpack(f"{4 * count}q", listing[LISTED_KEYS])
    found = dict(zip(names, zip(*(values[n * count : n * count + count] for n in range(4)), strict=True), strict=True))
    for name, key in keys.items():
        if key is None:
            found.pop(name, None)
        else:
            found[name] = key
    names = sorted(found)
    try:
        packed = struct.pack(f"{4 * len(names)}q", *(found[name][n] for n in range(4) for name in names))
    except struct.error:
        return None
    left = {name: digest for name, digest in {**listing[LISTED_HASHES], **unsettled}.items() if digest is not None and name in found}
    return "\0".join(names), packed, left


def content_hash(data: bytes) -> bytes:
    """What the records keep of a file's bytes."""
    import hashlib  # here: its import loads OpenSSL (3-10 ms), which a settled bank's `bank list` never needs

    return hashlib.blake2b(data, digest_size=16).digest()


def same_bytes(path: Path, digest: bytes) -> bool:
    """Whether a file not settled when last looked at still holds the bytes of its record."""
    try:
        return content_hash(path.read_bytes()) == digest
    except OSError:
        return False
