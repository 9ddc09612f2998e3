"""Run the real Codex, Copilot, Gemini and Qwen Code CLIs against the scripted server; read what reached the model.

Each CLI is installed by its `.ci/install-<agent>` script into `.cache/` (git-ignored); each run
gets a throwaway HOME (and CODEX_HOME / COPILOT_HOME / ~/.gemini / ~/.qwen in it), so nothing
touches the user's own configuration, and talks only to the scripted server on 127.0.0.1.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from lessonbank.install import launcher

from .claude_harness import CliRun, spawn_cli
from .model_server import Step
from .responses_server import ScriptedServer

REPO = Path(__file__).resolve().parents[2]
CACHE = REPO / ".cache"
BINARIES = {
    "codex": ("CODEX_BIN", CACHE / "codex/node_modules/.bin/codex"),
    "copilot": ("COPILOT_BIN", CACHE / "copilot/node_modules/.bin/copilot"),
    "gemini": ("GEMINI_BIN", CACHE / "gemini-cli/node_modules/.bin/gemini"),
    "qwen": ("QWEN_BIN", CACHE / "qwen-code/node_modules/.bin/qwen"),
}
# XDG_DATA_HOME: the user's data folder, where `bank install` put this machine's hook launcher.
PASSED_THROUGH = ("PATH", "LANG", "LC_ALL", "TMPDIR", "PYENV_VERSION", "PYENV_ROOT", "XDG_DATA_HOME")


def find(agent: str) -> Path | None:
    """The agent's CLI: $<AGENT>_BIN, else the copy its .ci/install-<agent> put in .cache."""
    variable, default = BINARIES[agent]
    given = os.environ.get(variable)
    candidate = Path(given) if given else default
    return candidate if candidate.is_file() and os.access(candidate, os.X_OK) else None


@dataclass
class AgentRun(CliRun):
    """One finished Codex, Copilot, Gemini or Qwen Code run; `agent` says which."""

    agent: str = ""

    def texts(self, index: int) -> str:
        """Everything main request `index` carried, as one JSON string."""
        return json.dumps(self.main_requests[index])

    def everything(self) -> str:
        """Every request's body (side requests too) as one JSON string."""
        return json.dumps([r.body for r in self.requests])

    def first_request_with(self, text: str) -> int | None:
        """The index of the first main request that carries `text` (None when none does)."""
        return next((i for i, b in enumerate(self.main_requests) if text in json.dumps(b)), None)

    def explain(self) -> str:
        lines = [f"{self.agent} exit {self.returncode} in {self.seconds:.1f}s"]
        lines.append(f"stdout: {self.stdout[-2500:]}")
        lines.append(f"stderr: {self.stderr[-2500:]}")
        lines.append(f"{len(self.main_requests)} main requests of {len(self.requests)}")
        return "\n".join(lines)


def _codex(binary: Path, home: Path, url: str, project: Path, prompt: str) -> tuple[list[str], dict[str, str]]:
    codex_home = home / ".codex"
    codex_home.mkdir(parents=True, exist_ok=True)
    (codex_home / "config.toml").write_text(
        "\n".join(
            [
                'model = "gpt-5"',
                'model_provider = "fake"',
                "[model_providers.fake]",
                'name = "fake"',
                f'base_url = "{url}/v1"',
                'wire_api = "responses"',
                'env_key = "FAKE_KEY"',
                f"[projects.{json.dumps(str(project))}]",
                'trust_level = "trusted"',
                "",
            ]
        )
    )
    args = [
        str(binary),
        "exec",
        "--dangerously-bypass-hook-trust",
        "--dangerously-bypass-approvals-and-sandbox",
        "--skip-git-repo-check",
        prompt,
    ]
    return args, {"FAKE_KEY": "x", "CODEX_HOME": str(codex_home)}


def _copilot(binary: Path, home: Path, url: str, project: Path, prompt: str) -> tuple[list[str], dict[str, str]]:
    env = {
        "COPILOT_OFFLINE": "true",
        "COPILOT_PROVIDER_BASE_URL": f"{url}/v1",
        "COPILOT_PROVIDER_WIRE_API": "responses",
        "COPILOT_PROVIDER_API_KEY": "x",
        "COPILOT_MODEL": "gpt-5",
        "COPILOT_ALLOW_ALL": "true",
        "COPILOT_AUTO_UPDATE": "false",
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_STATE_HOME": str(home / ".local/state"),
    }
    return [str(binary), "-p", prompt], env


def _gemini(binary: Path, home: Path, url: str, project: Path, prompt: str) -> tuple[list[str], dict[str, str]]:
    settings = home / ".gemini" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"security": {"auth": {"selectedType": "gemini-api-key"}}}))
    env = {
        "GOOGLE_GEMINI_BASE_URL": url,
        "GEMINI_API_KEY": "fake",
        "GEMINI_CLI_TRUST_WORKSPACE": "true",
    }
    return [str(binary), "-m", "gemini-2.5-flash", "--approval-mode", "yolo", "-p", prompt, "-o", "json"], env


def _qwen(binary: Path, home: Path, url: str, project: Path, prompt: str) -> tuple[list[str], dict[str, str]]:
    settings = home / ".qwen" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    quiet = {
        "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
        "telemetry": {"enabled": False},
        "privacy": {"usageStatisticsEnabled": False},
    }
    settings.write_text(json.dumps(quiet))
    args = [
        str(binary),
        "--auth-type", "openai",
        "--openai-base-url", f"{url}/v1",
        "--openai-api-key", "x",
        "-m", "e2e-model",
        "--approval-mode", "yolo",
        "-o", "json",
        "-p", prompt,
    ]  # fmt: skip
    return args, {"QWEN_CODE_SUPPRESS_YOLO_WARNING": "1"}


LAUNCH = {"codex": _codex, "copilot": _copilot, "gemini": _gemini, "qwen": _qwen}


def run_agent(
    agent: str,
    project_dir: Path,
    prompt: str,
    script: Sequence[Step],
    *,
    home: Path,
    env: Mapping[str, str] | None = None,
    timeout: float = 180,
) -> AgentRun:
    """Run the agent's CLI headless in project_dir with HOME=home while the server plays `script`."""
    binary = find(agent)
    if binary is None:
        raise RuntimeError(f"{agent} CLI not installed: run .ci/install-{agent}")
    home.mkdir(parents=True, exist_ok=True)
    launcher.write()  # lessonbank is installed on this machine: the committed hooks find it
    with ScriptedServer(list(script)) as server:
        args, own = LAUNCH[agent](binary, home, server.url, project_dir, prompt)
        full = {"HOME": str(home), "NO_COLOR": "1", "CI": "1", **own, **(env or {})}
        proc, seconds = spawn_cli(args, project_dir, full, timeout, PASSED_THROUGH)
        requests = list(server.requests)
    return AgentRun(args, proc.returncode, proc.stdout, proc.stderr, requests, seconds, home, agent=agent)
