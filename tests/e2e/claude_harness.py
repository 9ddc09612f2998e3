"""Run the real Claude Code CLI against a scripted model server; read what reached the model."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lessonbank.install import launcher

from .model_server import ModelServer, Recorded, Step

REPO = Path(__file__).resolve().parents[2]
# .ci/install-claude puts the platform's native binary below here (claude-code-linux-x64 on CI).
INSTALLED = REPO / ".cache/claude-code/node_modules/@anthropic-ai"
REMINDER = re.compile(r"<system-reminder>\s*(.*?)\s*</system-reminder>", re.DOTALL)

# The machine (and CI) has no internet: anything but the model server would hang or fail.
QUIET_ENV = {
    "ANTHROPIC_API_KEY": "dummy",
    "IS_SANDBOX": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_BUG_COMMAND": "1",
    "DISABLE_NON_ESSENTIAL_MODEL_CALLS": "1",
    "CLAUDE_CODE_DISABLE_TERMINAL_TITLE": "1",
}
PASSED_THROUGH = (
    "XDG_DATA_HOME",  # the user's data folder, where `bank install` put this machine's hook launcher
    "PATH",
    "LANG",
    "LC_ALL",
    "TMPDIR",
    "PYENV_VERSION",
    "PYENV_ROOT",
    "GIT_CONFIG_GLOBAL",
    "GIT_CONFIG_NOSYSTEM",
    "GIT_AUTHOR_NAME",
    "GIT_AUTHOR_EMAIL",
    "GIT_COMMITTER_NAME",
    "GIT_COMMITTER_EMAIL",
)


Runner = Callable[..., "ClaudeRun"]


def find_claude() -> Path | None:
    """The Claude Code binary: $CLAUDE_CODE_BIN, else the copy .ci/install-claude put in .cache."""
    given = os.environ.get("CLAUDE_CODE_BIN")
    candidates = [Path(given)] if given else sorted(INSTALLED.glob("claude-code-*/claude"))
    return next((c for c in candidates if c.is_file() and os.access(c, os.X_OK)), None)


def _blocks(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content or [] if isinstance(b, dict)]


def _texts(message: Mapping[str, Any]) -> Iterator[str]:
    for block in _blocks(message):
        if block.get("type") == "text":
            yield str(block.get("text", ""))
        elif block.get("type") == "tool_result":
            inner = block.get("content")
            if isinstance(inner, str):
                yield inner
            elif isinstance(inner, list):
                yield from (str(b.get("text", "")) for b in inner if b.get("type") == "text")


def _unique(items: Iterator[str]) -> list[str]:
    return list(dict.fromkeys(items))


@dataclass(frozen=True)
class ToolCall:
    """One Bash call as the model saw it: the command, its result and the reminders beside it."""

    command: str
    output: str
    is_error: bool
    reminders: list[str]

    def contexts(self, event: str) -> list[str]:
        """Reminders from this event's hooks, without the "<event>:<tool> hook …" prefix."""
        marker = re.compile(rf"^{re.escape(event)}(?::\w+)? hook additional context: ")
        return [marker.sub("", r) for r in self.reminders if marker.match(r)]


@dataclass
class CliRun:
    """One finished agent CLI run: its output and every request the scripted server saw."""

    args: list[str]
    returncode: int
    stdout: str
    stderr: str
    requests: list[Recorded]
    seconds: float
    home: Path

    @property
    def main_requests(self) -> list[dict[str, Any]]:
        """Bodies of the scripted conversation's requests (those the server marks main), in order."""
        return [r.body for r in self.requests if r.main]

    def everything(self) -> str:
        """All main requests as one JSON string, for 'this text never reached the model'."""
        return json.dumps(self.main_requests)


