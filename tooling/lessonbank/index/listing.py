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
MODE = operator.attrgetter("st_mode")


def scan(lessons_dir: Path, ordered: bool = True) -> tuple[list[str], list[os.stat_result]]:
    """The names and stat results of every *.md file in `lessons_dir` (not hidden, links followed,
    regular files only), sorted by name, or (not `ordered`) as the folder lists them: the same
    order again while it does not change. One `stat` per file relative to the folder's descriptor:
    a third cheaper than os.scandir's entries at 10,000 files."""
    try:
        fd = posix.open(str(lessons_dir), posix.O_RDONLY | posix.O_DIRECTORY)
    except (FileNotFoundError, NotADirectoryError):
        return [], []
    try:
        names = [name for name in posix.listdir(fd) if name.endswith(".md") and name[0] != "."]
        if ordered:
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


def by_name(names: list[str], stats: list[os.stat_result]) -> tuple[list[str], list[os.stat_result]]:
    """`scan`'s lists, sorted by name."""
    order = sorted(range(len(names)), key=names.__getitem__)
    return [names[i] for i in order], [stats[i] for i in order]


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
