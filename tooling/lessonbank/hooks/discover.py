"""Discovery without a person: SessionStart starts a detached, incremental `bank scan` when one is due.

"Due?" is one stat of `.lessonbank/scan/next-scan` (its mtime is when the next scan falls due),
made by `session_start` itself (`statedir.discovery_due`), so a session that is not due does not
even import this module; only a due one imports subprocess and spawns
`python -m lessonbank scan --scheduled` in its own session with no terminal, its output appended to
`.lessonbank/scan/scheduled.log`. The scan reads scan.every from bank.toml and sets the next due
time itself; until it does, a lease keeps parallel sessions from starting a second one. New
candidates wait for `bank review` (only scan.accept_above lets any in unattended). The hook never
runs in `bank off`; LESSONBANK_DISCOVER=off in the environment turns discovery off for one machine
or a CI job (the test suite sets it). It imports `state` and `hooks.child` only.
"""

import posix

from lessonbank.hooks import child
from lessonbank.state.statedir import SCAN, SCHEDULED_LOG, open_for_write, postpone_scan

# Until the scan it starts sets the real next time, no other session starts one.
LEASE = 3600.0


def start_due(root: str, state_dir: str, now: float) -> None:
    """Take the lease (parallel sessions see the scan not due), then start the scan."""
    postpone_scan(state_dir, now + LEASE)
    start(root, state_dir)


def command(root: str) -> list[str]:
    """The scheduled scan's argv: this interpreter, this package, this bank, isolated (hooks.child)."""
    return child.command("--root", root, "scan", "--scheduled")


def start(root: str, state_dir: str) -> None:
    """Spawn the scan in a new session, stdin closed, output to the scheduled log; do not wait."""
    import subprocess

    env = child.environment()
    log = state_dir + "/" + SCAN + "/" + SCHEDULED_LOG
    fd = open_for_write(log, posix.O_WRONLY | posix.O_APPEND)  # never through a committed symlink
    try:
        subprocess.Popen(
            command(root), cwd=root, env=env, stdin=subprocess.DEVNULL, stdout=fd, stderr=fd,
            start_new_session=True, close_fds=True,
        )  # fmt: skip
    finally:
        posix.close(fd)
