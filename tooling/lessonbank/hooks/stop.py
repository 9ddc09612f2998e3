"""Stop: capture `#lesson` blocks from the last message, and ask once for the lesson of a recovery.

A recovery is a check that failed earlier in this turn and passed later (from checks.jsonl).
Blocks go through the capture gates at once by running `bank capture --blocks`; a refusal
blocks the stop once with the gate's reason so the agent can fix the block. A recovery with
no block blocks the stop once with a request for the one durable lesson or a plain "one-off
slip". Nothing blocks when `stop_hook_active` is set (the agent is already answering a block).
"""

from lessonbank.hooks import handover
from lessonbank.state import jsonio, records, statedir, userdirs

NUDGE = (
    "lessonbank: {checks} failed earlier in this turn and passes now. If the fix taught something "
    "durable about this project, record the one lesson before you stop: end your reply with a "
    "#lesson block (tool, trigger, mistake, fix, tags, and promote-to naming where it belongs: "
    'rule:<name>, skill:<name> or doc:<path.md>), or run `bank capture --when "…" --do "…" '
    "--promote-to rule:<name>`; it is saved in {root}/lessons/. If it was a one-off slip, just "
    'say "one-off slip".'
)
REFUSED = (
    "lessonbank did not save your #lesson block: {reason}. Fix the block and end your reply "
    "with it again, or drop it if there is no durable lesson."
)
PENDING_REASON = (
    "lessonbank could not save your #lesson block here ({error}). Nothing is lost: the message is "
    "kept in {path}, and `bank capture --pending` saves it through the gates once lessonbank is "
    "installed (python3 -m pip install {source}: lessonbank is not on PyPI). You need not repeat the block."
)
PENDING_DISK = (
    "lessonbank could not save your #lesson block: {error}. Nothing is lost: the message is kept "
    "in {path}, and `bank capture --pending` saves it through the gates once the bank can be "
    "written again. You need not repeat the block."
)
LOST = (
    "lessonbank could not save your #lesson block ({error}), nor keep it aside ({kept}). Tell the "
    "user, and keep the block in your reply so they can run `bank capture --blocks` on it."
)
PENDING = statedir.PENDING_LESSONS
# How `bank` reports a file it could not write or use (cli.disk_error, store.write_atomic): the
# block is not at fault, so it is kept for `bank capture --pending` rather than refused.
DISK_ERROR = "Error: cannot "
CAPTURE_TIMEOUT = 50


def has_blocks(message: str) -> bool:
    return "#lesson" in message and "#/lesson" in message


def capture(root: str, session_id: str, message: str) -> str | None:
    """Run `bank capture --blocks` on the message: None when saved, the refusal reason otherwise.

    Any other failure (the package's dependencies missing, a crash) raises, to be logged.
    """
    import subprocess

    from lessonbank.hooks import child

    env = child.environment()
    command = child.command("--root", root, "capture", "--blocks", "--session", session_id)
    if statedir.READ_ONLY:
        command.append("--dry-run")
    done = subprocess.run(
        command,
        input=message.encode("utf-8"),
        capture_output=True,
        env=env,
        cwd=root,
        timeout=CAPTURE_TIMEOUT,
    )
    if done.returncode == 0:
        return None
    err = done.stderr.decode("utf-8", "replace").strip()
    if done.returncode == 1 and err.startswith("Error: ") and not err.startswith(DISK_ERROR):
        return "; ".join(line.strip() for line in err[len("Error: ") :].splitlines() if line.strip())
    raise RuntimeError(f"bank capture --blocks exited {done.returncode}: {err[-800:]}")


def stop(payload: dict, root: str, state_dir: str, mode: str) -> str:
    """The Stop answer: a block with a reason, or "" to let the agent stop."""
    session = statedir.Session(state_dir, str(payload.get("session_id") or ""))
    turn = session.turn(payload.get("prompt_id"))
    active = payload.get("stop_hook_active") is True
    message = payload.get("last_assistant_message")
    if isinstance(message, str) and has_blocks(message):
        try:
            reason = capture(root, session.id, message)
        except Exception as exc:
            return keep_pending(state_dir, session, turn, message, exc, active)
        if reason is None or active or not session.claim_stop(turn):
            return ""
        return handover.block(REFUSED.format(reason=reason.rstrip(".")))
    if active:
        return ""
    rows, _ = records.read_checks(session.dir)
    fixed = records.recovered([(r["check"], r["ok"]) for r in rows if r["turn"] == turn])
    if not fixed or not session.claim_stop(turn):
        return ""
    return handover.block(NUDGE.format(checks=" and ".join(fixed), root=root))


def keep_pending(
    state_dir: str, session: statedir.Session, turn: str, message: str, exc: Exception, active: bool
) -> str:
    """Capture could not run (e.g. the plugin's python lacks the package): keep the blocks, say so once."""
    from lessonbank.state.scrub import scrub

    # Kept in clear until `bank capture --pending` runs the full gate: the obvious secrets go now.
    entry = jsonio.dumps({"session": session.id, "turn": turn, "message": scrub(message)})
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    error = lines[-1][:200] if lines else type(exc).__name__
    disk = DISK_ERROR in error
    if disk:
        error = error[error.index(DISK_ERROR) + len("Error: ") :]
    kept: OSError | None = None
    places = (state_dir + "/" + PENDING, userdirs.user_pending(state_dir.rpartition("/")[0]))
    for path in [place for place in places if place]:  # `path` ends as the last one tried
        try:
            statedir.append_line(path, entry)
            kept = None
            break
        except OSError as failed:  # the bank's folder is read-only or full: try the user's
            kept = failed
    statedir.log_error(state_dir, "Stop", exc)
    if active:
        return ""
    try:
        claimed = session.claim_stop(turn)
    except OSError:  # the state folder cannot be written: telling the agent matters more
        claimed = True
    if not claimed:
        return ""
    if kept is not None:
        return handover.block(LOST.format(error=error, kept=f"{path}: {kept.strerror or kept}"))
    if disk:
        return handover.block(PENDING_DISK.format(error=error.rstrip("."), path=path))
    import posixpath

    # <repository>/tooling/lessonbank/hooks/stop.py, however the hook put the package on sys.path
    source = posixpath.normpath(posixpath.abspath(__file__)).rsplit("/", 4)[0]
    return handover.block(PENDING_REASON.format(error=error, path=path, source=source))
