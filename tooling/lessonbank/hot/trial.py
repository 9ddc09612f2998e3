"""The trial's arm for a turn: balanced, seeded permuted blocks, recorded once per (session, turn)."""

# Runs inside hook processes: stdlib `os` only at import; `fcntl` only when a new turn is assigned.
from __future__ import annotations

import os

WITH = "with"
WITHOUT = "without"
DEFAULT_SEED = 20261129
DEFAULT_BLOCK = 4
TRIAL_DIR = "trial"
SETTINGS = "settings"
LOG = "assignments.tsv"
COUNT = "count"
ARMS = "arms"
_MASK = (1 << 64) - 1
_SAFE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.")


def safe_name(value: str) -> str:
    """A file name for any id: unsafe characters become %XX, so distinct ids never collide."""
    out = "".join(c if c in _SAFE else "".join(f"%{b:02X}" for b in c.encode()) for c in value)
    if not out or out[0] == ".":
        out = "%2E" + out[1:] if out else "%00"
    return out[:200]


def log_field(value: str) -> str:
    """A value as written in the assignment log: tabs and line breaks become spaces."""
    return value.replace("\t", " ").replace("\r", " ").replace("\n", " ")


def _splitmix(state: int) -> tuple[int, int]:
    # splitmix64: tiny, and stable across Python versions unlike random.shuffle's internals.
    state = (state + 0x9E3779B97F4A7C15) & _MASK
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return state, z ^ (z >> 31)


def block(seed: int, index: int, size: int) -> list[str]:
    """The arms of permuted block `index`: half with, half without, shuffled from (seed, index)."""
    size = max(2, size + size % 2)
    arms = [WITH] * (size // 2) + [WITHOUT] * (size // 2)
    state = (seed * 0x100000001B3 + index * 0x9E3779B97F4A7C15) & _MASK
    for i in range(size - 1, 0, -1):
        state, value = _splitmix(state)
        j = value % (i + 1)
        arms[i], arms[j] = arms[j], arms[i]
    return arms


def arm_at(seed: int, size: int, n: int) -> str:
    """The arm of the n-th assigned turn (0-based)."""
    size = max(2, size + size % 2)
    return block(seed, n // size, size)[n % size]


def read_settings(trial_dir: str) -> tuple[int, int]:
    """(seed, block size) from `trial/settings` (`seed=N`, `block=N` lines), else the defaults."""
    seed, size = DEFAULT_SEED, DEFAULT_BLOCK
    try:
        with open(os.path.join(trial_dir, SETTINGS), encoding="utf-8") as handle:
            text = handle.read()
    except OSError:
        return seed, size
    for line in text.splitlines():
        key, _, value = line.partition("=")
        try:
            if key.strip() == "seed":
                seed = int(value)
            elif key.strip() == "block":
                size = max(2, int(value))
        except ValueError:
            continue
    return seed, size


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read().strip()
    except OSError:
        return None


def _replace(path: str, text: str) -> None:
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.replace(tmp, path)


def _count(trial_dir: str) -> int:
    """Turns assigned so far: the cached count when it matches the log's size, else the log's lines."""
    log = os.path.join(trial_dir, LOG)
    try:
        size = os.path.getsize(log)
    except OSError:
        return 0
    cached = (_read(os.path.join(trial_dir, COUNT)) or "").split()
    if len(cached) == 2 and cached[1] == str(size) and cached[0].isdigit():
        return int(cached[0])
    with open(log, "rb") as handle:
        return handle.read().count(b"\n")


def assign(state_dir: str, session_id: str, turn: str) -> str:
    """The arm ("with" or "without") of this turn; the first caller decides, every later caller agrees."""
    trial_dir = os.path.join(state_dir, TRIAL_DIR)
    turn_dir = os.path.join(trial_dir, ARMS, safe_name(session_id))
    turn_file = os.path.join(turn_dir, safe_name(turn))
    known = _read(turn_file)
    if known in (WITH, WITHOUT):
        return known
    import fcntl

    os.makedirs(turn_dir, exist_ok=True)
    with open(os.path.join(trial_dir, "lock"), "a+b") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        try:
            known = _read(turn_file)
            if known in (WITH, WITHOUT):
                return known
            seed, size = read_settings(trial_dir)
            n = _count(trial_dir)
            arm = arm_at(seed, size, n)
            # The log is the record (index, session, turn, arm); the turn file answers later callers fast.
            line = f"{n}\t{log_field(session_id)}\t{log_field(turn)}\t{arm}\n"
            fd = os.open(os.path.join(trial_dir, LOG), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                os.write(fd, line.encode("utf-8", "replace"))
                os.fsync(fd)
                size_after = os.fstat(fd).st_size
            finally:
                os.close(fd)
            _replace(turn_file, arm)
            _replace(os.path.join(trial_dir, COUNT), f"{n + 1} {size_after}")
            return arm
        finally:
            fcntl.flock(lock.fileno(), fcntl.LOCK_UN)
