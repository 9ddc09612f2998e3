"""Transcripts on disk: locating them, reading only new bytes, both formats, and the real corpus."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from lessonbank.errors import BankError
from lessonbank.scan import sources
from lessonbank.scan.parse import ClaudeStream

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
CORPUS = SHARED / "corpus" / "transcripts"
FIXTURE = SHARED / "fixtures" / "claude-code-2.1.197" / "transcript-fail-then-pass.jsonl"
needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason="shared corpus not present")


# ---- building Claude Code and Codex records -------------------------------------------------


def record(kind: str, content: Any, session: str = "s1", **extra: Any) -> str:
    rec = {"parentUuid": None, "isSidechain": False, "type": kind, "cwd": "/p", "sessionId": session,
           "version": "2.1.197", "timestamp": extra.pop("ts", "2026-01-01T00:00:00Z"),
           "message": {"role": kind, "content": content}}  # fmt: skip
    rec.update(extra)
    return json.dumps(rec, separators=(",", ":")) + "\n"


def bash(call: str, command: str, output: str, is_error: bool, session: str = "s1") -> str:
    use = record("assistant", [{"type": "tool_use", "id": call, "name": "Bash", "input": {"command": command}}],
                 session)  # fmt: skip
    res = record("user", [{"tool_use_id": call, "type": "tool_result", "content": output, "is_error": is_error}],
                 session, toolUseResult={"stdout": output, "stderr": "", "interrupted": False})  # fmt: skip
    return use + res


def edit(call: str, path: str, session: str = "s1", result: str = "", is_error: bool = False) -> str:
    """An Edit call and its result (by default: applied)."""
    use = record("assistant", [{"type": "tool_use", "id": call, "name": "Edit", "input": {"file_path": path}}],
                 session)  # fmt: skip
    text = result or f"The file {path} has been updated."
    res = record("user", [{"tool_use_id": call, "type": "tool_result", "content": text, "is_error": is_error}],
                 session)  # fmt: skip
    return use + res


FAIL = bash("t1", "pytest -q", "Exit code 1\nFAILED tests/test_a.py::test_x - assert 1 == 2", True)
FIX = edit("t2", "/p/src/a.py") + bash("t3", "pytest -q", "3 passed", False)


def codex(kind: str, payload: dict[str, Any], ts: str = "2026-02-26T19:36:00Z") -> str:
    return json.dumps({"timestamp": ts, "type": kind, "payload": payload}, separators=(",", ":")) + "\n"


def codex_meta(cwd: str, session: str = "019c-codex") -> str:
    return codex("session_meta", {"id": session, "cwd": cwd, "cli_version": "0.104.0-alpha.1"})


def scan(*paths: Path, state: dict[str, Any] | None = None) -> tuple[list[Any], sources.Stats]:
    """What a scan found, but the failures watched for a second session (tests/scan/test_recurring.py)."""
    found, stats = sources.scan_files(list(paths), state if state is not None else {})
    return [c for c in found if c.kind != "recurring"], stats


# ---- where transcripts are -------------------------------------------------------------------


def test_claude_project_folder_replaces_every_non_alphanumeric(isolated_home: Path) -> None:
    folder = sources.claude_project_dir(Path("/home/u/my.repo_x"))
    assert folder == isolated_home / ".claude" / "projects" / "-home-u-my-repo-x"


def test_locate_finds_sessions_and_subagents_in_all_layouts(isolated_home: Path, tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    folder = sources.claude_project_dir(project.resolve())
    (folder / "s2" / "subagents").mkdir(parents=True)
    for rel in ("s1.jsonl", "agent-ab12.jsonl", "s2.jsonl", "s2/subagents/agent-cd34.jsonl"):
        (folder / rel).write_text(FAIL)
    other = isolated_home / ".claude" / "projects" / "-elsewhere"
    other.mkdir()
    (other / "x.jsonl").write_text(FAIL)
    found = sources.locate(project)
    assert [p.relative_to(folder).as_posix() for p in found] == [
        "agent-ab12.jsonl", "s1.jsonl", "s2.jsonl", "s2/subagents/agent-cd34.jsonl",
    ]  # fmt: skip
    assert other / "x.jsonl" in sources.locate(project, all_projects=True)


def test_locate_matches_codex_rollouts_by_session_cwd(isolated_home: Path, tmp_path: Path) -> None:
    project = (tmp_path / "proj").resolve()
    (project / "sub").mkdir(parents=True)
    day = isolated_home / ".codex" / "sessions" / "2026" / "02" / "26"
    day.mkdir(parents=True)
    mine = day / "rollout-2026-02-26T16-35-55-a.jsonl"
    mine_sub = day / "rollout-2026-02-26T16-40-00-b.jsonl"
    theirs = day / "rollout-2026-02-26T17-00-00-c.jsonl"
    mine.write_text(codex_meta(str(project)))
    mine_sub.write_text(codex_meta(str(project / "sub")))
    theirs.write_text(codex_meta(str(tmp_path / "other")))
    cache: dict[str, str] = {}
    assert sources.locate(project, codex_cache=cache) == [mine, mine_sub]
    assert cache[str(theirs)] == str(tmp_path / "other")
    assert theirs in sources.locate(project, all_projects=True)


def test_locate_by_path(tmp_path: Path) -> None:
    (tmp_path / "d" / "e").mkdir(parents=True)
    (tmp_path / "d" / "a.jsonl").write_text(FAIL)
    (tmp_path / "d" / "e" / "b.jsonl").write_text(FAIL)
    (tmp_path / "d" / "notes.txt").write_text("x")
    assert sources.locate(tmp_path, paths=(tmp_path / "d",)) == [
        (tmp_path / "d" / "a.jsonl").resolve(), (tmp_path / "d" / "e" / "b.jsonl").resolve(),
    ]  # fmt: skip
    with pytest.raises(BankError, match="no such file or folder"):
        sources.locate(tmp_path, paths=(tmp_path / "missing",))


# ---- reading only what is new ----------------------------------------------------------------


def test_append_reads_only_the_new_bytes(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(FAIL)
    state: dict[str, Any] = {}
    found, stats = scan(path, state=state)
    assert found == [] and stats.bytes_read == len(FAIL)
    with open(path, "a") as handle:
        handle.write(FIX)
    found, stats = scan(path, state=state)
    assert [c.kind for c in found] == ["fix"]  # the failure read last time is remembered
    assert stats.bytes_read == len(FIX.encode()) and stats.restarted == 0


def test_an_unchanged_file_is_not_opened(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(FAIL + FIX)
    state: dict[str, Any] = {}
    assert len(scan(path, state=state)[0]) == 1
    monkeypatch.setattr(sources, "scan_file", lambda *a, **k: pytest.fail("an unchanged file was read"))
    found, stats = scan(path, state=state)
    assert (found, stats.files_read, stats.bytes_read, stats.lines) == ([], 0, 0, 0)


def test_a_truncated_file_is_read_again_from_the_start(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(FAIL + FIX)
    state: dict[str, Any] = {}
    scan(path, state=state)
    path.write_text(FAIL)  # shorter than what was read
    found, stats = scan(path, state=state)
    assert (found, stats.restarted, stats.bytes_read) == ([], 1, len(FAIL))


def test_a_replaced_file_is_read_again_from_the_start(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(FAIL)
    state: dict[str, Any] = {}
    scan(path, state=state)
    new = tmp_path / "new.jsonl"
    new.write_text(FAIL + FIX)
    os.replace(new, path)  # another inode, content that starts the same
    found, stats = scan(path, state=state)
    assert stats.restarted == 1 and [c.kind for c in found] == ["fix"]
    assert stats.bytes_read == len((FAIL + FIX).encode())


def test_a_rewrite_in_place_with_other_content_is_noticed(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(FAIL)
    state: dict[str, Any] = {}
    scan(path, state=state)
    other = FAIL.replace("test_x", "test_y")
    with open(path, "r+") as handle:  # same inode, same length, other bytes
        handle.write(other + FIX)
    found, stats = scan(path, state=state)
    assert stats.restarted == 1 and found[0].evidence[0]["excerpt"][0].endswith("test_y - assert 1 == 2")


def test_state_of_deleted_files_is_dropped_and_other_versions_start_over(tmp_path: Path) -> None:
    path, gone = tmp_path / "s.jsonl", tmp_path / "gone.jsonl"
    path.write_text(FAIL + FIX)
    gone.write_text(FAIL)
    state: dict[str, Any] = {}
    scan(path, gone, state=state)
    gone.unlink()
    scan(path, state=state)
    assert list(state["files"]) == [str(path)]
    state["version"] = 0
    found, stats = scan(path, state=state)
    assert [c.kind for c in found] == ["fix"] and stats.bytes_read == len(FAIL + FIX)


def test_a_half_written_last_line_waits_for_the_next_scan(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    last = FIX.splitlines(keepends=True)[-1]
    head = FAIL + "".join(FIX.splitlines(keepends=True)[:-1])
    path.write_text(head + last[:40])
    state: dict[str, Any] = {}
    found, stats = scan(path, state=state)
    assert found == [] and stats.waiting == 1
    assert state["files"][str(path)]["offset"] == len(head.encode())
    with open(path, "a") as handle:
        handle.write(last[40:])
    found, stats = scan(path, state=state)
    assert [c.kind for c in found] == ["fix"] and stats.waiting == 0


def test_a_complete_last_line_without_newline_is_read(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text((FAIL + FIX).rstrip("\n"))
    found, stats = scan(path)
    assert [c.kind for c in found] == ["fix"] and stats.waiting == 0


def test_malformed_lines_are_counted_and_skipped(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    cut = '{"type":"progress","data":{"x":1'  # cut short: counted even though it could not matter
    path.write_text(
        'not json\n[1, 2]\n{"type":"user","message":{"role":"user","con\n\n' + FAIL + cut + "\n" + FIX
    )
    found, stats = scan(path)
    assert [c.kind for c in found] == ["fix"]
    assert stats.malformed == 4  # blank lines are not malformed


def test_an_overlong_line_is_skipped_without_holding_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sources, "MAX_LINE", 2000)
    monkeypatch.setattr(sources, "CHUNK", 512)
    path = tmp_path / "s.jsonl"
    huge = record("user", "x" * 20000)
    path.write_text(FAIL + huge + FIX)
    found, stats = scan(path)
    assert [c.kind for c in found] == ["fix"] and stats.malformed == 1


# ---- both formats ----------------------------------------------------------------------------


@pytest.mark.skipif(not FIXTURE.is_file(), reason="shared fixtures not present")
def test_claude_code_2_1_fixture_yields_its_lesson_block() -> None:
    found, stats = scan(FIXTURE)
    # `python3 -c 'import sys; sys.exit(1)'` is not a check; the #lesson block is the one candidate
    assert [(c.tier, c.kind) for c in found] == [(1, "lesson")]
    assert found[0].sessions == ["1ebd0fc0-db0b-4702-adbd-8545317a8e7d"]
    assert stats.malformed == 0


def test_codex_rollout_with_polled_command_and_apply_patch(tmp_path: Path) -> None:
    def call(cid: str, name: str, args: dict[str, Any]) -> str:
        return codex("response_item", {"type": "function_call", "name": name, "arguments": json.dumps(args),
                                       "call_id": cid})  # fmt: skip

    def out(cid: str, text: str) -> str:
        return codex("response_item", {"type": "function_call_output", "call_id": cid, "output": text})

    head = "Chunk ID: 1\nWall time: 1.0 seconds\n"
    lines = [
        codex_meta("/repo", "019c9b73"),
        codex("event_msg", {"type": "user_message", "message": "# Context\n## My request for Codex:\nRun pnpm test"}),
        call("c1", "exec_command", {"cmd": "pnpm test", "workdir": "/repo"}),
        out("c1", head + "Process running with session ID 42\nOriginal token count: 0\nOutput:\n"),
        call("c2", "write_stdin", {"session_id": 42, "chars": ""}),
        out("c2", head + "Process exited with code 1\nOutput:\n FAIL  a.test.ts > loads\nAssertionError: x"),
        codex("response_item", {"type": "custom_tool_call", "name": "apply_patch", "call_id": "c3",
                                "input": "*** Begin Patch\n*** Update File: /repo/a.test.ts\n@@\n-a\n+b\n"}),
        call("c4", "exec_command", {"cmd": "pnpm test"}),
        out("c4", head + "Process exited with code 0\nOutput:\nok"),
    ]  # fmt: skip
    path = tmp_path / "rollout-2026-02-26T16-35-55-019c9b73.jsonl"
    path.write_text("".join(lines))
    [cand] = scan(path)[0]
    assert (cand.kind, cand.key, cand.sessions, cand.projects) == (
        "fix", "fix|pnpm test|fail a.test.ts loads", ["019c9b73"], ["/repo"],
    )  # fmt: skip
    assert cand.evidence[0]["edits"] == ["/repo/a.test.ts"]


def test_subagent_prompt_is_not_a_user_correction(tmp_path: Path) -> None:
    path = tmp_path / "agent-ab12.jsonl"
    path.write_text(record("user", "No, do not stop until every file is read", isSidechain=True)
                    + bash("t1", "ls", "a", False))  # fmt: skip
    assert scan(path)[0] == []


def test_a_correction_with_a_screenshot_is_read_without_its_image_data(tmp_path: Path) -> None:
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBO" * 20000}}
    said = record("user", [image, {"type": "text", "text": "No, don't use pip here, use uv"}])
    path = tmp_path / "s.jsonl"
    path.write_text(bash("t0", "pip install x", "ok", False) + said + bash("t1", "uv sync", "ok", False))
    found, stats = scan(path)
    assert [c.kind for c in found] == ["correction"] and stats.malformed == 0
    trimmed = ClaudeStream().trim(said.encode())
    assert len(trimmed) < 1000 and json.loads(trimmed)["message"]["content"][0]["source"]["data"] == ""


# ---- the real corpus (read in place; skipped when absent) -------------------------------------


def corpus_file(name: str) -> Path:
    [path] = list(CORPUS.rglob(name))
    return path


@needs_corpus
def test_codex_session_where_pnpm_test_fails_then_passes() -> None:
    found, _ = scan(corpus_file("codex-rollout-2026-02-26T16-35-55-*.jsonl"))
    keys = [c.key for c in found]
    assert any(k.startswith("fix|pnpm test|") for k in keys), keys
    cand = next(c for c in found if c.key.startswith("fix|pnpm test|"))
    assert cand.evidence[0]["failing"] == "pnpm test"
    assert any(p.endswith("useSwipeQueue.test.ts") for p in cand.evidence[0]["edits"])


@needs_corpus
def test_claude_session_abc757d1_installing_the_suite_it_just_wrote_is_no_lesson() -> None:
    # The agent wrote requirements-dev.txt in that turn, ran pytest before installing it, then did:
    # setting up its own new test suite, not a mistake that comes back.
    found, stats = scan(corpus_file("abc757d1-*.jsonl"))
    assert [c for c in found if "pytest" in c.key] == []
    assert stats.skipped["work in progress"] >= 1


@needs_corpus
def test_permission_denials_of_554b9fa6_yield_nothing() -> None:
    found, stats = scan(corpus_file("554b9fa6-*.jsonl"))
    assert found == []
    assert stats.skipped["denied"] >= 100


@needs_corpus
def test_masked_make_runs_are_never_taken_as_fixes() -> None:
    vsla = sorted((CORPUS / "Durban-Designer__vsla").rglob("*.jsonl"))
    found, stats = scan(*vsla)
    assert stats.skipped["masked"] > 0
    for cand in found:
        for item in cand.evidence:
            assert "| head" not in item.get("passing", "") and "| tail" not in item.get("passing", "")


@needs_corpus
def test_whole_corpus_scans_and_a_rescan_reads_nothing() -> None:
    paths = sources.locate(CORPUS, paths=(CORPUS,))
    state: dict[str, Any] = {}
    found, stats = scan(*paths, state=state)
    assert stats.files == len(paths) >= 28 and stats.bytes_read == sum(p.stat().st_size for p in paths)
    assert len(found) >= 5 and 2 in {c.tier for c in found}
    again, stats = scan(*paths, state=json.loads(json.dumps(state)))
    assert (again, stats.bytes_read) == ([], 0)


def test_an_unfinished_overlong_line_is_counted_once_and_not_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sources, "MAX_LINE", 2000)
    monkeypatch.setattr(sources, "CHUNK", 512)
    path = tmp_path / "s.jsonl"
    huge = record("user", "x" * 20000).rstrip("\n")  # still being written: no newline yet
    path.write_text(FAIL + huge)
    state: dict[str, Any] = {}
    _, first = scan(path, state=state)
    assert first.malformed == 1 and first.bytes_read == path.stat().st_size
    with path.open("a") as handle:
        handle.write("x" * 5000)  # the same line grows
    _, second = scan(path, state=state)
    assert second.malformed == 0 and second.bytes_read == 5000
    with path.open("a") as handle:
        handle.write("\n" + FIX)  # it ends, and the session goes on
    found, third = scan(path, state=state)
    assert third.malformed == 0 and [c.kind for c in found] == ["fix"]


@pytest.mark.parametrize(
    "result",
    [
        "<tool_use_error>String to replace not found in file.</tool_use_error>",
        "The user doesn't want to proceed with this tool use. The tool use was rejected.",
    ],
)
def test_an_edit_that_did_not_apply_is_no_evidence(tmp_path: Path, result: str) -> None:
    """Fail, an edit that was refused, then a pass: a flaky rerun, not a fix."""
    path = tmp_path / "s.jsonl"
    rerun = bash("t3", "pytest -q", "3 passed", False)
    path.write_text(FAIL + edit("t2", "/p/src/a.py", result=result, is_error=True) + rerun)
    found, stats = scan(path)
    assert [c.kind for c in found] == []
    assert sum(stats.skipped.values()) == 1  # counted as the non-mistake it is
    path.write_text(FAIL + edit("t2", "/p/src/a.py") + rerun)
    assert [c.kind for c in scan(path)[0]] == ["fix"]


def test_the_cheap_look_covers_every_non_mistake_phrase_mining_knows() -> None:
    """Results skipped unparsed are counted by a window check: it must know every phrase mining does."""
    from lessonbank.scan import outcomes, parse

    hints = [p.lower() for p, _ in parse._NON_MISTAKE_PHRASES]
    phrases = (*outcomes._DENIED, *outcomes._REJECTED, *outcomes._INTERRUPTED, *outcomes._INVALID)
    assert [p for p in phrases if not any(h in p for h in hints)] == []


@pytest.mark.parametrize(
    ("line", "spaced"),
    [
        (b'{"type": "assistant", "message": {}}', True),
        (b'{"type" : "user"}', True),
        (b'{"type":"assistant","message":{"content":"a \\": b"}}', False),
        (b'{"type":"assistant"}', False),
    ],
)
def test_spaced_json_is_told_from_compact(line: bytes, spaced: bool) -> None:
    assert sources.spaced(line) is spaced
