"""A scripted stand-in for the OpenAI Responses API (Codex, Copilot CLI), Chat Completions (Qwen Code)
and Gemini's streamGenerateContent, served over SSE on 127.0.0.1 for the real CLIs.

The same script (model_server's `Bash` and `Text` steps) plays for each: a main request (one that
offers a shell tool) gets the step for the number of model turns its input already holds; any
other request gets a short text. Every request is recorded for the test to read.
"""

from __future__ import annotations

import itertools
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from .model_server import Bash, Recorded, Step, Text, read_body, serve_local, sse, stop_local

SHELL_TOOLS = ("exec_command", "shell", "bash", "run_shell_command")
FALLBACK_REPLY = "Done."


def tool_names(body: Any) -> list[str]:
    """Names of the function tools a request offers (Responses or Gemini shape)."""
    if not isinstance(body, dict):
        return []
    names = []
    for tool in body.get("tools") or []:
        if not isinstance(tool, dict):
            continue
        if "name" in tool:
            names.append(str(tool["name"]))
        names.extend(str(d.get("name")) for d in tool.get("functionDeclarations") or [] if isinstance(d, dict))
        inner = tool.get("function")
        if isinstance(inner, dict):
            names.append(str(inner.get("name")))
    return names


def shell_tool(body: Any) -> str | None:
    names = tool_names(body)
    return next((t for t in SHELL_TOOLS if t in names), None)


def model_turns(body: dict[str, Any]) -> int:
    """How many model turns the request's conversation already holds."""
    if "contents" in body:  # Gemini
        return sum(1 for c in body["contents"] if isinstance(c, dict) and c.get("role") == "model")
    if "messages" in body:  # Chat Completions
        return sum(1 for m in body["messages"] if isinstance(m, dict) and m.get("role") == "assistant")
    count = 0
    for item in body.get("input") or []:
        if not isinstance(item, dict):
            continue
        if item.get("type") == "function_call" or item.get("role") == "assistant":
            count += 1
    return count


def shell_arguments(tool: str, command: str) -> dict[str, Any]:
    if tool == "exec_command":
        # Codex runs commands through `bash -lc` unless told otherwise; the login shell resets PATH.
        return {"cmd": command, "login": False}
    if tool == "shell":
        return {"command": ["bash", "-c", command]}
    return {"command": command, "description": "run a command"}


def responses_stream(step: Step | None, tool: str | None, n: int, call: int) -> bytes:
    """The Responses API event sequence for one scripted step (text when `step` is None)."""
    rid = f"resp_e2e_{n}"
    if isinstance(step, Bash) and tool:
        item: dict[str, Any] = {
            "type": "function_call",
            "id": f"fc_e2e_{call}",
            "call_id": f"call_e2e_{call}",
            "name": tool,
            "arguments": json.dumps(shell_arguments(tool, step.command)),
            "status": "completed",
        }
    else:
        text = step.text if isinstance(step, Text) else FALLBACK_REPLY
        item = {
            "type": "message",
            "id": f"msg_e2e_{n}",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}],
        }
    base = {"id": rid, "object": "response", "created_at": 0, "model": "e2e", "status": "in_progress", "output": []}
    out = [sse("response.created", {"type": "response.created", "response": base})]
    added = dict(item, status="in_progress")
    if item["type"] == "message":
        added["content"] = []
    elif item["type"] == "function_call":
        added["arguments"] = ""
    out.append(sse("response.output_item.added", {"type": "response.output_item.added", "output_index": 0, "item": added}))
    if item["type"] == "function_call":
        out.append(
            sse(
                "response.function_call_arguments.delta",
                {"type": "response.function_call_arguments.delta", "item_id": item["id"], "output_index": 0, "delta": item["arguments"]},
            )
        )
        out.append(
            sse(
                "response.function_call_arguments.done",
                {"type": "response.function_call_arguments.done", "item_id": item["id"], "output_index": 0, "arguments": item["arguments"]},
            )
        )
    else:
        part = {"type": "output_text", "text": "", "annotations": []}
        text = item["content"][0]["text"]
        out.append(
            sse(
                "response.content_part.added",
                {"type": "response.content_part.added", "item_id": item["id"], "output_index": 0, "content_index": 0, "part": part},
            )
        )
        out.append(
            sse(
                "response.output_text.delta",
                {"type": "response.output_text.delta", "item_id": item["id"], "output_index": 0, "content_index": 0, "delta": text},
            )
        )
        out.append(
            sse(
                "response.output_text.done",
                {"type": "response.output_text.done", "item_id": item["id"], "output_index": 0, "content_index": 0, "text": text},
            )
        )
        out.append(
            sse(
                "response.content_part.done",
                {"type": "response.content_part.done", "item_id": item["id"], "output_index": 0, "content_index": 0, "part": dict(part, text=text)},
            )
        )
    out.append(sse("response.output_item.done", {"type": "response.output_item.done", "output_index": 0, "item": item}))
    usage = {
        "input_tokens": 10,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 5,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 15,
    }
    done = dict(base, status="completed", output=[item], usage=usage)
    out.append(sse("response.completed", {"type": "response.completed", "response": done}))
    return "".join(out).encode()


