"""Agent transcripts on disk: where they are, reading only new bytes, Claude Code and Codex records."""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from lessonbank import mining
from lessonbank.episodes import Candidate, Detector, Event
from lessonbank.errors import BankError

CHUNK = 1 << 22
MAX_LINE = 64 << 20  # a longer line is skipped (counted malformed) without being held in memory
MAX_OUTPUT = 3000  # characters kept from each end of a tool's output
MAX_PENDING = 400
HEAD_BYTES = 1024  # hashed to notice a file replaced in place
LONG_USER_LINE = 16384  # a user message line this long (without images) holds no short correction
STATE_VERSION = 1


# ---- where transcripts live ----------------------------------------------------------------


def claude_root() -> Path:
    return Path.home() / ".claude" / "projects"


def codex_root() -> Path:
    return Path.home() / ".codex" / "sessions"


def claude_project_dir(cwd: Path) -> Path:
    """~/.claude/projects/<cwd with every character that is not a letter or digit made '-'>."""
    return claude_root() / re.sub(r"[^A-Za-z0-9]", "-", str(cwd))


def claude_files(folder: Path) -> list[Path]:
    """Sessions, 2.0 `agent-*.jsonl` beside them, and 2.1 `<session>/subagents/agent-*.jsonl`."""
    if not folder.is_dir():
        return []
    return sorted(folder.glob("*.jsonl")) + sorted(folder.glob("*/subagents/*.jsonl"))


def codex_files() -> list[Path]:
    """~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl."""
    root = codex_root()
    return sorted(root.glob("*/*/*/rollout-*.jsonl")) if root.is_dir() else []


def codex_cwd(path: Path) -> str:
    """The cwd recorded in a rollout's session_meta (its first record), or ''."""
    try:
        with open(path, "rb") as handle:
            for _ in range(5):
                line = handle.readline(MAX_LINE)
                if not line:
                    break
                if b"session_meta" not in line:
                    continue
                record = json.loads(line)
                payload = record.get("payload") if isinstance(record, dict) else None
                if isinstance(payload, dict) and isinstance(payload.get("cwd"), str):
                    return str(payload["cwd"])
    except (OSError, ValueError):
        return ""
    return ""


def _inside(child: str, project: Path) -> bool:
    try:
        return Path(child).resolve() == project or project in Path(child).resolve().parents
    except (OSError, ValueError):
        return False


def locate(
    cwd: Path,
    all_projects: bool = False,
    paths: tuple[Path, ...] = (),
    codex_cache: dict[str, str] | None = None,
) -> list[Path]:
    """The transcript files to scan: --path targets, else this project's (or every project's)."""
    if paths:
        out: list[Path] = []
        for target in paths:
            if target.is_file():
                out.append(target)
            elif target.is_dir():
                out.extend(sorted(p for p in target.rglob("*.jsonl") if p.is_file()))
            else:
                raise BankError(f"no such file or folder: {target}")
        return sorted(dict.fromkeys(p.resolve() for p in out))
    cache = codex_cache if codex_cache is not None else {}
    if all_projects:
        root = claude_root()
        folders = sorted(p for p in root.iterdir() if p.is_dir()) if root.is_dir() else []
        found = [f for folder in folders for f in claude_files(folder)]
        found += codex_files()
    else:
        project = cwd.resolve()
        found = claude_files(claude_project_dir(project))
        for path in codex_files():
            key = str(path)
            if key not in cache:
                cache[key] = codex_cwd(path)
            if cache[key] and _inside(cache[key], project):
                found.append(path)
    return found


# ---- one record -> events ------------------------------------------------------------------


def _clip(text: str) -> str:
    return text if len(text) <= 2 * MAX_OUTPUT else text[:MAX_OUTPUT] + "\n…\n" + text[-MAX_OUTPUT:]


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return "" if content is None else str(content)


def _bound(pending: dict[str, Any]) -> None:
    while len(pending) > MAX_PENDING:
        pending.pop(next(iter(pending)))


