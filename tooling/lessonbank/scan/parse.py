"""Claude Code and Codex transcript records turned into events; which raw lines can matter. Pure."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from lessonbank.capture.redaction import redact
from lessonbank.matching import exit_status
from lessonbank.scan import outcomes
from lessonbank.scan.events import Event

MAX_OUTPUT = 3000  # characters kept from each end of a tool's output
MAX_PENDING = 400
# The phrases outcomes.result_status looks for, as they are written: only a window that holds one is decoded.
# Each comes with a piece of itself that starts with a less common letter: the regex of pieces skips most
# positions of a window cheaply, and only a window it matches is searched for the phrases themselves.
_NON_MISTAKE_PHRASES = (
    ("requires approval", "quires approval"), ("granted it yet", "yet"), ("ermission to use", "mission to use"),
    ("ermission for this tool use", "mission for this tool use"),
    ("was blocked. For security", "ked. For security"), ("not allowed in write", "wed in write"),
    ("doesn't want to", "'t want to"), ("was rejected", "jected"), ("ejected by", "jected"),
    ("nterrupted by user", "y user"), ("borted by user", "y user"), ("tool_use_error", "_use_error"),
    ("nputValidationError", "Validation"), ("ibling tool call", "g tool call"), ("andbox denied", "denied"),
    ("by sandbox", "y sandbox"), ("user denied", "denied"), ("has been denied", "denied"),
    ("pproval policy", "val policy"), ("user rejected", "jected"), ("write_stdin failed", "stdin failed"),
)  # fmt: skip
if not all(piece in phrase for phrase, piece in _NON_MISTAKE_PHRASES):
    raise AssertionError("each piece must be part of its phrase, or the pieces would miss a phrase")
_NON_MISTAKE_HINT = re.compile("|".join(re.escape(p) for p, _ in _NON_MISTAKE_PHRASES).encode())
_NON_MISTAKE_PIECE = re.compile(
    "|".join(dict.fromkeys(re.escape(p) for _, p in _NON_MISTAKE_PHRASES)).encode()
)
_BASE64 = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/="
LONG_USER_LINE = 16384  # a user message line this long (without images) holds no short correction


def clip(text: str) -> str:
    return text if len(text) <= 2 * MAX_OUTPUT else text[:MAX_OUTPUT] + "\n…\n" + text[-MAX_OUTPUT:]


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return "" if content is None else str(content)


def _redacted(calls: dict[str, Any]) -> dict[str, Any]:
    """Commands kept between scans, with secrets redacted like everything else the scan stores."""
    return {k: redact(v)[0] if isinstance(v, str) else v for k, v in calls.items()}


def bound(pending: dict[str, Any]) -> None:
    while len(pending) > MAX_PENDING:
        pending.pop(next(iter(pending)))


_SHELL_TOOLS = {"Bash", "bash", "shell", "PowerShell", "exec_command", "local_shell", "container.exec",
                "shell_command"}  # fmt: skip
_EDIT_TOOLS = {"Edit", "Write", "MultiEdit", "NotebookEdit"}
EDIT_MARK = "\x00edit:"  # marks an edit among the pending shell calls (its value is tool\tpath)
_SHELL_NAMES = frozenset(name.encode() for name in _SHELL_TOOLS)
_EDIT_NAMES = frozenset(name.encode() for name in _EDIT_TOOLS)
_PATCH_FILE = re.compile(r"^\*\*\* (?:Update|Add|Delete) File: (.+)$", re.M)
_RUNNING = re.compile(r"Process running with session ID (\d+)")


class Stream:
    """What every agent's stream keeps between lines and scans: the calls waiting for their results
    (redacted when kept), the session and its cwd. `sources` sets `want` (whether a command's result
    can matter) and reads `unread` (non-mistakes among results skipped unparsed, by kind)."""

    def __init__(self, state: dict[str, Any] | None = None) -> None:
        state = state or {}
        self.pending: dict[str, Any] = state.get("pending", {})
        self.session: str = state.get("session", "")
        self.cwd: str = state.get("cwd", "")
        self.want: Callable[[str], bool] = lambda command: True
        self.unread: dict[str, int] = {}

    def state(self) -> dict[str, Any]:
        return {"pending": _redacted(self.pending), "session": self.session, "cwd": self.cwd}

    def trim(self, line: bytes) -> bytes:
        return line


class ClaudeStream(Stream):
    """Claude Code records (1.0.x, 2.0.x, 2.1.x): pairs tool_use with tool_result across lines."""

    def wanted(self, buf: bytes, start: int, stop: int, wants_text: bool) -> bool:
        """Whether the raw line buf[start:stop] can matter; decides before paying for json.loads."""
        find = buf.find
        at = find(b'"role":"', start, stop)  # the message's role comes early in every record that has one
        if at < 0:
            return False  # summaries, snapshots, queue operations
        if buf.startswith(b"user", at + 8, stop):
            pos = find(b'"tool_use_id":"', at, stop)
            if pos < 0:
                if stop - start > LONG_USER_LINE and find(b'"type":"image"', start, stop) < 0:
                    return False  # too long to be a short correction
                return find(b'"tool_use_id"', start, stop) >= 0 or find(b'"type":"user"', start, stop) >= 0
            pending = self.pending
            while pos >= 0:  # a tool result: only those of calls we wait for
                end = find(b'"', pos + 15, stop)
                if end < 0:
                    end = stop - 1
                if buf[pos + 15 : end].decode("ascii", "replace") in pending:
                    return True
                pos = find(b'"tool_use_id":"', end, stop)
            self._count_unread(buf, start, stop)
            return False
        # A shell call always matters, and so does an edit (what the agent wrote this turn is work in progress).
        pos = find(b'"type":"tool_use"', at, stop)
        while pos >= 0:
            name_at = find(b'"name":"', pos, stop)
            if name_at < 0:
                return True  # unexpected layout: parse to be safe
            end = find(b'"', name_at + 8, stop)
            name = buf[name_at + 8 : end if end >= 0 else stop - 1]
            if name in _SHELL_NAMES or name in _EDIT_NAMES:
                return True
            pos = find(b'"type":"tool_use"', name_at, stop)
        return find(b"#lesson", start, stop) >= 0 or (wants_text and find(b'"type":"text"', start, stop) >= 0)

    def trim(self, line: bytes) -> bytes:
        """A long line without the base64 data of its images: nothing reads it, and it is most of the line."""
        at = line.find(b'"type":"image"')
        if at < 0:
            return line
        kept: list[bytes] = []
        done = 0
        while at >= 0:
            begin = line.find(b'"data":"', at) + 8
            end = line.find(b'"', begin) if begin >= 8 else -1
            if end < 0:
                break
            if not line[begin:end].translate(None, _BASE64):  # only base64: emptying it changes nothing read
                kept.append(line[done:begin])
                done = end
            at = line.find(b'"type":"image"', end)
        return b"".join(kept) + line[done:] if kept else line

    def _count_unread(self, buf: bytes, start: int, stop: int) -> None:
        """Count a skipped result that is a denial, rejection, interrupt or tool-use error.

        Those messages are short and start the result's content, so a window there is enough."""
        kind = buf.find(b'"type":"tool_result"', start, stop)
        at = buf.find(b'"content":', kind if kind >= 0 else max(start, stop - 1), stop)
        if at < 0:
            return
        window = buf[at + 10 : min(at + 330, stop)]
        if not _NON_MISTAKE_PIECE.search(window) or not _NON_MISTAKE_HINT.search(window):
            return
        text = window.decode("utf-8", "replace").lstrip('[{"')
        if text.startswith("type") and '"text":"' in text:
            text = text.split('"text":"', 1)[1]
        status = outcomes.result_status(text.replace("\\n", "\n"), True)[0]
        if status not in ("ok", "fail"):
            self.unread[status] = self.unread.get(status, 0) + 1

    def events(self, record: dict[str, Any]) -> list[Event]:
        kind = record.get("type")
        if kind not in ("user", "assistant"):
            return []
        if isinstance(record.get("sessionId"), str):
            self.session = record["sessionId"]
        if isinstance(record.get("cwd"), str):
            self.cwd = record["cwd"]
        message = record.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        time = str(record.get("timestamp", ""))
        if kind == "assistant":
            return self._assistant(content, time)
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        if not isinstance(content, list):
            return []
        human = not (record.get("isMeta") or record.get("isSidechain") or record.get("isCompactSummary"))
        out = []
        for block in content:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_result":
                command = self.pending.pop(str(block.get("tool_use_id", "")), None)
                if command is None:
                    continue
                text = _result_text(block.get("content"))
                if command.startswith(EDIT_MARK):
                    tool, _, path = command[len(EDIT_MARK) :].partition("\t")
                    status = outcomes.result_status(text, bool(block.get("is_error")))[0]
                    if status != "fail":  # applied (ok), or a non-mistake the scan counts
                        out.append(Event("tool", time, tool=tool, paths=(path,), status=status))
                    continue
                status, code, timed_out = outcomes.result_status(text, bool(block.get("is_error")))
                extra = record.get("toolUseResult")
                if isinstance(extra, dict):
                    if extra.get("interrupted"):
                        status = "interrupted"
                    elif extra.get("backgroundTaskId"):
                        status = "unknown"
                out.append(Event("tool", time, clip(text), "Bash", command, (), status, code, timed_out))
            elif block.get("type") == "text" and human:
                out.append(Event("user", time, str(block.get("text", ""))))
        return out

    def _assistant(self, content: Any, time: str) -> list[Event]:
        if not isinstance(content, list):
            return []
        out = []
        for block in content:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text":
                out.append(Event("assistant", time, str(block.get("text", ""))))
            elif block.get("type") == "tool_use":
                name = str(block.get("name", ""))
                raw = block.get("input")
                args: dict[str, Any] = raw if isinstance(raw, dict) else {}
                if name in _SHELL_TOOLS and isinstance(args.get("command"), str):
                    if args.get("run_in_background") or not self.want(args["command"]):
                        # Its result cannot matter (that line is skipped unparsed); the call itself
                        # still says what the agent was doing.
                        out.append(Event("tool", time, tool=name, command=args["command"], status="unknown"))
                        continue
                    self.pending[str(block.get("id", ""))] = args["command"]
                    bound(self.pending)
                elif name in _EDIT_TOOLS:
                    path = args.get("file_path") or args.get("notebook_path")
                    if isinstance(path, str):
                        # The edit counts once its result says it applied: a rejected or failed
                        # edit changed nothing, so it is no evidence for a fix.
                        self.pending[str(block.get("id", ""))] = f"{EDIT_MARK}{name}\t{path}"
                        bound(self.pending)
        return out


