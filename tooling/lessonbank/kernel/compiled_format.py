"""The compiled index's file format (`<bank>/.lessonbank/index.bin`): its constants and keys.

The file starts with MAGIC, the format number and a marshalled meta dict holding the staleness
key: (size, mtime_ns, ctime_ns, inode) of INDEX.md and of bank.toml when it was built. Then come
the sections that `compiled_build` writes and `compiled_read` reads with a few `pread`s. This
module is what both halves share: the constants, the bucket function, case folding, the short
literals ("grams") a call looks up, and the staleness key. Standard library only, no `re`.
"""

import posix

from lessonbank.kernel import statedir

MAGIC = b"LBANKIX\x00"
FORMAT = 1
NAME = statedir.COMPILED_INDEX
ALWAYS_COMMAND = "\x00c"
ALWAYS_PATH = "\x00p"
TOOL = "\x00t:"
# What `re`'s IGNORECASE equates with ASCII letters, folded alike in triggers and subjects.
FOLD = {c: c + 32 for c in range(65, 91)}
FOLD.update({0x130: 105, 0x131: 105, 0x17F: 115, 0x212A: 107})


class Stale(Exception):
    """The compiled file does not describe the current INDEX.md and bank.toml."""


def bucket(key: str, size: int) -> int:
    """A key's bucket: stable across processes (unlike `hash`)."""
    return int.from_bytes(key.encode("utf-8"), "little") % size


def fold(text: str) -> str:
    """The case-folded form the candidate keys use (ASCII lower case plus re's ASCII look-alikes)."""
    return text.translate(FOLD)


def grams(texts: "list[str]", lengths: "tuple[int, ...]") -> "set[str]":
    """Every folded substring of these lengths: the keys a call looks up."""
    out: set[str] = set()
    for text in texts:
        folded = text.translate(FOLD)
        for size in lengths:
            out.update(folded[i : i + size] for i in range(len(folded) - size + 1))
    return out


def source_key(root: str) -> tuple:
    """What the compiled file was built from: (size, mtime_ns, ctime_ns, inode) of INDEX.md and
    bank.toml. An atomic rewrite changes the inode, any write the ctime (which utime cannot set)."""
    key: list[tuple[int, int, int, int] | None] = []
    for name in ("INDEX.md", "bank.toml"):
        try:
            st = posix.stat(root + "/" + name)
            key.append((st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino))
        except OSError:
            key.append(None)
    return tuple(key)


def read_sources(root: str) -> "tuple[str | None, str | None, tuple | None]":
    """INDEX.md and bank.toml texts and the key they were read at (None for a missing file).

    The key is taken before and after reading; if they differ the files were changing and
    the key is None, so that nothing built from this read is ever taken for current.
    """
    before = source_key(root)
    texts = [statedir.read_text(root + "/" + name) for name in ("INDEX.md", "bank.toml")]
    after = source_key(root)
    return texts[0], texts[1], (before if before == after else None)