_SHELL_TOOLS = {"Bash", "bash", "shell", "PowerShell", "exec_command", "local_shell", "container.exec",
                "shell_command"}  # fmt: skip
_EDIT_TOOLS = {"Edit", "Write", "MultiEdit", "NotebookEdit"}
_SHELL_NAMES = frozenset(name.encode() for name in _SHELL_TOOLS)
_EDIT_NAMES = frozenset(name.encode() for name in _EDIT_TOOLS)
_PATCH_FILE = re.compile(r"^\*\*\* (?:Update|Add|Delete) File: (.+)$", re.M)
_EXITED = re.compile(r"Process exited with code (-?\d+)")
_RUNNING = re.compile(r"Process running with session ID (\d+)")


class ClaudeStream:
    """Claude Code records (1.0.x, 2.0.x, 2.1.x): pairs tool_use with tool_result across lines."""

    def __init__(self, state: dict[str, Any] | None = None) -> None:
        state = state or {}
        self.pending: dict[str, str] = state.get("pending", {})
        self.session: str = state.get("session", "")
        self.cwd: str = state.get("cwd", "")
        self.want: Callable[[str], bool] = lambda command: True

    def state(self) -> dict[str, Any]:
        return {"pending": self.pending, "session": self.session, "cwd": self.cwd}

    def wanted(self, line: bytes, wants_text: bool) -> bool:
        """Whether a raw line can matter; decides before paying for json.loads."""
        at = line.find(b'"role":"')  # the message's role comes early in every record that has one
        if at < 0:
            return False  # summaries, snapshots, queue operations
        if line[at + 8 : at + 12] == b"user":
            start = line.find(b'"tool_use_id":"', at)
            if start < 0:
                if len(line) > LONG_USER_LINE and b'"type":"image"' not in line:
                    return False  # too long to be a short correction
                return b'"tool_use_id"' in line or b'"type":"user"' in line
            while start >= 0:  # a tool result: only those of calls we wait for
                end = line.find(b'"', start + 15)
                if line[start + 15 : end].decode("ascii", "replace") in self.pending:
                    return True
                start = line.find(b'"tool_use_id":"', end)
            return False
        if b"#lesson" in line or (wants_text and b'"type":"text"' in line):
            return True
        # A shell call always matters; an edit only while a failure or a correction is open.
        start = line.find(b'"type":"tool_use"', at)
        while start >= 0:
            name_at = line.find(b'"name":"', start)
            if name_at < 0:
                return True  # unexpected layout: parse to be safe
            name = line[name_at + 8 : line.find(b'"', name_at + 8)]
            if name in _SHELL_NAMES or (wants_text and name in _EDIT_NAMES):
                return True
            start = line.find(b'"type":"tool_use"', name_at)
        return False

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
                status, code, timed_out = mining.result_status(text, bool(block.get("is_error")))
                extra = record.get("toolUseResult")
                if isinstance(extra, dict):
                    if extra.get("interrupted"):
                        status = "interrupted"
                    elif extra.get("backgroundTaskId"):
                        status = "unknown"
                out.append(Event("tool", time, _clip(text), "Bash", command, (), status, code, timed_out))
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
                    _bound(self.pending)
                elif name in _EDIT_TOOLS:
                    path = args.get("file_path") or args.get("notebook_path")
                    if isinstance(path, str):
                        out.append(Event("tool", time, tool=name, paths=(path,)))
        return out


