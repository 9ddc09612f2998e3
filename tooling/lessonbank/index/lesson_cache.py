"""`.lessonbank/lessons.cache`: every parsed lesson by file name and stat key, what `Bank.load` reads.

Whole-bank readers that need the lessons themselves (groom, the trial's ledger, `bank list
--json`, `show`) get them from here: a file whose stat key (size, mtime, ctime, inode) is
unchanged is not read, the others are read and parsed again, and the cache is rewritten when
anything in it changed. A file changed in the last seconds is not kept (git's "racy" case, see
derived.RACY_NS). It is apart from the derived cache on purpose: it holds every lesson whole (34 MB
at 10,000 lessons), and in derived.cache every `bank index` and capture would copy it on each save
(benchmarks/bench_caches.py shows both). The bank gives how a file is read and parsed (`read`)
and the lessons' class, so nothing here imports the bank.
"""

import contextlib
import marshal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lessonbank.errors import LessonFormatError
from lessonbank.index import derived, listing
from lessonbank.state import statedir

MAGIC = b"LBLESS\x00\x00"
VERSION = 3  # another version is ignored and rewritten
# An entry of the cache, by file name (a marshalled tuple): (stat key, text, lesson attributes).
E_KEY, E_TEXT, E_ATTRS = range(3)


def load(
    lessons_dir: Path, state_dir: Path, read: Callable[[Path], "tuple[str, Any]"], kind: type
) -> "tuple[list[tuple[Path, str, Any]], list[tuple[Path, int, str]]]":
    """(path, text, lesson) of every well-formed lesson file, sorted by name, and (path, line,
    message) of the others; `read(path)` gives a file's (text, lesson) or raises LessonFormatError,
    and a kept lesson is made anew as a `kind` with its attributes."""
    cache = _read(state_dir)
    kept: dict[str, tuple] = {}
    loaded: list[tuple[Path, str, Any]] = []
    problems: list[tuple[Path, int, str]] = []
    now = time.time_ns()
    for name, key in listing.lesson_keys(lessons_dir):
        path = lessons_dir / name
        hit = cache.get(name)
        if hit is not None and hit[E_KEY] == key:
            lesson: Any = object.__new__(kind)
            lesson.__dict__.update(hit[E_ATTRS])
            loaded.append((path, hit[E_TEXT], lesson))
            kept[name] = hit
            continue
        try:
            text, lesson = read(path)
        except LessonFormatError as exc:
            problems.append((path, exc.line, str(exc)))
            continue
        loaded.append((path, text, lesson))
        if now - max(key[listing.K_MTIME], key[listing.K_CTIME]) > derived.RACY_NS:
            import copy

            entry = (key, text, copy.deepcopy(lesson.__dict__))
            try:
                marshal.dumps(entry)
            except ValueError:  # a value marshal cannot hold (a YAML date in an unknown key)
                continue
            kept[name] = entry
    if kept.keys() != cache.keys() or any(kept[name] is not cache[name] for name in kept):
        _write(state_dir, kept)
    return loaded, problems


def _read(state_dir: Path) -> dict[str, tuple]:
    """name -> (stat key, text, lesson attributes); {} when missing or not ours."""
    try:
        with open(state_dir / statedir.LESSON_CACHE, "rb") as handle:
            if handle.read(12) != MAGIC + VERSION.to_bytes(4, "little"):
                return {}
            data = marshal.loads(handle.read())
    except Exception:  # missing, unreadable or from another version: parse everything
        return {}
    return data if isinstance(data, dict) else {}


def _write(state_dir: Path, lessons: dict[str, tuple]) -> None:
    head = MAGIC + VERSION.to_bytes(4, "little")
    with contextlib.suppress(OSError):  # a read-only state folder only costs speed
        statedir.write_atomic(str(state_dir / statedir.LESSON_CACHE), head + marshal.dumps(lessons))
