"""A scripted stand-in for the Anthropic Messages API, served on 127.0.0.1 for the real CLI."""

from __future__ import annotations

import itertools
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

SIDE_REPLY = "ok"
FALLBACK_REPLY = "Done."


@dataclass(frozen=True)
class Text:
    """An assistant turn that ends the turn with this text."""

    text: str


@dataclass(frozen=True)
class Bash:
    """An assistant turn that calls the Bash tool with this command."""

    command: str
    description: str = "run a command"


@dataclass(frozen=True)
class Read:
    """An assistant turn that calls the Read tool on this file (Claude Code only)."""

    file_path: str


Step = Text | Bash | Read


@dataclass
class Recorded:
    """One HTTP request the CLI sent, with its parsed JSON body (None when it had none)."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    main: bool = False


def is_main(body: Any) -> bool:
    """True for a request of the scripted conversation: a Messages call that offers Bash."""
    if not isinstance(body, dict):
        return False
    tools = body.get("tools") or []
    return any(isinstance(t, dict) and t.get("name") == "Bash" for t in tools)


def assistant_turns(body: dict[str, Any]) -> int:
    """How many assistant turns the conversation in this request already holds."""
    return sum(1 for m in body.get("messages", []) if m.get("role") == "assistant")


def step_blocks(step: Step, ids: itertools.count[int]) -> tuple[list[dict[str, Any]], str]:
    """The content blocks and stop reason of one scripted step."""
    if isinstance(step, Text):
        return [{"type": "text", "text": step.text}], "end_turn"
    block: dict[str, Any] = {"type": "tool_use", "id": f"toolu_e2e_{next(ids):04d}"}
    if isinstance(step, Read):
        block.update(name="Read", input={"file_path": step.file_path})
    else:
        block.update(name="Bash", input={"command": step.command, "description": step.description})
    return [block], "tool_use"


def message(model: str, blocks: list[dict[str, Any]], stop: str, n: int) -> dict[str, Any]:
    """A complete non-streaming Messages API response."""
    return {
        "id": f"msg_e2e_{n:04d}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": blocks,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 5},
    }


def sse(event: str | None, data: dict[str, Any]) -> str:
    """One server-sent event (Gemini's carry no event line)."""
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data)}\n\n"


def serve_local(handler: type[BaseHTTPRequestHandler]) -> ThreadingHTTPServer:
    """Listen on a free port of 127.0.0.1 in a daemon thread."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd


def stop_local(httpd: ThreadingHTTPServer | None) -> None:
    """Stop a server serve_local started (nothing when it is None)."""
    if httpd is not None:
        httpd.shutdown()
        httpd.server_close()


def read_body(request: BaseHTTPRequestHandler) -> Any:
    """A request's JSON body (its text when it is not JSON, None when empty)."""
    length = int(request.headers.get("Content-Length") or 0)
    raw = request.rfile.read(length) if length else b""
    if not raw:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return raw.decode("utf-8", "replace")


def stream(model: str, blocks: list[dict[str, Any]], stop: str, n: int) -> bytes:
    """The same response as the streaming event sequence the SDK parses."""
    start = message(model, [], None, n)  # type: ignore[arg-type]
    start["stop_reason"] = None
    start["usage"] = {"input_tokens": 10, "output_tokens": 1}
    out = [sse("message_start", {"type": "message_start", "message": start})]
    for i, block in enumerate(blocks):
        first: dict[str, Any]
        if block["type"] == "text":
            first = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        else:
            first = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        out.append(
            sse(
                "content_block_start",
                {"type": "content_block_start", "index": i, "content_block": first},
            )
        )
        out.append(sse("content_block_delta", {"type": "content_block_delta", "index": i, "delta": delta}))
        out.append(sse("content_block_stop", {"type": "content_block_stop", "index": i}))
    out.append(
        sse(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": 5},
            },
        )
    )
    out.append(sse("message_stop", {"type": "message_stop"}))
    return "".join(out).encode()


@dataclass
class ModelServer:
    """Plays the model: main requests get the scripted step for their turn, others a short text."""

    steps: list[Step] = field(default_factory=list)
    requests: list[Recorded] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._ids = itertools.count()
        self._msgs = itertools.count()
        self._httpd: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        """The base URL to hand the CLI as ANTHROPIC_BASE_URL."""
        assert self._httpd is not None, "server not started"
        return f"http://127.0.0.1:{self._httpd.server_port}"

    def start(self) -> ModelServer:
        """Listen on a free port of 127.0.0.1 in a daemon thread."""
        self._httpd = serve_local(_handler(self))
        return self

    def stop(self) -> None:
        """Stop listening."""
        stop_local(self._httpd)
        self._httpd = None

    def __enter__(self) -> ModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def record(self, rec: Recorded) -> None:
        """Keep one request for the test to inspect."""
        with self._lock:
            self.requests.append(rec)

    def reply(self, body: dict[str, Any]) -> tuple[list[dict[str, Any]], str, int]:
        """Blocks, stop reason and message number answering one Messages request."""
        with self._lock:
            n = next(self._msgs)
            if not is_main(body):
                return [{"type": "text", "text": SIDE_REPLY}], "end_turn", n
            turn = assistant_turns(body)
            step = self.steps[turn] if turn < len(self.steps) else Text(FALLBACK_REPLY)
            blocks, stop = step_blocks(step, self._ids)
            return blocks, stop, n


def _handler(server: ModelServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            pass  # the recorded requests are the log

        def _send(self, status: int, payload: bytes, ctype: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(payload)))
            self.send_header("request-id", "req_e2e")
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(payload)

        def _json(self, data: dict[str, Any], status: int = 200) -> None:
            self._send(status, json.dumps(data).encode(), "application/json")

        def do_HEAD(self) -> None:  # noqa: N802
            server.record(Recorded("HEAD", self.path, dict(self.headers), None))
            self._send(200, b"", "text/plain")

        def do_GET(self) -> None:  # noqa: N802
            server.record(Recorded("GET", self.path, dict(self.headers), None))
            if self.path.split("?")[0].rstrip("/").endswith("/v1/models"):
                self._json({"data": [], "has_more": False, "first_id": None, "last_id": None})
            else:
                self._json({})

        def do_POST(self) -> None:  # noqa: N802
            body = read_body(self)
            path = self.path.split("?")[0]
            main = path.endswith("/v1/messages") and is_main(body)
            server.record(Recorded("POST", self.path, dict(self.headers), body, main))
            if path.endswith("/count_tokens"):
                self._json({"input_tokens": 10})
                return
            if not path.endswith("/v1/messages") or not isinstance(body, dict):
                self._json({})
                return
            blocks, stop, n = server.reply(body)
            model = str(body.get("model") or "claude-e2e")
            if body.get("stream"):
                self._send(200, stream(model, blocks, stop, n), "text/event-stream")
            else:
                self._json(message(model, blocks, stop, n))

    return Handler
