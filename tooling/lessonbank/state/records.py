"""The hooks' records, one JSON object per line in the bank's state folder: written and read here only.

`<bank>/.lessonbank/ledger.jsonl`: one line per lesson handed over (or, in the trial's
without arm, one that would have been), in this key order:

    {"session": "<session_id>", "turn": "<turn>", "lesson": "<slug>",
     "event": "PreToolUse" | "PostToolUse" | "UserPromptSubmit", "bytes": <UTF-8 bytes of its text>,
     "arm": "on" | "with" | "without", "injected": true | false}

`arm` is "on" in the normal mode and the trial's arm in `test` mode; `injected` is false only
for the without arm. A lesson is written once per session (its claim is taken either way).
Then come the call's "tool_use_id" (PreToolUse; "" for a prompt, and for PostToolUse: lessons
an agent hands over with a call's result, read only after it ran), so a check that fails in
that very call can be tied to the lessons handed over before it, and the lesson's "layer":
"project", "personal" or "team:<name>" (index.layers). Lines written before layers existed
end earlier and read as "" and "project".

`<bank>/.lessonbank/sessions/<session>/checks.jsonl`: one line per check run by Bash
(PostToolUse = passed, PostToolUseFailure = failed; interrupted calls are not checks):

    {"turn": "<turn>", "command": "<the command, at most 2000 characters>",
     "check": "<normalized name, e.g. pytest, npm test, ruff + mypy>", "ok": true | false,
     "tool_use_id": "<id>"}

A turn is the payload's `prompt_id` when present (Claude Code 2.1.197 sends it), else the
session's prompt counter as a decimal string, advanced at each UserPromptSubmit.

Both the Stop hook and the trial read these files through `read_ledger` / `read_checks`, and both
ask `recovered` whether a check failed and then passed in a turn; the trial asks `still_failing`
whether a turn ended with a check whose last run failed.
"""

from lessonbank.state import jsonio, statedir

MAX_COMMAND = 2000
# The estimate the ledger, the trial and `bank replay` print of a text's tokens: its bytes / 4,
# rounded up.
BYTES_PER_TOKEN = 4


def tokens(n_bytes: int) -> int:
    """The tokens estimated for `n_bytes` bytes of text (BYTES_PER_TOKEN)."""
    return -(-n_bytes // BYTES_PER_TOKEN)

# Each file's fields in the order they are written: (name, type, value when absent or null, None
# when the field is required). A line missing a required field, or holding a value its type
# cannot take, is skipped by the readers.
LEDGER_FIELDS = (
    ("session", str, None),
    ("turn", str, None),
    ("lesson", str, None),
    ("event", str, ""),
    ("bytes", int, 0),
    ("arm", str, ""),
    ("injected", bool, True),
    ("tool_use_id", str, ""),
    ("layer", str, "project"),
)
CHECK_FIELDS = (
    ("turn", str, None),
    ("command", str, ""),
    ("check", str, ""),
    ("ok", bool, None),
    ("tool_use_id", str, ""),
)
# A command running several checks is recorded as one check named "ruff + mypy".
CHECK_SEPARATOR = " + "


def _line(fields: tuple, values: tuple) -> str:
    """One record as a JSON line: the values in the fields' order (trailing fields may be left off)."""
    return jsonio.dumps({name: value for (name, _, _), value in zip(fields, values, strict=False)})


def record_injection(
    state_dir: str,
    session: str,
    turn: str,
    slug: str,
    event: str,
    size: int,
    arm: str,
    injected: bool,
    tool_use_id: str = "",
    layer: str = "project",
) -> None:
    """Append one ledger line."""
    values = (session, turn, slug, event, size, arm, injected, tool_use_id, layer)
    statedir.append_line(state_dir + "/" + statedir.LEDGER, _line(LEDGER_FIELDS, values))


def record_check(
    session_dir: str, turn: str, command: str, check: str, ok: bool, tool_use_id: str
) -> None:
    """Append one line to the session's checks.jsonl, the command's secrets scrubbed (state.scrub)."""
    from lessonbank.state.scrub import scrub

    values = (turn, scrub(command[:MAX_COMMAND]), check, ok, tool_use_id)
    statedir.append_line(session_dir + "/" + statedir.CHECKS, _line(CHECK_FIELDS, values))


def read_ledger(state_dir: str, strict: bool = False) -> tuple[list[dict], int]:
    """Every ledger line in order, with every field of LEDGER_FIELDS, and how many lines were skipped."""
    return read_rows(state_dir + "/" + statedir.LEDGER, LEDGER_FIELDS, strict)


def read_checks(session_dir: str, strict: bool = False) -> tuple[list[dict], int]:
    """Every check recorded in this session in order, with every field of CHECK_FIELDS, and the skipped count."""
    return read_rows(session_dir + "/" + statedir.CHECKS, CHECK_FIELDS, strict)


def read_rows(path: str, fields: tuple, strict: bool = False) -> tuple[list[dict], int]:
    """The records of a .jsonl file in order, and how many non-blank lines were skipped as unreadable.

    A missing file has no records. Another file that cannot be read has none either, unless
    `strict` (the CLI's way), which raises the OSError. A torn or foreign line is skipped.
    """
    rows: list[dict] = []
    skipped = 0
    for line in _text(path, strict).splitlines():
        if not line.strip():
            continue
        try:
            row = _typed(jsonio.loads(line), fields)
        except ValueError:
            row = None
        if row is None:
            skipped += 1
        else:
            rows.append(row)
    return rows, skipped


def _text(path: str, strict: bool) -> str:
    if not strict:
        return statedir.read_text(path) or ""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except FileNotFoundError:
        return ""


def _typed(data: object, fields: tuple) -> dict | None:
    """The record with each field in its type (or its default), or None when it is not one."""
    if not isinstance(data, dict):
        return None
    row = {}
    for name, kind, default in fields:
        value = data.get(name)
        if value is None:
            if default is None:
                return None
            value = default
        try:
            row[name] = kind(value)
        except (TypeError, ValueError, OverflowError):
            return None
    return row


def recovered(runs: list[tuple[str, bool]]) -> list[str]:
    """The checks that failed and later passed, in the order they passed.

    `runs` are one turn's (check name, ok) pairs in the order they ran; each name of a combined
    check ("ruff + mypy") counts on its own.
    """
    failed: set[str] = set()
    out: list[str] = []
    for check, ok in runs:
        names = check.split(CHECK_SEPARATOR)
        if not ok:
            failed.update(names)
        else:
            out.extend(n for n in names if n in failed and n not in out)
    return out


def still_failing(runs: list[tuple[str, bool]]) -> list[str]:
    """The checks whose last run in the turn failed, in the order of those last runs.

    `runs` as for `recovered`; each name of a combined check counts on its own.
    """
    last: dict[str, bool] = {}
    for check, ok in runs:
        for name in check.split(CHECK_SEPARATOR):
            last.pop(name, None)
            last[name] = ok
    return [name for name, ok in last.items() if not ok]
