"""Agent transcripts on disk: where they are, reading only new bytes, Claude Code, Codex, Copilot CLI
and Gemini CLI records ($CODEX_HOME, $COPILOT_HOME and $GEMINI_CLI_HOME honoured)."""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from json.scanner import make_scanner
from pathlib import Path
from typing import Any, BinaryIO

from lessonbank.errors import BankError
from lessonbank.scan import streams
from lessonbank.scan.detect import Detector
from lessonbank.scan.events import Candidate
from lessonbank.scan.parse import LONG_USER_LINE
from lessonbank.scan.streams import AnyStream, copilot_cwd, copilot_files, gemini_files

CHUNK = 1 << 18  # small enough to stay in cache while its lines are searched (1 MB reads ran 3x slower)
MAX_LINE = 64 << 20  # a longer line is skipped (counted malformed) without being held in memory
HEAD_BYTES = 1024  # hashed to notice a file replaced in place
STATE_VERSION = 1
_CLOSED = (b"}", b"}\r")
_SCAN_ONCE = make_scanner(json.JSONDecoder())  # type: ignore[arg-type]  # the scanner json.loads runs


# ---- where transcripts live ----------------------------------------------------------------


def claude_root() -> Path:
    return Path.home() / ".claude" / "projects"


def codex_root() -> Path:
    return Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex") / "sessions"


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
        found += codex_files() + copilot_files() + gemini_files()
    else:
        project = cwd.resolve()
        found = claude_files(claude_project_dir(project))
        for path, cwd_of in [(p, codex_cwd) for p in codex_files()] + [(p, copilot_cwd) for p in copilot_files()]:
            key = str(path)
            if key not in cache:
                cache[key] = cwd_of(path)
            if cache[key] and _inside(cache[key], project):
                found.append(path)
        found += gemini_files(project)
    return found


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
    succeeded: dict[str, list[str]] = field(default_factory=dict)  # session -> shell calls that succeeded (not kept)

    def skip(self, kind: str, count: int = 1) -> None:
        self.skipped[kind] = self.skipped.get(kind, 0) + count


def _head_hash(handle: BinaryIO, size: int) -> str:
    handle.seek(0)
    return hashlib.sha1(handle.read(min(size, HEAD_BYTES))).hexdigest()


class _Lines:
    """Complete lines from a handle's position, as (buffer, start, stop): the line is buffer[start:stop].

    Lines inside a chunk are never copied, only one cut by a chunk's end. Once `wanted` is set, the lines it
    turns down are counted and skipped here, without a trip through the caller's loop."""

    def __init__(self, handle: BinaryIO, stats: Stats, detector: Detector, dropping: bool = False) -> None:
        self.handle, self.stats, self.detector = handle, stats, detector
        self.wanted: Callable[[bytes, int, int, bool], bool] | None = None
        self.end = handle.tell()  # offset just after the last complete line (set when the lines run out)
        # Inside an oversized line already counted: skip to its newline (also across scans).
        self.dropping = dropping

    def _keep(self, buf: bytes, start: int, stop: int) -> bool:
        wanted = self.wanted
        if wanted is None or wanted(buf, start, stop, self.detector.wants_text):
            return True
        if not buf.startswith(b"{", start, stop) or not buf.endswith(_CLOSED, start, stop):
            self.stats.malformed += bool(buf[start:stop].strip())  # cut short: worth counting, not parsing
        return False

    def __iter__(self) -> Iterator[tuple[bytes, int, int]]:
        stats, detector, keep = self.stats, self.detector, self._keep
        pos = end = self.handle.tell()  # file offset of the next chunk; just after the last complete line
        pieces: list[bytes] = []  # an unfinished line, kept as pieces so only it is ever joined
        held = lines = 0
        dropping = self.dropping
        read = self.handle.read
        while True:
            data = read(CHUNK)
            if not data:
                break
            base, size = pos, len(data)
            pos += size
            find = data.find
            at = 0
            if dropping:
                cut = find(b"\n")
                if cut < 0:
                    continue
                at = cut + 1
                dropping = False
            cut = find(b"\n", at)
            if cut >= 0 and pieces:
                pieces.append(data[at:cut])
                line = b"".join(pieces)
                pieces, held = [], 0
                lines += 1
                end = base + cut + 1
                if keep(line, 0, len(line)):
                    yield line, 0, len(line)
                at = cut + 1
                cut = find(b"\n", at)
            first = at
            while cut >= 0:
                # keep() written out: this runs for every line
                wanted = self.wanted
                if wanted is None or wanted(data, at, cut, detector.wants_text):
                    yield data, at, cut
                elif not data.startswith(b"{", at, cut) or not data.endswith(_CLOSED, at, cut):
                    stats.malformed += bool(data[at:cut].strip())
                lines += 1
                at = cut + 1
                cut = find(b"\n", at)
            if at != first:
                end = base + at
            if at < size:
                pieces.append(data[at:] if at else data)
                held += size - at
                if held > MAX_LINE:
                    stats.malformed += 1
                    pieces, held = [], 0
                    dropping = True
        tail = b"".join(pieces)
        if dropping:
            # The oversized line has no end yet: resume past what was read, still dropping, so it
            # is neither read nor counted again.
            end = pos
        self.dropping = dropping
        if tail.strip() and not dropping:
            # No newline yet: a complete JSON object is a finished last line, anything else is half-written.
            try:
                complete = isinstance(json.loads(tail), dict)
            except ValueError:
                complete = False
            if complete:
                lines += 1
                end = pos
                if keep(tail, 0, len(tail)):
                    yield tail, 0, len(tail)
            else:
                stats.waiting += 1
        stats.lines += lines
        self.end = end


