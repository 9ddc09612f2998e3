"""Copilot CLI and Gemini CLI transcripts turned into scan events, beside parse's Claude Code and Codex.

- Copilot CLI (~/.copilot/session-state/<id>/events.jsonl, or $COPILOT_HOME): `session.start`
  (session id, cwd), `user.message`, `assistant.message` (text, and `toolRequests` naming the
  calls), `tool.execution_complete` (the result; the exit status from `shellExecution.exitCode`,
  else the result text "<shellId: N completed with exit code N>").
- Gemini CLI (~/.gemini/tmp/<project>/chats/session-*.jsonl, or $GEMINI_CLI_HOME/.gemini): a first
  line with `sessionId` and `projectHash` (sha256 of the project folder), then `user` and `gemini`
  messages; a `gemini` message is written again once its `toolCalls` carry their results, so
  messages and calls are read once by id. The shell's exit status is in its output (matching/exit_status).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from lessonbank.matching import agent_tools, exit_status
from lessonbank.scan import outcomes, parse
from lessonbank.scan.events import Event
from lessonbank.scan.parse import EDIT_MARK, ClaudeStream, CodexStream, Stream, bound, clip

MAX_SEEN = 2000
# Their shell tools, and their edit tools -> the argument naming the file (matching/agent_tools).
SHELL = agent_tools.shell_tools()
EDITS = agent_tools.edit_tools()


# ---- where their transcripts live -------------------------------------------------------------


def copilot_files() -> list[Path]:
    """$COPILOT_HOME (or ~/.copilot)/session-state/<id>/events.jsonl."""
    root = Path(os.environ.get("COPILOT_HOME") or Path.home() / ".copilot") / "session-state"
    return sorted(root.glob("*/events.jsonl")) if root.is_dir() else []


def gemini_files(project: Path | None = None) -> list[Path]:
    """$GEMINI_CLI_HOME (or ~)/.gemini/tmp/<project>/chats/session-*.jsonl; with `project`, only
    the sessions whose first line carries its hash (sha256 of the folder's path)."""
    root = Path(os.environ.get("GEMINI_CLI_HOME") or Path.home()) / ".gemini" / "tmp"
    found = sorted(root.glob("*/chats/session-*.jsonl")) if root.is_dir() else []
    if project is None:
        return found
    digest = hashlib.sha256(str(project).encode()).hexdigest().encode()
    out = []
    for path in found:
        try:
            with open(path, "rb") as handle:
                if digest in handle.readline(4096):
                    out.append(path)
        except OSError:
            continue
    return out


def copilot_cwd(path: Path) -> str:
    """The cwd in a Copilot session's `session.start` event (its first line), or ''."""
    try:
        with open(path, "rb") as handle:
            record = json.loads(handle.readline(1 << 20) or b"{}")
    except (OSError, ValueError):
        return ""
    context = record.get("data", {}).get("context") if isinstance(record, dict) else None
    return str(context.get("cwd", "")) if isinstance(context, dict) else ""


# ---- reading them ---------------------------------------------------------------------------


def _status(code: int | None, text: str) -> tuple[str, int | None, bool]:
    """(status, code, timed out): a known code decides; otherwise the text's own signs do."""
    status, _, timed_out = outcomes.result_status(text, bool(code))
    if code is None:
        return ("unknown" if status == "ok" else status), None, timed_out
    return status, code, timed_out


class CopilotStream(Stream):
    """Copilot CLI's events.jsonl."""

    def wanted(self, buf: bytes, start: int, stop: int, wants_text: bool) -> bool:
        head = buf[start : min(start + 60, stop)]
        if b'"type":"tool.execution_complete"' in head or b'"type":"session.start"' in head:
            return True
        if b'"type":"assistant.message"' in head:
            return True
        return b'"type":"user.message"' in head

    def events(self, record: dict[str, Any]) -> list[Event]:
        data = record.get("data")
        if not isinstance(data, dict):
            return []
        kind = record.get("type")
        time = str(record.get("timestamp", ""))
        if kind == "session.start":
            self.session = str(data.get("sessionId") or self.session)
            context = data.get("context")
            if isinstance(context, dict) and isinstance(context.get("cwd"), str):
                self.cwd = context["cwd"]
            return []
        if kind == "user.message":
            return [Event("user", time, str(data.get("content") or ""))]
        if kind == "assistant.message":
            out = []
            if isinstance(data.get("content"), str) and data["content"].strip():
                out.append(Event("assistant", time, data["content"]))
            for request in data.get("toolRequests") or []:
                out.extend(self._request(request, time))
            return out
        if kind == "tool.execution_complete":
            return self._complete(data, time)
        return []

    def _request(self, request: Any, time: str) -> list[Event]:
        if not isinstance(request, dict):
            return []
        name, args = str(request.get("name", "")), request.get("arguments")
        if not isinstance(args, dict):
            return []
        call = str(request.get("toolCallId", ""))
        if name in SHELL and isinstance(args.get("command"), str):
            if not self.want(args["command"]):
                return [Event("tool", time, tool=name, command=args["command"], status="unknown")]
            self.pending[call] = args["command"]
        elif name in EDITS and isinstance(args.get(EDITS[name]), str):
            self.pending[call] = f"{EDIT_MARK}{name}\t{args[EDITS[name]]}"
        bound(self.pending)
        return []

    def _complete(self, data: dict[str, Any], time: str) -> list[Event]:
        command = self.pending.pop(str(data.get("toolCallId", "")), None)
        if command is None:
            return []
        result = data.get("result")
        text = ""
        if isinstance(result, dict):
            text = str(result.get("detailedContent") or result.get("content") or "")
        if command.startswith(EDIT_MARK):
            tool, _, path = command[len(EDIT_MARK) :].partition("\t")
            return [Event("tool", time, tool=tool, paths=(path,))] if data.get("success") else []
        shell = data.get("shellExecution")
        code = shell.get("exitCode") if isinstance(shell, dict) else None
        if not isinstance(code, int):
            code = exit_status.copilot(text)
        status, code, timed_out = _status(code, text)
        return [Event("tool", time, clip(text), "bash", command, (), status, code, timed_out)]


class GeminiStream(Stream):
    """Gemini CLI's chats/session-*.jsonl: no call waits for its result (a message is written again
    with them), so the state is the ids already read instead of `pending`."""

    def __init__(self, state: dict[str, Any] | None = None) -> None:
        super().__init__(state)
        self.seen: list[str] = (state or {}).get("seen", [])
        self.project_hash: str = (state or {}).get("project_hash", "")

    def state(self) -> dict[str, Any]:
        return {"seen": self.seen[-MAX_SEEN:], "session": self.session, "cwd": self.cwd, "project_hash": self.project_hash}

    def wanted(self, buf: bytes, start: int, stop: int, wants_text: bool) -> bool:
        head = buf[start : min(start + 200, stop)]
        return b'"projectHash"' in head or b'"type":"user"' in head or b'"type":"gemini"' in head

    def _new(self, key: str) -> bool:
        if key in self.seen:
            return False
        self.seen.append(key)
        del self.seen[:-MAX_SEEN]
        return True

    def events(self, record: dict[str, Any]) -> list[Event]:
        if "projectHash" in record:
            self.session = str(record.get("sessionId") or self.session)
            self.project_hash = str(record.get("projectHash") or "")
            return []
        kind = record.get("type")
        time = str(record.get("timestamp", ""))
        ident = str(record.get("id", ""))
        content = record.get("content")
        if kind == "user":
            parts = content if isinstance(content, list) else [{"text": content}]
            texts = [p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str)]
            text = exit_status.without_hook_context("\n".join(texts))
            if not text or text.startswith("<session_context>") or not self._new("u:" + ident):
                return []
            return [Event("user", time, text)]
        if kind != "gemini":
            return []
        out = []
        if isinstance(content, str) and content.strip() and self._new("a:" + ident):
            out.append(Event("assistant", time, content))
        for call in record.get("toolCalls") or []:
            if isinstance(call, dict) and call.get("result") is not None and self._new("t:" + str(call.get("id"))):
                out.extend(self._call(call, time))
        return out

    def _call(self, call: dict[str, Any], time: str) -> list[Event]:
        name, args = str(call.get("name", "")), call.get("args")
        if not isinstance(args, dict):
            return []
        text = ""
        for part in call.get("result") or []:
            response = part.get("functionResponse", {}).get("response") if isinstance(part, dict) else None
            if isinstance(response, dict):
                text += str(response.get("output") or response.get("error") or "")
        if name in EDITS and isinstance(args.get(EDITS[name]), str):
            return [Event("tool", time, tool=name, paths=(args[EDITS[name]],))] if "error" not in text[:40] else []
        command = args.get("command")
        if name not in SHELL or not isinstance(command, str):
            return []
        if not self.want(command):
            return [Event("tool", time, tool=name, command=command, status="unknown")]
        status, code, timed_out = _status(exit_status.gemini(text), text)
        body = text.split("Output:", 1)[-1]
        return [Event("tool", time, clip(body), name, command, (), status, code, timed_out)]


