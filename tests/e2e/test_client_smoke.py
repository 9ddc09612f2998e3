"""What the real Claude Code CLI does with hook output, shown with trivial hooks.

Findings for 2.1.197 (asserted below):
- PreToolUse additionalContext reaches the model as a text block
  "<system-reminder>\\nPreToolUse:Bash hook additional context: …\\n</system-reminder>"
  in the user message that carries the tool_result.
- SessionStart and UserPromptSubmit additionalContext land in a mid-conversation message with
  role "system" (not the top-level `system` field), as "SessionStart hook additional context: …"
  and "UserPromptSubmit hook additional context: …", joined to other attachments by blank lines.
- A Stop hook's {"decision": "block", "reason": R} becomes a user text "Stop hook feedback:\\nR";
  the CLI then asks the model again and calls Stop once more with stop_hook_active true.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

from tests.hook_support import EVENTS, FIXTURES

from .claude_harness import Runner
from .model_server import Bash, Text

pytestmark = pytest.mark.e2e

TOOL_EVENTS = {"PreToolUse", "PostToolUse", "PostToolUseFailure"}

HOOK = """\
import json, sys
from pathlib import Path

event = sys.argv[1]
log = Path(sys.argv[2])
payload = json.load(sys.stdin)
with log.open("a") as f:
    f.write(json.dumps(payload) + "\\n")
context = {
    "SessionStart": "SESSION-START-CONTEXT",
    "UserPromptSubmit": "PROMPT-CONTEXT",
    "PreToolUse": "PRE-TOOL-CONTEXT for " + payload.get("tool_input", {}).get("command", ""),
}
if event in context:
    out = {"hookEventName": event, "additionalContext": context[event]}
    print(json.dumps({"hookSpecificOutput": out}))
elif event == "Stop" and not payload.get("stop_hook_active"):
    print(json.dumps({"decision": "block", "reason": "STOP-REASON: say what you learned"}))
"""


def hooked_project(tmp_path: Path) -> tuple[Path, Path]:
    """A project whose .claude/settings.json runs a logging hook script on every event."""
    project = tmp_path / "project with space"
    (project / ".claude").mkdir(parents=True)
    script = tmp_path / "hook.py"
    script.write_text(HOOK)
    log = tmp_path / "payloads.jsonl"
    hooks = {}
    for event in EVENTS:
        command = shlex.join([sys.executable, str(script), event, str(log)])
        entry: dict[str, object] = {"hooks": [{"type": "command", "command": command}]}
        if event in TOOL_EVENTS:
            entry["matcher"] = "Bash"
        hooks[event] = [entry]
    settings = json.dumps({"hooks": hooks}, indent=2)
    (project / ".claude" / "settings.json").write_text(settings)
    return project, log


def test_hook_output_reaches_the_model_where_documented(tmp_path: Path, claude: Runner) -> None:
    project, log = hooked_project(tmp_path)
    script = [
        Bash("python3 -c 'import sys; sys.exit(3)'", "failing check"),
        Bash("echo smoke-ok", "passing check"),
        Text("first answer"),
        Text("second answer"),
    ]

    run = claude(project, "run the smoke check", script)

    assert run.returncode == 0, run.explain()
    assert run.result["result"] == "second answer"
    assert run.hook_contexts("PreToolUse") == [
        "PRE-TOOL-CONTEXT for python3 -c 'import sys; sys.exit(3)'",
        "PRE-TOOL-CONTEXT for echo smoke-ok",
    ]
    assert "PreToolUse:Bash hook additional context: PRE-TOOL-CONTEXT for echo smoke-ok" in (run.reminders())
    assert run.hook_contexts("SessionStart") == ["SESSION-START-CONTEXT"]
    assert run.hook_contexts("UserPromptSubmit") == ["PROMPT-CONTEXT"]
    system_messages = [
        m
        for m in run.messages()
        if m["role"] == "system"
        and "SessionStart hook additional context: SESSION-START-CONTEXT" in json.dumps(m)
    ]
    assert len(system_messages) == 1
    assert run.stop_feedback() == ["STOP-REASON: say what you learned"]
    assert "Stop hook feedback:\nSTOP-REASON: say what you learned" in run.user_texts()
    assert [r["content"] for r in run.tool_results()] == ["Exit code 3", "smoke-ok"]
    calls = run.calls()
    assert [(c.command, c.is_error) for c in calls] == [
        ("python3 -c 'import sys; sys.exit(3)'", True),
        ("echo smoke-ok", False),
    ]
    assert calls[1].contexts("PreToolUse") == ["PRE-TOOL-CONTEXT for echo smoke-ok"]
    # One request per assistant turn: Bash, Bash, first answer, second answer after the block.
    assert len(run.main_requests) == 4

    payloads = [json.loads(line) for line in log.read_text().splitlines()]
    assert [p["hook_event_name"] for p in payloads] == [
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "PostToolUseFailure",
        "PreToolUse",
        "PostToolUse",
        "Stop",
        "Stop",
        "SessionEnd",
    ]
    assert [p.get("stop_hook_active") for p in payloads if p["hook_event_name"] == "Stop"] == [
        False,
        True,
    ]
    failure = next(p for p in payloads if p["hook_event_name"] == "PostToolUseFailure")
    assert failure["error"].startswith("Exit code 3")
    assert payloads[-2]["last_assistant_message"] == "second answer"


def test_recorded_fixtures_match_the_payloads_the_cli_sends(tmp_path: Path, claude: Runner) -> None:
    project, log = hooked_project(tmp_path)
    script = [Bash("python3 -c 'import sys; sys.exit(1)'"), Bash("echo 42"), Text("All fixed.")]

    run = claude(project, "please fix the failing pytest tests", script)

    assert run.returncode == 0, run.explain()
    seen: dict[str, set[str]] = {}
    for line in log.read_text().splitlines():
        payload = json.loads(line)
        seen.setdefault(payload["hook_event_name"], set()).update(payload)
    for fixture in sorted(FIXTURES.glob("*.json")):
        recorded = json.loads(fixture.read_text())
        event = recorded["hook_event_name"]
        assert set(recorded) == seen[event], fixture.name
