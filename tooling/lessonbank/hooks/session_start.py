"""SessionStart: the standing protocol for reporting lessons, claims after /compact and /clear, the trial arm,
and the scheduled scan when one is due (hooks.discover)."""

from lessonbank.hooks import handover
from lessonbank.state import statedir

PROTOCOL = """\
lessonbank: this project keeps a bank of lessons its coding agents learned (lessons/ in {root}).
Lessons handed to you before a tool call come from earlier sessions here: use one only where it fits.
When you fix a failed check for a reason that will bite again in this project, end your reply with one block:
#lesson
tool: <the tool, e.g. Bash>
trigger: <the command or path where it bites, e.g. pytest>
mistake: <what went wrong>
fix: <what to do instead>
tags: <category:value, e.g. tool:pytest>
promote-to: <rule:<name> | skill:<name> | doc:<path.md>>
#/lesson
or run `bank capture --when "…" --do "…" --promote-to rule:<name>`. Most turns teach nothing durable: do not force a lesson."""


def session_start(payload: dict, root: str, state_dir: str, mode: str) -> str:
    """Reset claims as the source asks (compact: high-priority ones; clear: all); give the protocol.

    In test mode a new session is assigned its trial arm here, before its first prompt; both arms
    get the same protocol, so nothing before the first lesson differs between them.
    """
    session = statedir.Session(state_dir, str(payload.get("session_id") or ""))
    if mode == "test" and not statedir.READ_ONLY:
        from lessonbank.state import arms

        arms.assign(state_dir, session.id)
    source = payload.get("source")
    if source == "clear":
        session.release()
    elif source == "compact":
        from lessonbank.index import layers

        index = layers.index(root, state_dir)
        threshold = index.settings["compact_priority"]
        session.release(min_priority=threshold)
    _discover(root, state_dir)
    return handover.context("SessionStart", PROTOCOL.format(root=root))


def _discover(root: str, state_dir: str) -> None:
    """Start the scheduled scan when due (hooks.discover); a failure there never costs the protocol."""
    try:
        import time

        now = time.time()
        if statedir.discovery_due(state_dir, now):  # one stat; the module that spawns loads only now
            from lessonbank.hooks import discover

            discover.start_due(root, state_dir, now)
    except Exception as exc:
        statedir.log_error(state_dir, "SessionStart discover", exc)