def sniff(record: dict[str, Any]) -> str:
    """'copilot' or 'gemini' for their transcripts' records, else ''."""
    if isinstance(record.get("data"), dict) and str(record.get("type", "")).partition(".")[2]:
        return "copilot"
    if "projectHash" in record or record.get("type") == "gemini" or "$set" in record:
        return "gemini"
    return ""


def format_of(record: dict[str, Any]) -> str:
    """The format a transcript's first record is in: copilot or gemini, else parse's codex or claude."""
    return sniff(record) or parse.sniff(record)


AnyStream = ClaudeStream | CodexStream | CopilotStream | GeminiStream


def make(fmt: str, state: dict[str, Any] | None = None) -> AnyStream | None:
    """The stream that reads a format (parse's claude and codex, copilot, gemini), None for any other."""
    if fmt == "claude":
        return ClaudeStream(state)
    if fmt == "codex":
        return CodexStream(state)
    if fmt == "copilot":
        return CopilotStream(state)
    if fmt == "gemini":
        return GeminiStream(state)
    return None


def for_record(record: dict[str, Any]) -> tuple[str, AnyStream]:
    """(format, a new stream) of a transcript whose first record is `record`."""
    fmt = format_of(record)
    stream = make(fmt)
    if stream is None:  # the sniffers name only formats make reads
        raise AssertionError(fmt)
    return fmt, stream
