"""The trial's arm for a turn: balanced, seeded permuted blocks, recorded once per (session, turn).

The hooks call `assign` only in `test` mode and only for a turn a lesson fits. State, in the bank's
git-ignored folder `<bank>/.lessonbank/trial/`:

    settings                 `seed=N` and `block=N` lines, written by `bank test` (absent: defaults)
    assignments.tsv          the record: `index<TAB>session<TAB>turn<TAB>arm`, one line per turn
    count                    `<turns assigned> <log size>`: a cache of the log's line count
    arms/<session>/<turn>    the turn's arm, so later hook calls of the turn answer without the lock
    lock                     flock'd while a new turn is assigned

The n-th assigned turn takes place n % B of block n // B; each block holds B/2 of each arm in an
order shuffled from (seed, block index), so the arms never drift apart by more than B/2.
"""

# Inside every hook process: `posix` and the hooks' own `state` only (even `os` is a visible share
# of a hook's run); `fcntl` is imported only when a new turn has to be assigned.
import posix

from lessonbank.kernel import statedir as state

WITH = "with"
WITHOUT = "without"
DEFAULT_SEED = 20261129
DEFAULT_BLOCK = 2
TRIAL_DIR = "trial"
SETTINGS = "settings"
LOG = "assignments.tsv"
COUNT = "count"
ARMS = "arms"
_MASK = (1 << 64) - 1


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


def block_size(size: int) -> int:
    """The block size actually used: even and at least 2."""
    return max(2, size + size % 2)


def block(seed: int, index: int, size: int) -> list[str]:
    """The arms of permuted block `index`: half with, half without, shuffled from (seed, index)."""
    size = block_size(size)
    arms = [WITH] * (size // 2) + [WITHOUT] * (size // 2)
    state = (seed * 0x100000001B3 + index * 0x9E3779B97F4A7C15) & _MASK
    for i in range(size - 1, 0, -1):
        state, value = _splitmix(state)
        j = value % (i + 1)
        arms[i], arms[j] = arms[j], arms[i]
    return arms


def arm_at(seed: int, size: int, n: int) -> str:
    """The arm of the n-th assigned turn (0-based)."""
    size = block_size(size)
    return block(seed, n // size, size)[n % size]


def read_settings(trial_dir: str) -> tuple[int, int]:
    """(seed, block size) from `trial/settings`, else the defaults."""
    seed, size = DEFAULT_SEED, DEFAULT_BLOCK
    for line in (state.read_text(trial_dir + "/" + SETTINGS) or "").splitlines():
        key, _, value = line.partition("=")
        try:
            if key.strip() == "seed":
                seed = int(value)
            elif key.strip() == "block":
                size = block_size(int(value))
        except ValueError:
            continue
    return seed, size


def _count(trial_dir: str) -> int:
    """Turns assigned so far: the cached count when it matches the log's size, else the log's lines."""
    try:
        size = posix.stat(trial_dir + "/" + LOG).st_size
    except OSError:
        return 0
    cached = (state.read_text(trial_dir + "/" + COUNT) or "").split()
    if len(cached) == 2 and cached[1] == str(size) and cached[0].isdigit():
        return int(cached[0])
    return (state.read_text(trial_dir + "/" + LOG) or "").count("\n")


def assign(state_dir: str, session_id: str, turn: str) -> str:
    """The arm ("with" or "without") of this turn; the first caller decides, every later caller agrees."""
    trial_dir = state_dir + "/" + TRIAL_DIR
    turn_dir = trial_dir + "/" + ARMS + "/" + state.safe_name(session_id)
    turn_file = turn_dir + "/" + state.safe_name(turn)
    known = (state.read_text(turn_file) or "").strip()
    if known in (WITH, WITHOUT):
        return known
    import fcntl

    state.makedirs(trial_dir)
    lock = posix.open(trial_dir + "/lock", posix.O_RDWR | posix.O_CREAT, 0o644)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        known = (state.read_text(turn_file) or "").strip()
        if known in (WITH, WITHOUT):
            return known
        seed, size = read_settings(trial_dir)
        n = _count(trial_dir)
        arm = arm_at(seed, size, n)
        # The log is the record, appended before the turn file lets any other caller see the arm.
        # No fsync: it cost 2-6 ms of the agent's wait on a busy disk, and the file survives any
        # crash of a hook process; only a power cut could lose the last line.
        line = f"{n}\t{log_field(session_id)}\t{log_field(turn)}\t{arm}\n".encode("utf-8", "replace")
        fd = posix.open(trial_dir + "/" + LOG, posix.O_WRONLY | posix.O_APPEND | posix.O_CREAT, 0o644)
        try:
            posix.write(fd, line)
            size_after = posix.fstat(fd).st_size
        finally:
            posix.close(fd)
        state.write_atomic(turn_file, arm.encode())
        state.write_atomic(trial_dir + "/" + COUNT, f"{n + 1} {size_after}".encode())
        return arm
    finally:
        posix.close(lock)  # closing the descriptor releases the flock