class CodexStream:
    """Codex CLI rollouts: function_call / function_call_output paired by call_id, exit code in the text."""

    def __init__(self, state: dict[str, Any] | None = None) -> None:
        state = state or {}
        self.pending: dict[str, Any] = state.get("pending", {})
        self.running: dict[str, str] = state.get("running", {})
        self.session: str = state.get("session", "")
        self.cwd: str = state.get("cwd", "")
        self.want: Callable[[str], bool] = lambda command: True

    def state(self) -> dict[str, Any]:
        return {"pending": self.pending, "running": self.running, "session": self.session, "cwd": self.cwd}

    def wanted(self, line: bytes, wants_text: bool) -> bool:
        head = line[:240]
        if b'"payload":{"type":"' not in head:
            return b'"session_meta"' in head or b'"payload"' not in head
        if b'"type":"response_item"' in head:
            if b'"type":"function_call' in head or b'"type":"custom_tool_call' in head:
                return True
            if b'"type":"message"' in head and b'"role":"assistant"' in head:
                return b"#lesson" in line or wants_text
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
        _bound(self.pending)
        return out

    def _output(self, payload: dict[str, Any], time: str) -> list[Event]:
        call = self.pending.pop(str(payload.get("call_id", "")), None)
        if call is None:
            return []
        output = payload.get("output")
        text = output if isinstance(output, str) else _result_text(output)
        if isinstance(call, dict):  # a poll of a command still running
            command = self.running.get(call["stdin"])
            if command is None:
                return []
            key = call["stdin"]
        else:
            command, key = call, ""
        code_match = _EXITED.search(text[:300])
        running = _RUNNING.search(text[:300])
        if running and not code_match:
            self.running[running.group(1)] = command
            _bound(self.running)
            return []
        self.running.pop(key, None)
        if text.startswith('{"output"'):
            try:
                data = json.loads(text)
                code = data.get("metadata", {}).get("exit_code")
                text = f"Process exited with code {code}\n{data.get('output', '')}"
            except (ValueError, AttributeError):
                pass
        status, code, timed_out = mining.result_status(text, False)
        if status == "ok" and not _EXITED.search(text[:300]):
            status = "unknown"
        body = text.split("\nOutput:\n", 1)[-1]
        return [Event("tool", time, _clip(body), "exec_command", command, (), status, code, timed_out)]


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


# ---- reading only what is new ----------------------------------------------------------------


@dataclass
class Stats:
    """What one scan read and found."""

    files: int = 0
    files_read: int = 0
    restarted: int = 0
    bytes_read: int = 0
    lines: int = 0
    parsed: int = 0
    malformed: int = 0
    waiting: int = 0  # files ending in a half-written line
    skipped: dict[str, int] = field(default_factory=dict)  # non-mistakes by kind

    def skip(self, kind: str) -> None:
        self.skipped[kind] = self.skipped.get(kind, 0) + 1


def _head_hash(handle: BinaryIO, size: int) -> str:
    handle.seek(0)
    return hashlib.sha1(handle.read(min(size, HEAD_BYTES))).hexdigest()


def _lines(handle: BinaryIO, stats: Stats) -> Iterator[tuple[bytes, int]]:
    """Complete lines from the handle's position, each with the offset just after it."""
    pos = handle.tell()
    buf = b""
    dropping = False
    while True:
        data = handle.read(CHUNK)
        if not data:
            break
        if dropping:
            cut = data.find(b"\n")
            if cut < 0:
                pos += len(data)
                continue
            pos += cut + 1
            data = data[cut + 1 :]
            dropping = False
        buf = buf + data if buf else data
        parts = buf.split(b"\n")
        buf = parts.pop()
        for line in parts:
            pos += len(line) + 1
            yield line, pos
        if len(buf) > MAX_LINE:
            stats.malformed += 1
            pos += len(buf)
            buf = b""
            dropping = True
    if buf.strip() and not dropping:
        # No newline yet: a complete JSON object is a finished last line, anything else is half-written.
        try:
            complete = isinstance(json.loads(buf), dict)
        except ValueError:
            complete = False
        if complete:
            yield buf, pos + len(buf)
        else:
            stats.waiting += 1