_SPACED = re.compile(rb'(?<!\\)"\s*:\s+["{\[0-9tfn-]')


def spaced(line: bytes) -> bool:
    """Whether a transcript is written with spaces after its colons (`"type": "assistant"`):
    the streams' byte filters look for the compact form that the agents write, so such a file
    is parsed line by line without them (slower, nothing missed)."""
    return _SPACED.search(line, 0, 400) is not None


def _parse(text: str) -> Any:
    """json.loads(text) without its Python layers around the scanner (a few µs a line); ValueError if not JSON."""
    if not text or text[0] in " \t\n\r":
        return json.loads(text)
    try:
        value, end = _SCAN_ONCE(text, 0)
    except StopIteration:
        raise ValueError("not JSON") from None
    if end != len(text) and text[end:].strip(" \t\n\r"):
        raise ValueError("extra data after the JSON value")
    return value


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
        stream: AnyStream | None = streams.make(str(entry.get("format")), entry.get("stream"))
        detector = Detector(str(path), entry.get("detector"))
        if stream is not None:
            stream.want = detector.wants_result
        found: list[Candidate] = []
        parse = _parse
        reader = _Lines(handle, stats, detector, dropping=bool(entry.get("dropping")))
        if stream is not None and not entry.get("spaced"):
            reader.wanted = stream.wanted
        for buf, start, stop in reader:
            line = buf[start:stop] if start or stop != len(buf) else buf
            if stop - start > LONG_USER_LINE and stream is not None:
                line = stream.trim(line)
            try:
                record = parse(line.decode("utf-8", "replace"))
            except ValueError:
                if line.strip():
                    stats.malformed += 1
                continue
            if not isinstance(record, dict):
                stats.malformed += 1
                continue
            stats.parsed += 1
            if stream is None:
                entry["format"], stream = streams.for_record(record)
                stream.want = detector.wants_result
                entry["spaced"] = spaced(line)
                if not entry["spaced"]:
                    reader.wanted = stream.wanted
            for event in stream.events(record):
                detector.session = stream.session or detector.session
                detector.project = stream.cwd or detector.project
                if event.kind == "tool" and event.status in ("denied", "rejected", "interrupted", "invalid"):
                    stats.skip(event.status)
                elif event.kind == "user" and event.text.startswith("[Request interrupted"):
                    stats.skip("interrupted")
                found.extend(detector.feed(event))
        end = reader.end
        found.extend(detector.flush())  # failures still waiting for a way round end with what was read
        stats.succeeded.setdefault(detector.session or str(path), []).extend(detector.succeeded)
        for cand in found:  # whose transcript: the #lesson protocol's compliance is counted per agent
            cand.evidence[0].setdefault("agent", str(entry.get("format") or ""))
        if detector.masked:
            stats.skip("masked", detector.masked)
        for why, count in detector.dropped.items():
            stats.skip(why, count)
        for kind, count in stream.unread.items() if stream is not None else ():
            stats.skip(kind, count)
        read = end - offset
        stats.bytes_read += read
        if read:
            stats.files_read += 1
        if on_bytes is not None:
            on_bytes(max(0, st.st_size - offset))
        entry["offset"] = end
        entry["dropping"] = reader.dropping
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
    if state.get("version", STATE_VERSION) != STATE_VERSION:
        state.clear()  # kept by another version: read everything again (merging is idempotent)
    files: dict[str, Any] = state.setdefault("files", {})
    state["version"] = STATE_VERSION
    for gone in [key for key in files if not os.path.exists(key)]:
        del files[gone]  # a new file at that path is a new transcript
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