def gemini_stream(step: Step | None, tool: str | None) -> bytes:
    """Gemini's streamGenerateContent?alt=sse answer for one scripted step."""
    if isinstance(step, Bash) and tool:
        part: dict[str, Any] = {"functionCall": {"name": tool, "args": shell_arguments(tool, step.command)}}
    else:
        part = {"text": step.text if isinstance(step, Text) else FALLBACK_REPLY}
    chunk = {
        "candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
        "modelVersion": "gemini-2.5-flash",
    }
    return sse(None, chunk).encode()


def chat_stream(step: Step | None, tool: str | None, n: int, call: int) -> bytes:
    """The Chat Completions streaming answer (`chat.completion.chunk` events) for one scripted step."""
    base = {"id": f"chatcmpl-e2e-{n}", "object": "chat.completion.chunk", "created": 0, "model": "e2e"}
    if isinstance(step, Bash) and tool:
        arguments = json.dumps(shell_arguments(tool, step.command))
        function = {"name": tool, "arguments": arguments}
        delta: dict[str, Any] = {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"index": 0, "id": f"call_e2e_{call}", "type": "function", "function": function}],
        }
        finish = "tool_calls"
    else:
        delta = {"role": "assistant", "content": step.text if isinstance(step, Text) else FALLBACK_REPLY}
        finish = "stop"
    usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    chunks = [
        dict(base, choices=[{"index": 0, "delta": delta, "finish_reason": None}]),
        dict(base, choices=[{"index": 0, "delta": {}, "finish_reason": finish}]),
        dict(base, choices=[], usage=usage),
    ]
    return ("".join(sse(None, chunk) for chunk in chunks) + "data: [DONE]\n\n").encode()


def chat_message(step: Step | None, tool: str | None, n: int, call: int) -> bytes:
    """The same answer, not streamed (a `chat.completion`)."""
    if isinstance(step, Bash) and tool:
        function = {"name": tool, "arguments": json.dumps(shell_arguments(tool, step.command))}
        message: dict[str, Any] = {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": f"call_e2e_{call}", "type": "function", "function": function}],
        }
        finish = "tool_calls"
    else:
        message = {"role": "assistant", "content": step.text if isinstance(step, Text) else FALLBACK_REPLY}
        finish = "stop"
    data = {
        "id": f"chatcmpl-e2e-{n}",
        "object": "chat.completion",
        "created": 0,
        "model": "e2e",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }
    return json.dumps(data).encode()


@dataclass
class ScriptedServer:
    """Plays the script for Responses-API and Gemini clients; records every request."""

    steps: list[Step] = field(default_factory=list)
    requests: list[Recorded] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._n = itertools.count()
        self._calls = itertools.count()
        self._httpd: ThreadingHTTPServer | None = None

    @property
    def port(self) -> int:
        assert self._httpd is not None, "server not started"
        return int(self._httpd.server_port)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> ScriptedServer:
        self._httpd = serve_local(_handler(self))
        return self

    def __exit__(self, *exc: object) -> None:
        stop_local(self._httpd)
        self._httpd = None

    def step_for(self, body: dict[str, Any]) -> tuple[Step | None, str | None, int, int]:
        with self._lock:
            n, call = next(self._n), next(self._calls)
            tool = shell_tool(body)
            if tool is None:
                return None, None, n, call
            turn = model_turns(body)
            return (self.steps[turn] if turn < len(self.steps) else None), tool, n, call


def _handler(server: ScriptedServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            pass

        def _send(self, status: int, payload: bytes, ctype: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def do_GET(self) -> None:  # noqa: N802
            server.requests.append(Recorded("GET", self.path, dict(self.headers), None))
            if self.path.split("?")[0].rstrip("/").endswith("/models"):
                models = [{"id": "gpt-5", "object": "model", "created": 0, "owned_by": "e2e"}]
                self._send(200, json.dumps({"object": "list", "data": models, "models": []}).encode(), "application/json")
            else:
                self._send(200, b"{}", "application/json")

        def do_POST(self) -> None:  # noqa: N802
            body = read_body(self)
            path = self.path.split("?")[0]
            main = shell_tool(body) is not None
            server.requests.append(Recorded("POST", self.path, dict(self.headers), body, main))
            if not isinstance(body, dict):
                self._send(200, b"{}", "application/json")
                return
            step, tool, n, call = server.step_for(body)
            if ":streamGenerateContent" in path:
                self._send(200, gemini_stream(step, tool), "text/event-stream")
            elif ":generateContent" in path:
                part = {"text": step.text if isinstance(step, Text) else FALLBACK_REPLY}
                data = {"candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP"}]}
                self._send(200, json.dumps(data).encode(), "application/json")
            elif ":countTokens" in path:
                self._send(200, b'{"totalTokens": 10}', "application/json")
            elif path.endswith("/chat/completions"):
                if body.get("stream"):
                    self._send(200, chat_stream(step, tool, n, call), "text/event-stream")
                else:
                    self._send(200, chat_message(step, tool, n, call), "application/json")
            elif path.endswith("/responses"):
                self._send(200, responses_stream(step, tool, n, call), "text/event-stream")
            else:
                self._send(200, b"{}", "application/json")

    return Handler
