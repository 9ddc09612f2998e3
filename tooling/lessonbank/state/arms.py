"""The trial's arm for a session: balanced, concealed, recorded once per session.

The trial randomizes sessions, not turns: a lesson handed over stays in the agent's context for the
rest of its session, so a session is the unit that gets lessons or not. The hooks call `assign` in
`test` mode when a session starts (SessionStart) and when a lesson fits a session they have not
seen (a session that began before `bank test`, or whose SessionStart was missed). State, in the
bank's git-ignored folder `<bank>/.lessonbank/trial/` (statedir.TRIAL; the names inside it are this
module's):

    settings                 `seed=N` and `planned=N` lines, written when a trial starts (`bank test`)
    assignments.tsv          the record: `index<TAB>session<TAB>arm`, one line per session
    count                    `<sessions assigned> <log size>`: a cache of the log's line count
    session-arms/<session>   the session's arm, so later hook calls answer without the lock
    lock                     flock'd while a new session is assigned
    log.jsonl                the trial's history: every start, reset and mode change (kept across resets)
    archive/<n>/             earlier trials, moved here by `bank trial reset`

The seed is drawn fresh from the operating system for each trial and lives only in `settings` (not in
bank.toml, not printed). Assignments are cut into runs of 12; each run is split at random into
blocks of 2, 4 or 6 sessions, and each block holds half of each arm in an order shuffled from the
seed. So the arms never drift apart by more than 3, and the end of a block cannot be read off a
fixed block size.
"""

# Inside every hook process: `posix` and `state.statedir` only (even `os` is a visible share
# of a hook's run); `fcntl` is imported only when a new session has to be assigned.
import posix

from lessonbank.state import statedir

WITH = "with"
WITHOUT = "without"
SETTINGS = "settings"
LOG = "assignments.tsv"
COUNT = "count"
ARMS = "session-arms"  # not "arms": that held per-turn folders before trials were by session
LOCK = "lock"
EVENTS = "log.jsonl"
ARCHIVE = "archive"
RUN = 12
BLOCK_SIZES = (2, 4, 6)
_MASK = (1 << 64) - 1


def log_field(value: str) -> str:
    """A value as written in the assignment log: tabs and line breaks become spaces."""
    return value.replace("\t", " ").replace("\r", " ").replace("\n", " ")


def fresh_seed() -> int:
    """A new trial's seed: 63 random bits from the operating system."""
    return int.from_bytes(posix.urandom(8), "big") >> 1


def _splitmix(mix: int) -> tuple[int, int]:
    # splitmix64: tiny, and stable across Python versions unlike random.shuffle's internals.
    mix = (mix + 0x9E3779B97F4A7C15) & _MASK
    z = mix
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return mix, z ^ (z >> 31)


def block_sizes(seed: int, run: int) -> list[int]:
    """How run `run` (assignments 12*run to 12*run+11) is split into blocks: sizes 2, 4 or 6 adding up to 12."""
    mix = (seed * 0x100000001B3 + run * 0xD1B54A32D192ED03 + 0x5851F42D4C957F2D) & _MASK
    sizes: list[int] = []
    left = RUN
    while left:
        options = [size for size in BLOCK_SIZES if size <= left]
        mix, value = _splitmix(mix)
        sizes.append(options[value % len(options)])
        left -= sizes[-1]
    return sizes


def block(seed: int, first: int, size: int) -> list[str]:
    """The arms of the block starting at assignment `first`: half with, half without, shuffled."""
    arms = [WITH] * (size // 2) + [WITHOUT] * (size // 2)
    mix = (seed * 0x100000001B3 + first * 0x9E3779B97F4A7C15) & _MASK
    for i in range(size - 1, 0, -1):
        mix, value = _splitmix(mix)
        j = value % (i + 1)
        arms[i], arms[j] = arms[j], arms[i]
    return arms


def arm_at(seed: int, n: int) -> str:
    """The arm of the n-th assigned session (0-based)."""
    run, place = divmod(n, RUN)
    start = 0
    for size in block_sizes(seed, run):
        if place < start + size:
            return block(seed, run * RUN + start, size)[place - start]
        start += size
    raise AssertionError("block sizes add up to RUN")


def read_settings(folder: str) -> dict[str, int]:
    """The trial's `key=number` settings (seed, planned); {} when there is no trial."""
    out: dict[str, int] = {}
    for line in (statedir.read_text(folder + "/" + SETTINGS) or "").splitlines():
        key, _, value = line.partition("=")
        try:
            out[key.strip()] = int(value)
        except ValueError:
            continue
    return out


def _count(folder: str) -> int:
    """Sessions assigned so far: the cached count when it matches the log's size, else the log's lines."""
    try:
        size = posix.stat(folder + "/" + LOG).st_size
    except OSError:
        return 0
    cached = (statedir.read_text(folder + "/" + COUNT) or "").split()
    if len(cached) == 2:
        count, at_size = cached
        if at_size == str(size) and count.isdigit():
            return int(count)
    return (statedir.read_text(folder + "/" + LOG) or "").count("\n")


def trial_dir(state_dir: str) -> str:
    """The trial's folder in the bank's state folder."""
    return state_dir + "/" + statedir.TRIAL


def arm_file(state_dir: str, session_id: str) -> str:
    """The file holding a session's arm once it is assigned."""
    return f"{trial_dir(state_dir)}/{ARMS}/{statedir.safe_name(session_id)}"


def assign(state_dir: str, session_id: str) -> str:
    """The arm ("with" or "without") of this session; the first caller decides, every later caller agrees."""
    folder = trial_dir(state_dir)
    session_file = arm_file(state_dir, session_id)
    known = (statedir.read_text(session_file) or "").strip()
    if known in (WITH, WITHOUT):
        return known
    import fcntl

    statedir.makedirs(folder)
    lock = statedir.open_for_write(folder + "/" + LOCK, posix.O_RDWR)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        known = (statedir.read_text(session_file) or "").strip()
        if known in (WITH, WITHOUT):
            return known
        seed = read_settings(folder).get("seed")
        if seed is None:
            # Test mode set by hand, without `bank test`: start the trial with a fresh seed here.
            seed = fresh_seed()
            statedir.write_atomic(folder + "/" + SETTINGS, f"seed={seed}\n".encode())
            statedir.append_line(folder + "/" + EVENTS, '{"event": "start", "by": "hook"}')
        n = _count(folder)
        arm = arm_at(seed, n)
        # The log is the record, appended before the session file lets any other caller see the arm.
        # No fsync: it cost 2-6 ms of the agent's wait on a busy disk, and the file survives any
        # crash of a hook process; only a power cut could lose the last line.
        line = f"{n}\t{log_field(session_id)}\t{arm}\n".encode("utf-8", "replace")
        fd = statedir.open_for_write(folder + "/" + LOG, posix.O_WRONLY | posix.O_APPEND)
        try:
            posix.write(fd, line)
            size_after = posix.fstat(fd).st_size
        finally:
            posix.close(fd)
        statedir.write_atomic(session_file, arm.encode())
        statedir.write_atomic(folder + "/" + COUNT, f"{n + 1} {size_after}".encode())
        return arm
    finally:
        posix.close(lock)  # closing the descriptor releases the flock