@dataclass
class ClaudeRun(CliRun):
    """One finished Claude Code run."""

    @property
    def result(self) -> dict[str, Any]:
        """The `--output-format json` result object."""
        return dict(json.loads(self.stdout))

    @property
    def side_requests(self) -> list[Recorded]:
        """Every other request (probes, side model calls)."""
        return [r for r in self.requests if not r.main]

    def messages(self) -> list[dict[str, Any]]:
        """The conversation as the last main request carried it (it holds all earlier turns)."""
        mains = self.main_requests
        return list(mains[-1]["messages"]) if mains else []

    def _all_messages(self) -> Iterator[dict[str, Any]]:
        for body in self.main_requests:
            yield from body.get("messages", [])

    def system_prompts(self) -> list[str]:
        """System text: the top-level system blocks and the mid-conversation system messages."""

        def gen() -> Iterator[str]:
            for body in self.main_requests:
                system = body.get("system")
                if isinstance(system, str):
                    yield system
                elif isinstance(system, list):
                    yield from (str(b.get("text", "")) for b in system if isinstance(b, dict))
                for m in body.get("messages", []):
                    if m.get("role") == "system":
                        yield from _texts(m)

        return _unique(gen())

    def _user_messages(self) -> Iterator[dict[str, Any]]:
        return (m for m in self._all_messages() if m.get("role") == "user")

    def reminders(self) -> list[str]:
        """Every `<system-reminder>` body in user messages, without the tags."""
        return _unique(r for m in self._user_messages() for t in _texts(m) for r in REMINDER.findall(t))

    def user_texts(self) -> list[str]:
        """Text blocks of user messages that are not system reminders (prompt, hook feedback)."""
        texts = (
            str(b.get("text", ""))
            for m in self._user_messages()
            for b in _blocks(m)
            if b.get("type") == "text"
        )
        return _unique(t for t in texts if t and not REMINDER.fullmatch(t.strip()))

    def hook_chunks(self, event: str) -> list[str]:
        """Text after each "<event> hook additional context: " marker the model received.

        The CLI joins SessionStart/UserPromptSubmit context with other attachments by blank
        lines in one system message, so a chunk starts with the hook's text but may run on.
        """
        marker = re.compile(rf"{re.escape(event)}(?::\w+)? hook additional context: ")
        return [c for t in self.system_prompts() + self.reminders() for c in marker.split(t)[1:]]

    def hook_contexts(self, event: str) -> list[str]:
        """Exact contexts this event's hooks returned (per the transcript) that the model got."""
        seen = "\n".join(self.system_prompts() + self.reminders())
        found = []
        for att in self.hook_attachments(event):
            if att.get("type") != "hook_additional_context":
                continue
            for content in att.get("content") or []:
                if f"{att.get('hookName')} hook additional context: {content}" in seen:
                    found.append(str(content))
        return found

    def transcript(self) -> list[dict[str, Any]]:
        """The session transcript the CLI wrote under HOME (empty when there is none)."""
        session = self.result.get("session_id", "") if self.stdout.strip() else ""
        entries: list[dict[str, Any]] = []
        for path in sorted(self.home.glob(f".claude/projects/*/{session}.jsonl")):
            for line in path.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    entries.append(json.loads(line))
        return entries

    def hook_attachments(self, event: str | None = None) -> list[dict[str, Any]]:
        """Hook attachments in the transcript (hook_success, hook_additional_context, ...)."""
        found = []
        for entry in self.transcript():
            att = entry.get("attachment")
            if (
                isinstance(att, dict)
                and str(att.get("type", "")).startswith("hook_")
                and (event is None or att.get("hookEvent") == event)
            ):
                found.append(att)
        return found

    def stop_feedback(self) -> list[str]:
        """Reasons a Stop hook blocked with, as the model saw them."""
        prefix = "Stop hook feedback:"
        return [t[len(prefix) :].strip() for t in self.user_texts() if t.startswith(prefix)]

    def tool_results(self) -> list[dict[str, Any]]:
        """Every tool_result block the model received."""
        return [
            b
            for m in self.messages()
            if m.get("role") == "user"
            for b in _blocks(m)
            if b.get("type") == "tool_result"
        ]

    def calls(self) -> list[ToolCall]:
        """Every tool call in order, with the reminders that came back in the same user message."""
        commands: dict[str, str] = {}
        found = []
        for m in self.messages():
            for block in _blocks(m):
                if block.get("type") == "tool_use":
                    commands[str(block.get("id"))] = str(block.get("input", {}).get("command", ""))
            if m.get("role") != "user":
                continue
            results = [b for b in _blocks(m) if b.get("type") == "tool_result"]
            texts = [str(b.get("text", "")) for b in _blocks(m) if b.get("type") == "text"]
            reminders = [r for t in texts for r in REMINDER.findall(t)]
            for block in results:
                inner = block.get("content")
                output = inner if isinstance(inner, str) else json.dumps(inner)
                command = commands.get(str(block.get("tool_use_id")), "")
                found.append(ToolCall(command, output, bool(block.get("is_error")), reminders))
        return found

    def explain(self) -> str:
        """A readable dump for assertion messages."""
        lines = [f"exit {self.returncode} in {self.seconds:.1f}s", f"stdout: {self.stdout[:2000]}"]
        lines.append(f"stderr: {self.stderr[:2000]}")
        for m in self.messages():
            for block in _blocks(m):
                shown = block.get("text") or block.get("content") or block.get("input")
                lines.append(f"  {m.get('role')}/{block.get('type')}: {str(shown)[:400]!r}")
        return "\n".join(lines)


def run_claude(
    project_dir: Path,
    prompt: str,
    script: Sequence[Step],
    *,
    home: Path,
    env: Mapping[str, str] | None = None,
    timeout: float = 180,
    extra_args: Sequence[str] = (),
) -> ClaudeRun:
    """Run `claude -p` in project_dir with HOME=home while the server plays `script`."""
    binary = find_claude()
    if binary is None:
        raise RuntimeError("Claude Code CLI not installed: run .ci/install-claude")
    home.mkdir(parents=True, exist_ok=True)
    args = [str(binary), "-p", prompt, "--allowedTools", "Bash", "--output-format", "json"]
    args += list(extra_args)
    launcher.write()  # lessonbank is installed on this machine: the committed hooks find it
    with ModelServer(list(script)) as server:
        own = {**QUIET_ENV, "HOME": str(home), "ANTHROPIC_BASE_URL": server.url, **(env or {})}
        proc, seconds = spawn_cli(args, project_dir, own, timeout)
        requests = list(server.requests)
    return ClaudeRun(args, proc.returncode, proc.stdout, proc.stderr, requests, seconds, home)


def spawn_cli(
    args: Sequence[str], project_dir: Path, env: Mapping[str, str], timeout: float, passed: Sequence[str] = PASSED_THROUGH
) -> tuple[subprocess.CompletedProcess[str], float]:
    """Run an agent's CLI headless in project_dir with only `passed` of our environment plus `env`;
    (the finished process, its seconds)."""
    full_env = {k: os.environ[k] for k in passed if k in os.environ}
    # `python3` and `pytest` in the shell tool (and in hooks) are this test run's interpreter.
    full_env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), full_env.get("PATH", os.defpath)])
    full_env.update(env)
    started = time.monotonic()
    proc = subprocess.run(
        list(args),
        cwd=project_dir,
        env=full_env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return proc, time.monotonic() - started