def scan_file(
    path: Path, entry: dict[str, Any] | None, stats: Stats, on_bytes: Callable[[int], None] | None = None
) -> tuple[dict[str, Any], list[Candidate]]:
    """Read what is new in one transcript; return its updated state entry and the candidates found."""
    try:
        st = path.stat()
        handle = open(path, "rb")  # noqa: SIM115 (closed by the `with` below)
    except OSError as exc:
        raise BankError(f"cannot read {path}: {exc.strerror}") from None
    with handle:
        entry = dict(entry or {})
        offset = int(entry.get("offset", 0))
        head = entry.get("head", "")
        replaced = entry and (
            entry.get("inode") != st.st_ino
            or st.st_size < offset
            or (offset and _head_hash(handle, offset) != head)
        )
        if replaced:
            stats.restarted += 1
        if replaced or not entry:
            entry = {"offset": 0, "format": "", "stream": {}, "detector": {}}
            offset = 0
        handle.seek(offset)
        stream: ClaudeStream | CodexStream | None = None
        if entry.get("format") == "codex":
            stream = CodexStream(entry.get("stream"))
        elif entry.get("format") == "claude":
            stream = ClaudeStream(entry.get("stream"))
        detector = Detector(str(path), entry.get("detector"))
        if stream is not None:
            stream.want = detector.wants_result
        found: list[Candidate] = []
        end = offset
        loads = json.loads
        for line, end in _lines(handle, stats):  # noqa: B007 (`end` is read after the loop)
            stats.lines += 1
            if stream is not None and not stream.wanted(line, detector.wants_text):
                continue
            try:
                record = loads(line.decode("utf-8", "replace"))
            except ValueError:
                if line.strip():
                    stats.malformed += 1
                continue
            if not isinstance(record, dict):
                stats.malformed += 1
                continue
            stats.parsed += 1
            if stream is None:
                entry["format"] = sniff(record)
                stream = CodexStream() if entry["format"] == "codex" else ClaudeStream()
                stream.want = detector.wants_result
            for event in stream.events(record):
                detector.session = stream.session or detector.session
                detector.project = stream.cwd or detector.project
                if event.kind == "tool" and event.status in ("denied", "rejected", "interrupted", "invalid"):
                    stats.skip(event.status)
                found.extend(detector.feed(event))
        if detector.masked:
            stats.skipped["masked"] = stats.skipped.get("masked", 0) + detector.masked
        read = end - offset
        stats.bytes_read += read
        if read:
            stats.files_read += 1
        if on_bytes is not None:
            on_bytes(max(0, st.st_size - offset))
        entry["offset"] = end
        entry["size"] = st.st_size
        entry["mtime_ns"] = st.st_mtime_ns
        entry["inode"] = st.st_ino
        entry["head"] = _head_hash(handle, end) if end else ""
        entry["stream"] = stream.state() if stream is not None else {}
        entry["detector"] = detector.state()
    return entry, found


def unchanged(path: Path, entry: dict[str, Any] | None) -> bool:
    """Whether a file is exactly as the last scan left it (size, mtime, inode), so it needs no read."""
    if not entry:
        return False
    try:
        st = path.stat()
    except OSError:
        return False
    return (
        st.st_size == entry.get("size")
        and st.st_mtime_ns == entry.get("mtime_ns")
        and st.st_ino == entry.get("inode")
    )


def scan_files(
    paths: list[Path], state: dict[str, Any], on_bytes: Callable[[int], None] | None = None
) -> tuple[list[Candidate], Stats]:
    """Scan each file from where the last scan stopped; `state` (per-file entries) is updated in place."""
    stats = Stats(files=len(paths))
    files: dict[str, Any] = state.setdefault("files", {})
    state["version"] = STATE_VERSION
    found: list[Candidate] = []
    for path in paths:
        key = str(path)
        if unchanged(path, files.get(key)):
            continue
        files[key], more = scan_file(path, files.get(key), stats, on_bytes)
        found.extend(more)
    return found, stats


def pending_bytes(paths: list[Path], state: dict[str, Any]) -> int:
    """How many bytes the next scan will read at most (for the progress bar)."""
    files = state.get("files", {})
    total = 0
    for path in paths:
        entry = files.get(str(path))
        if unchanged(path, entry):
            continue
        try:
            total += max(0, os.path.getsize(path) - int((entry or {}).get("offset", 0)))
        except OSError:
            continue
    return total
