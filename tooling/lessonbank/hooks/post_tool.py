"""PostToolUse: record each check a Bash call ran and whether it passed, by its real exit status.

The agent's adapter supplies `exit_status`; a call whose status the agent did not give is not
recorded (a check is never guessed to have passed).
"""

from lessonbank.matching import check_commands
from lessonbank.state import records, statedir


def post_tool_use(payload: dict, root: str, state_dir: str, mode: str) -> str:
    """Append the check (if the command ran one) to the session's checks.jsonl (statedir.CHECKS); never any output."""
    if payload.get("tool_name") != "Bash" or payload.get("is_interrupt"):
        return ""
    tool_input = payload.get("tool_input")
    command = tool_input.get("command") if isinstance(tool_input, dict) else None
    if not isinstance(command, str):
        return ""
    response = payload.get("tool_response")
    if isinstance(response, dict) and response.get("interrupted"):
        return ""
    name = check_commands.check_name(command)
    if not name:
        return ""
    status = payload.get("exit_status")
    if not isinstance(status, int) or isinstance(status, bool):
        return ""
    ok = status == 0
    session = statedir.Session(state_dir, str(payload.get("session_id") or ""))
    turn = session.turn(payload.get("prompt_id"))
    records.record_check(session.dir, turn, command, name, ok, str(payload.get("tool_use_id") or ""))
    return ""