class CodexStream(Stream):
    """Codex CLI rollouts: function_call / function_call_output paired by call_id, exit code in the text."""

    def __init__(self, state: dict[str, Any] | None = None) -> None:
        super().__init__(state)
        self.running: dict[str, str] = (state or {}).get("running", {})

    def state(self) -> dict[str, Any]:
        return {**super().state(), "running": _redacted(self.running)}

    def wanted(self, buf: bytes, start: int, stop: int, wants_text: bool) -> bool:
        """Whether the raw line buf[start:stop] can matter; decides before paying for json.loads."""
        head = buf[start : min(start + 240, stop)]
        if b'"payload":{"type":"' not in head:
            return b'"session_meta"' in head or b'"payload"' not in head
        if b'"type":"response_item"' in head:
            if b'"type":"function_call' in head or b'"type":"custom_tool_call' in head:
                return True
            if b'"type":"message"' in head and b'"role":"assistant"' in head:
                return wants_text or buf.find(b"#lesson", start, stop) >= 0
            return False
        if b'"type":"event_msg"' in head:
            return b'"type":"user_message"' in head
        return b'"type":"session_meta"' in head

    def events(self, record: dict[str, Any]) -> list[Event]:
        payload = record.get("payload")
        if not isinstance(payload, dict):
            return []
        time = str(record.get("timestamp", ""))
        kind = record.get("type")
        ptype = payload.get("type")
        if kind == "session_meta":
            self.session = str(payload.get("id", self.session))
            self.cwd = str(payload.get("cwd", self.cwd))
            return []
        if kind == "event_msg" and ptype == "user_message":
            text = str(payload.get("message", ""))
            marker = "## My request for Codex:"
            if marker in text:
                text = text.split(marker, 1)[1]
            return [Event("user", time, text.strip())]
        if kind != "response_item":
            return []
        if ptype == "message" and payload.get("role") == "assistant":
            return [Event("assistant", time, _result_text(payload.get("content")))]
        if ptype == "function_call":
            return self._call(payload, time)
        if ptype == "custom_tool_call":
            patch = str(payload.get("input", ""))
            paths = tuple(m.strip() for m in _PATCH_FILE.findall(patch))
            return [Event("tool", time, tool="apply_patch", paths=paths)] if paths else []
        if ptype == "function_call_output":
            return self._output(payload, time)
        return []

    def _call(self, payload: dict[str, Any], time: str) -> list[Event]:
        call_id = str(payload.get("call_id", ""))
        try:
            args = json.loads(payload.get("arguments") or "{}")
        except (TypeError, ValueError):
            return []
        if not isinstance(args, dict):
            return []
        name = payload.get("name")
        out = []
        if name == "write_stdin":
            self.pending[call_id] = {"stdin": str(args.get("session_id", ""))}
        elif name in _SHELL_TOOLS:
            cmd = args.get("cmd", args.get("command"))
            if isinstance(cmd, list):
                cmd = cmd[-1] if len(cmd) >= 3 and cmd[-2] in ("-lc", "-c") else " ".join(map(str, cmd))
            if isinstance(cmd, str):
                if self.want(cmd):
                    self.pending[call_id] = cmd
                else:
                    out.append(Event("tool", time, tool=str(name), command=cmd, status="unknown"))
        bound(self.pending)
        return out

    def _output(self, payload: dict[str, Any], time: str) -> list[Event]:
        call = self.pending.pop(str(payload.get("call_id", "")), None)
        output = payload.get("output")
        text = output if isinstance(output, str) else _result_text(output)
        if call is None:
            status = outcomes.result_status(text[:300], False)[0]
            if status not in ("ok", "fail"):
                self.unread[status] = self.unread.get(status, 0) + 1
            return []
        if isinstance(call, dict):  # a poll of a command still running
            command = self.running.get(call["stdin"])
            if command is None:
                return []
            key = call["stdin"]
        else:
            command, key = call, ""
        exited = exit_status.codex(text[:300]) is not None
        running = _RUNNING.search(text[:300])
        if running and not exited:
            self.running[running.group(1)] = command
            bound(self.running)
            return []
        self.running.pop(key, None)
        if text.startswith('{"output"'):
            try:
                data = json.loads(text)
                code = data.get("metadata", {}).get("exit_code")
                text = f"Process exited with code {code}\n{data.get('output', '')}"
            except (ValueError, AttributeError):
                pass
        status, code, timed_out = outcomes.result_status(text, False)
        if status == "ok" and exit_status.codex(text[:300]) is None:
            status = "unknown"
        body = text.split("\nOutput:\n", 1)[-1]
        return [Event("tool", time, clip(body), "exec_command", command, (), status, code, timed_out)]


def sniff(record: dict[str, Any]) -> str:
    """'codex' for rollout records, else 'claude'."""
    if "payload" in record and record.get("type") in (
        "session_meta",
        "response_item",
        "event_msg",
        "turn_context",
    ):
        return "codex"
    return "claude"
