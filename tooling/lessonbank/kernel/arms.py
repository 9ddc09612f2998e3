"""The trial's arm for a turn: balanced, seeded permuted blocks, recorded once per (session, turn).

The hooks call `assign` only in `test` mode and only for a turn a lesson fits. State, in the bank's
git-ignored folder `<bank>/.lessonbank/trial/` (statedir.TRIAL; the names inside it are this module's):

    settings                 `seed=N` and `block=N` lines, written by `bank test` (absent: defaults)
    assignments.tsv          the record: `index<TAB>session<TAB>turn<TAB>arm`, one line per turn
    count                    `<turns assigned> <log size>`: a cache of the log's line count
    arms/<session>/<turn>    the turn's arm, so later hook calls of the turn answer without the lock
    lock                     flock'd while a new turn is assigned

The n-th assigned turn takes place n % B of block n // B; each block holds B/2 of each arm in an
order shuffled from (seed, block index), so the arms never drift apart by more than B/2.
"""

# Inside every hook process: `posix` and the kernel's `statedir` only (even `os` is a visible share
# of a hook's run); `fcntl` is imported only when a new turn has to be assigned.
import posix

from lessonbank.kernel import statedir as state

WITH = "with"
WITHOUT = "without"
DEFAULT_SEED = 20261129
DEFAULT_BLOCK = 2
SETTINGS = "settings"
LOG = "assignments.tsv"
COUNT = "count"
ARMS = "arms"
LOCK = "lock"
_MASK = (1 << 64) - 1


def log_field(value: str) -> str:
    """A value as written in the assignment log: tabs and line breaks become spaces."""
    return value.replace("\t", " ").replace("\r", " ").replace("\n", " ")


def _splitmix(mix: int) -> tuple[int, int]:
    # splitmix64: tiny, and stable across Python versions unlike random.shuffle's internals.
    mix = (mix + 0x9E3779B97F4A7C15) & _MASK
    z = mix
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return mix, z ^ (z >> 31)


def block_size(size: int) -> int:
    """The block size actually used: even and at least 2."""
    return max(2, size + size % 2)


def block(seed: int, index: int, size: int) -> list[str]:
    """The arms of permuted block `index`: half with, half without, shuffled from (seed, index)."""
    size = block_size(size)
    arms = [WITH] * (size // 2) + [WITHOUT] * (size // 2)
    mix = (seed * 0x100000001B3 + index * 0x9E3779B97F4A7C15) & _MASK
    for i in range(size - 1, 0, -1):
        mix, value = _splitmix(mix)
        j = value % (i + 1)
        arms[i], arms[j] = arms[j], arms[i]
    return arms


def arm_at(seed: int, size: int, n: int) -> str:
    """The arm of the n-th assigned turn (0-based)."""
    size = block_size(size)
    return block(seed, n // size, size)[n % size]


def read_settings(folder: str) -> tuple[int, int]:
    """(seed, block size) from `trial/settings`, else the defaults."""
    seed, size = DEFAULT_SEED, DEFAULT_BLOCK
    for line in (state.read_text(folder + "/" + SETTINGS) or "").splitlines():
        key, _, value = line.partition("=")
        try:
            if key.strip() == "seed":
                seed = int(value)
            elif key.strip() == "block":
                size = block_size(int(value))
        except ValueError:
            continue
    return seed, size


def _count(folder: str) -> int:
    """Turns assigned so far: the cached count when it matches the log's size, else the log's lines."""
    try:
        size = posix.stat(folder + "/" + LOG).st_size
    except OSError:
        return 0
    cached = (state.read_text(folder + "/" + COUNT) or "").split()
    if len(cached) == 2 and cached[1] == str(size) and cached[0].isdigit():
        return int(cached[0])
    return (state.read_text(folder + "/" + LOG) or "").count("\n")


def trial_dir(state_dir: str) -> str:
    """The trial's folder in the bank's state folder."""
    return state_dir + "/" + state.TRIAL


def arm_file(state_dir: str, session_id: str, turn: str) -> str:
    """The file holding a turn's arm once it is assigned."""
    return f"{trial_dir(state_dir)}/{ARMS}/{state.safe_name(session_id)}/{state.safe_name(turn)}"


def assign(state_dir: str, session_id: str, turn: str) -> str:
    """The arm ("with" or "without") of this turn; the first caller decides, every later caller agrees."""
    folder = trial_dir(state_dir)
    turn_file = arm_file(state_dir, session_id, turn)
    known = (state.read_text(turn_file) or "").strip()
    if known in (WITH, WITHOUT):
        return known
    import fcntl

    state.makedirs(folder)
    lock = posix.open(folder + "/" + LOCK, posix.O_RDWR | posix.O_CREAT, 0o644)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        known = (state.read_text(turn_file) or "").strip()
        if known in (WITH, WITHOUT):
            return known
        seed, size = read_settings(folder)
        n = _count(folder)
        arm = arm_at(seed, size, n)
        # The log is the record, appended before the turn file lets any other caller see the arm.
        # No fsync: it cost 2-6 ms of the agent's wait on a busy disk, and the file survives any
        # crash of a hook process; only a power cut could lose the last line.
        line = f"{n}\t{log_field(session_id)}\t{log_field(turn)}\t{arm}\n".encode("utf-8", "replace")
        fd = posix.open(folder + "/" + LOG, posix.O_WRONLY | posix.O_APPEND | posix.O_CREAT, 0o644)
        try:
            posix.write(fd, line)
            size_after = posix.fstat(fd).st_size
        finally:
            posix.close(fd)
        state.write_atomic(turn_file, arm.encode())
        state.write_atomic(folder + "/" + COUNT, f"{n + 1} {size_after}".encode())
        return arm
    finally:
        posix.close(lock)  # closing the descriptor releases the flock
