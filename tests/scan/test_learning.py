"""Lessons, not episodes: hand-written Claude Code and Codex transcripts through the scan and the distiller.

Each rule for what is a lesson has a transcript here: masked and narrower runs confirm nothing,
removing the failing thing is no fix, errors in what the agent was writing this turn are work in
progress, typos are no lessons, plain shell mistakes with a way round are, corrections need an
instruction and lose personal data, and distinct lessons that share a command stay distinct.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from lessonbank.scan import calibrate, distill, sources
from lessonbank.scan.events import Candidate

# ---- transcript writers -----------------------------------------------------------------------


class Claude:
    """A Claude Code session written record by record."""

    def __init__(self, session: str = "s1", cwd: str = "/p", day: str = "2026-01-01") -> None:
        self.session, self.cwd, self.lines, self.n, self.day = session, cwd, [], 0, day

    def _record(self, kind: str, content: Any, **extra: Any) -> None:
        self.n += 1
        rec = {"type": kind, "cwd": self.cwd, "sessionId": self.session, "version": "2.1.197",
               "timestamp": f"{self.day}T00:{self.n // 60:02d}:{self.n % 60:02d}Z",
               "message": {"role": kind, "content": content}, **extra}  # fmt: skip
        self.lines.append(json.dumps(rec, separators=(",", ":")))

    def user(self, text: str) -> Claude:
        self._record("user", text)
        return self

    def say(self, text: str) -> Claude:
        self._record("assistant", [{"type": "text", "text": text}])
        return self

    def bash(self, command: str, output: str = "", code: int = 0) -> Claude:
        call = f"c{self.n}"
        self._record("assistant", [{"type": "tool_use", "id": call, "name": "Bash", "input": {"command": command}}])
        text = output if code == 0 else f"Exit code {code}\n{output}"
        self._record("user", [{"tool_use_id": call, "type": "tool_result", "content": text, "is_error": code != 0}])
        return self

    def edit(self, path: str, tool: str = "Edit") -> Claude:
        call = f"c{self.n}"
        self._record("assistant", [{"type": "tool_use", "id": call, "name": tool, "input": {"file_path": path}}])
        self._record("user", [{"tool_use_id": call, "type": "tool_result", "content": "updated"}])
        return self

    def write(self, folder: Path, name: str = "s.jsonl") -> Path:
        path = folder / name
        path.write_text("\n".join(self.lines) + "\n")
        return path


class Codex:
    """A Codex CLI rollout written record by record."""

    def __init__(self, session: str = "019c-codex") -> None:
        self.lines = [self._rec("session_meta", {"id": session, "cwd": "/repo", "cli_version": "0.104.0"})]
        self.n = 0

    @staticmethod
    def _rec(kind: str, payload: dict[str, Any]) -> str:
        return json.dumps({"timestamp": "2026-02-26T19:36:00Z", "type": kind, "payload": payload}, separators=(",", ":"))

    def user(self, text: str) -> Codex:
        self.lines.append(self._rec("event_msg", {"type": "user_message", "message": text}))
        return self

    def say(self, text: str) -> Codex:
        self.lines.append(self._rec("response_item", {"type": "message", "role": "assistant",
                                                      "content": [{"type": "output_text", "text": text}]}))  # fmt: skip
        return self

    def run(self, command: str, output: str = "", code: int = 0) -> Codex:
        self.n += 1
        call = f"x{self.n}"
        self.lines.append(self._rec("response_item", {"type": "function_call", "name": "exec_command",
                                                      "arguments": json.dumps({"cmd": command}), "call_id": call}))  # fmt: skip
        body = f"Chunk ID: 1\nWall time: 1.0 seconds\nProcess exited with code {code}\nOutput:\n{output}"
        self.lines.append(self._rec("response_item", {"type": "function_call_output", "call_id": call, "output": body}))
        return self

    def patch(self, path: str) -> Codex:
        patch = f"*** Begin Patch\n*** Update File: {path}\n@@\n-a\n+b\n*** End Patch\n"
        self.lines.append(self._rec("response_item", {"type": "custom_tool_call", "name": "apply_patch",
                                                      "call_id": "p", "input": patch}))  # fmt: skip
        return self

    def write(self, folder: Path, name: str = "rollout-2026-02-26T16-35-55-019c.jsonl") -> Path:
        path = folder / name
        path.write_text("\n".join(self.lines) + "\n")
        return path


def lessons(path: Path) -> tuple[list[Candidate], dict[str, int]]:
    """What the scan proposes from one transcript, distilled, and what it skipped and why.

    A failure met in this one session only is watched, not proposed (tests/scan/test_recurring.py)."""
    found, stats = sources.scan_files([path], {})
    kept = []
    for cand in found:
        if cand.kind == "recurring":
            continue
        why = distill.distill(cand)
        if why:
            stats.skip(why)
        else:
            kept.append(cand)
    return kept, stats.skipped


VITEST_FAIL = " FAIL  __tests__/hooks/useQueue.test.ts > useQueue > filters\nAssertionError: expected [] to have a length of 3"
DIAGNOSIS = ("I've identified the root cause: `vi.clearAllMocks()` keeps queued `mockResolvedValueOnce` values, "
             "so later tests get stale responses. I'm switching to a full reset.")  # fmt: skip
SUMMARY = "`pnpm test` passes.\n\n- Switched `vi.clearAllMocks()` to `vi.resetAllMocks()` so queued values don't leak"


# ---- honest confirmation ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "passing",
    [
        "pdflatex -interaction=nonstopmode paper.tex > log 2>&1 && echo ok || echo failed",
        "pdflatex paper.tex || true",
        "pdflatex paper.tex; echo done",
        "pdflatex paper.tex 2>&1 | tail -5",
        "pdflatex paper.tex &",
    ],
)
def test_a_masked_run_never_confirms_a_fix(tmp_path: Path, passing: str) -> None:
    t = Claude().bash("pdflatex paper.tex", "! LaTeX Error: Missing \\begin{document}.", 1)
    t.say("The issue is that the preamble file has a stray character before \\documentclass.")
    t.edit("/p/preamble.tex").bash(passing, "Output written on paper.pdf")
    found, skipped = lessons(t.write(tmp_path))
    assert found == [] and skipped["masked"] == 1


def test_a_masked_run_never_confirms_a_fix_codex(tmp_path: Path) -> None:
    t = Codex().user("fix the tests").run("pnpm test", VITEST_FAIL, 1).say(DIAGNOSIS).patch("/repo/a.test.ts")
    t.run("pnpm test 2>&1 | tail -20", "Tests 12 passed").run("pnpm test || true", "ok").say(SUMMARY)
    found, skipped = lessons(t.write(tmp_path))
    assert found == [] and skipped["masked"] == 2


def test_configure_only_does_not_confirm_configure_and_build(tmp_path: Path) -> None:
    t = Claude().bash("mkdir -p build && cd build && cmake .. && make", "a.c:3:1: fatal error: x.h: No such file", 2)
    t.say("The problem is that the include path misses `include/vsla`.").edit("/p/CMakeLists.txt")
    t.bash("cd /p/build && cmake ..", "-- Build files have been written")
    assert lessons(t.write(tmp_path))[0] == []
    t.bash("cd /p/build && cmake .. && make", "[100%] Built target x")
    t.say("- Added `target_include_directories(x PUBLIC include/vsla)` so the header is found")
    [cand] = lessons(t.write(tmp_path))[0]
    assert cand.evidence[0]["passing"] == "cmake .. && make"


def test_one_test_file_does_not_confirm_the_suite_codex(tmp_path: Path) -> None:
    t = Codex().user("Run pnpm test").run("pnpm test", VITEST_FAIL, 1).say(DIAGNOSIS).patch("/repo/a.test.ts")
    t.run("pnpm vitest run __tests__/hooks/useQueue.test.ts", "1 passed").run("pnpm --filter web test", "ok")
    assert lessons(t.write(tmp_path))[0] == []


@pytest.mark.parametrize(
    ("said", "passing"),
    [
        ("The unified.c file has too many issues. Let me temporarily exclude it from the build:",
         "make -j4 && pytest"),
        ("The test is flaky; I'll mark it as skip for now.", "make -j4 && pytest"),
        ("The problem is that test_b needs a GPU.", "make -j4 && pytest --deselect tests/test_b.py::test_gpu"),
    ],
)
def test_removing_or_skipping_the_failing_thing_is_not_a_fix(tmp_path: Path, said: str, passing: str) -> None:
    t = Claude().bash("make -j4 && pytest", "src/unified.c:26:20: error: 'X' undeclared", 2)
    t.say(said).edit("/p/CMakeLists.txt").bash(passing, "ok")
    found, skipped = lessons(t.write(tmp_path))
    assert found == [] and skipped["removed or skipped"] == 1


def test_errors_in_code_written_this_turn_are_work_in_progress(tmp_path: Path) -> None:
    t = Claude().user("add a benchmark").edit("/p/bench.c", "Write")
    t.bash("gcc -I include bench.c lib.a -o bench", "bench.c:(.text+0x1f8): undefined reference to `vsla_set_f32'", 1)
    t.say("The issue is that the function is named `vsla_set_f64`.").edit("/p/bench.c")
    t.bash("gcc -I include bench.c lib.a -o bench", "")
    found, skipped = lessons(t.write(tmp_path))
    assert found == [] and skipped["work in progress"] == 1


def test_a_file_written_by_the_failing_command_itself_is_work_in_progress_codex(tmp_path: Path) -> None:
    t = Codex().user("try it").run("cat > t.c <<'EOF'\nint main(){return 0}\nEOF\ngcc t.c -o t", "t.c:1:21: error: expected ';'", 1)
    t.say("The issue is that the return lacks a semicolon.").patch("/repo/t.c").run("gcc t.c -o t", "")
    found, skipped = lessons(t.write(tmp_path))
    assert found == [] and skipped["work in progress"] == 1


def test_source_mangled_by_printf_is_a_lesson_on_printf_not_on_the_compiler_codex(tmp_path: Path) -> None:
    t = Codex().user("try it")
    t.run("printf 'int main(){if(\\!x)return 1;}\\n' > t.c && gcc t.c -o t", "t.c:1:16: error: stray '\\' in program", 1)
    t.say("The printf command is escaping the exclamation marks.").patch("/repo/t.c").run("gcc t.c -o t", "")
    [cand] = lessons(t.write(tmp_path))[0]
    assert (cand.kind, cand.key) == ("shell", "shell|shell-written-source")
    assert cand.verify == {"glob": ["**/*.c", "**/*.h", "**/*.cu", "**/*.cpp"], "match": ["#include"]}
    [trigger] = cand.commands
    assert re.search(trigger, "printf '#include <stdio.h>' > test_gpu.c")
    assert re.search(trigger, "cat > bench.cu << 'EOF'")
    assert not re.search(trigger, "gcc -I include test_gpu.c -o t") and not re.search(trigger, "echo hi > notes.txt")


def test_a_check_that_failed_before_any_edit_of_the_turn_is_a_lesson_codex(tmp_path: Path) -> None:
    t = Codex().user("Run pnpm test").run("pnpm test", VITEST_FAIL, 1).say(DIAGNOSIS).patch("/repo/a.test.ts")
    t.run("pnpm test", "Tests 12 passed").say(SUMMARY)
    [cand] = lessons(t.write(tmp_path))[0]
    assert cand.do == "Switch `vi.clearAllMocks()` to `vi.resetAllMocks()` so queued values don't leak."
    assert cand.when == ("`vi.clearAllMocks()` keeps queued `mockResolvedValueOnce` values "
                         "(`pnpm test` fails: AssertionError: expected [] to have a length of 3)")  # fmt: skip
    assert cand.title == "Switch `vi.clearAllMocks()` to `vi.resetAllMocks()`"
    assert cand.commands == [r"^(?:sudo\s+)?(?:\S*/)?pnpm\b(?:\s+-\S+(?:\s+\S+)*?)?\s+(?:run\s+)?test(?![\w-])"]
    assert cand.paths == ["**/*.test.ts"]
    assert cand.keywords == ["clearAllMocks", "mockResolvedValueOnce", "resetAllMocks"]
    assert cand.verify == {"match": ["mockResolvedValueOnce", r"vi\.resetAllMocks"]}
    assert cand.evidence[0]["diagnosis"].startswith("I've identified the root cause")
    assert (cand.evidence[0]["agent"], cand.evidence[0].get("reported")) == ("codex", None)  # no #lesson block


@pytest.mark.parametrize("wrote_it", [True, False])
def test_installing_a_dependency_file_written_this_turn_is_work_in_progress(tmp_path: Path, wrote_it: bool) -> None:
    t = Claude().user("add a test suite")
    if wrote_it:
        t.edit("/p/requirements-dev.txt", tool="Write")
    t.bash("python -m pytest tests/", "/usr/bin/python: No module named pytest", 1)
    t.say("The test dependencies are not installed; installing requirements-dev.txt first.")
    t.bash("python -m pip install -r requirements-dev.txt", "Successfully installed pytest-9.0.2")
    t.bash("python -m pytest tests/", "35 passed")
    kept, skipped = lessons(t.write(tmp_path))
    if wrote_it:
        assert (kept, skipped.get("work in progress")) == ([], 1)
    else:
        assert [c.kind for c in kept] == ["fix"] and "work in progress" not in skipped


def test_an_episode_without_diagnosis_or_fix_sentence_waits_for_words(tmp_path: Path) -> None:
    t = Claude().bash("make", "src/a.c:3:1: error: expected ';'", 2).say("Let me look.").edit("/p/src/a.c")
    t.bash("make", "ok")
    [cand], skipped = lessons(t.write(tmp_path))
    assert skipped == {}
    assert (cand.title, cand.signals.get("needs_words")) == ("`make` failed, then passed: error: expected ';'", 1)
    assert cand.do.startswith("It was fixed in the session, but nothing said how (no instruction could be read")


# ---- beyond checks: plain shell mistakes ---------------------------------------------------------


def test_a_relative_cd_then_an_absolute_one_is_a_shell_lesson(tmp_path: Path) -> None:
    t = Claude().bash("cd build && ./tests/run", "/bin/bash: line 1: cd: build: No such file or directory", 1)
    t.bash("cd /p/build && ./tests/run", "all good")
    [cand] = lessons(t.write(tmp_path))[0]
    assert (cand.kind, cand.key, cand.title) == (
        "shell", "shell|cd-relative", "Use absolute paths: the working directory carries over",
    )  # fmt: skip
    [trigger] = cand.commands
    assert re.search(trigger, "cd build && make") and re.search(trigger, "ls && cd src && make")
    assert not re.search(trigger, "cd /p/build && make") and not re.search(trigger, "cd ~/p && make")


def test_a_relative_path_from_where_an_earlier_cd_left_the_shell_is_the_same_lesson(tmp_path: Path) -> None:
    t = Claude().bash("cd bench && ls", "k.cu").bash("nvcc bench/k.cu -o k", "cc1: fatal error: bench/k.cu: No such file or directory", 1)
    t.bash("nvcc /p/bench/k.cu -o k", "")
    t.user("and the build").bash("mkdir -p build && cd build && cmake ..",
                                 'CMake Error: The source directory "/p/build" does not appear to contain CMakeLists.txt.', 1)  # fmt: skip
    t.bash("cd /p/build && cmake ..", "-- Build files have been written")
    found = lessons(t.write(tmp_path))[0]
    assert [c.key for c in found] == ["shell|cd-relative", "shell|cd-relative"]  # merged when stored
    assert found[0].title == "Use absolute paths: the working directory carries over"


def test_a_missing_tool_replaced_by_another_is_a_shell_lesson_codex(tmp_path: Path) -> None:
    t = Codex().user("run the benchmark")
    t.run("python run_benchmarks.py --help", "/bin/bash: line 1: python: command not found", 127)
    t.run("python3 run_benchmarks.py --help", "usage: run_benchmarks.py")
    [cand] = lessons(t.write(tmp_path))[0]
    assert cand.do == "Use `python3` instead of `python` here (`python` is not installed)."
    [trigger] = cand.commands
    assert re.search(trigger, "python x.py") and not re.search(trigger, "python3 x.py")
    assert not re.search(trigger, "/usr/bin/python x.py")


def test_a_tool_off_path_gets_a_negative_lookahead_for_its_folder(tmp_path: Path) -> None:
    t = Claude().bash("nvcc --version", "/bin/bash: line 1: nvcc: command not found", 127)
    t.bash("which nvcc", "", 1).bash("export PATH=/usr/local/cuda/bin:$PATH && nvcc --version", "release 12.6")
    [cand] = lessons(t.write(tmp_path))[0]
    assert cand.do == "Call `nvcc` as `/usr/local/cuda/bin/nvcc`, or run `export PATH=/usr/local/cuda/bin:$PATH` first."
    assert cand.verify == {"match": [r"\bnvcc\b"]}  # groom keeps it while the project still uses nvcc
    [trigger] = cand.commands
    assert re.search(trigger, "nvcc -o a a.cu") and not re.search(trigger, "/usr/local/cuda/bin/nvcc -o a a.cu")


def test_windows_switches_in_git_bash_then_cmd_exe_is_a_lesson(tmp_path: Path) -> None:
    t = Claude().bash("whoami /groups", "Exit code 1\nwhoami: extra operand '/groups'\nTry 'whoami --help' for more information.", 1)
    t.bash('cmd.exe /c "whoami /groups"', "GROUP INFORMATION")
    [cand] = lessons(t.write(tmp_path))[0]
    assert cand.key == "shell|windows-switch" and cand.do.startswith("Run it as `cmd.exe /c")
    [trigger] = cand.commands
    assert re.search(trigger, "whoami /priv") and re.search(trigger, 'dir "C:\\Program Files" /b')
    assert re.search(trigger, "cd x && net user /domain")
    assert not re.search(trigger, 'cmd.exe /c "whoami /priv"') and not re.search(trigger, "grep net /etc/hosts")
    assert not re.search(trigger, "ls -la /usr/lib")
    # a GNU tool's own usage error on Linux is no Windows lesson
    t = Claude().bash("ls --bogus /tmp", "ls: unrecognized option\nTry 'ls --help' for more information.", 2)
    assert lessons(t.bash("ls /tmp", "a").write(tmp_path, "b.jsonl"))[0] == []


def test_a_push_behind_the_remote_then_pull_rebase_is_a_lesson(tmp_path: Path) -> None:
    t = Claude().bash("git push", " ! [rejected]        main -> main (fetch first)\nerror: failed to push", 1)
    t.bash("git pull --rebase && git push", "main -> main")
    [cand] = lessons(t.write(tmp_path))[0]
    assert cand.key == "shell|push-behind" and cand.do.startswith("Run `git pull --rebase`")


@pytest.mark.parametrize(
    ("failing", "error", "then"),
    [
        ("gti status", "/bin/bash: line 1: gti: command not found", "git status"),  # a typo, fixed next call
        ("cd biuld && make", "/bin/bash: line 1: cd: biuld: No such file or directory", "cd build && make"),
    ],
)
def test_a_typo_fixed_on_the_next_call_is_no_lesson(tmp_path: Path, failing: str, error: str, then: str) -> None:
    found, skipped = lessons(Claude().bash(failing, error, 127).bash(then, "ok").write(tmp_path))
    assert found == [] and skipped["typo fixed on the next call"] == 1


def test_sudo_handed_to_the_user_is_a_lesson_on_sudo(tmp_path: Path) -> None:
    t = Claude().bash("sudo dpkg -i ./x.deb", "sudo: a password is required", 1)
    t.say("Since I can't run sudo commands, here's what you should do:\n```bash\nsudo dpkg -i ./x.deb\n```")
    [cand] = lessons(t.write(tmp_path))[0]
    assert (cand.key, cand.title) == ("shell|sudo", "Hand sudo commands to the user instead of running them")
    [trigger] = cand.commands
    assert re.search(trigger, "sudo apt install iw -y") and re.search(trigger, "cd /tmp && sudo make install")
    assert not re.search(trigger, "visudo -c") and not re.search(trigger, "echo pseudo code")


def test_a_recurring_error_nobody_got_round_is_no_lesson(tmp_path: Path) -> None:
    t = Claude().bash("sudo apt install iw -y", "sudo: a password is required", 1).say("The install failed.")
    assert lessons(t.write(tmp_path))[0] == []
    t = Claude().bash("pnpm test", "/usr/local/bin/bash: line 1: pnpm: command not found", 127)
    t.bash("corepack pnpm test", "corepack: command not found", 127).bash("cat ci.yml", "jobs:")
    assert lessons(t.write(tmp_path, "b.jsonl"))[0] == []


# ---- corrections and personal data ----------------------------------------------------------------


def test_a_rejection_without_an_instruction_is_no_correction(tmp_path: Path) -> None:
    t = Claude().bash("git config --get user.email", "bot@example.org")
    t.user("Thats not my email though its jane.doe@example.com").say("Got it! Let me update it.")
    t.bash("git config user.email x", "")
    found, skipped = lessons(t.write(tmp_path))
    assert found == [] and skipped["not a correction (no instruction)"] == 1


def test_a_correction_keeps_the_instruction_and_loses_personal_data(tmp_path: Path) -> None:
    t = Claude().bash('cd /home/alice/proj && git commit -m "x"', "[main 1a2b3c] x")
    t.user("no, never commit without signing. Use gpg, ask alice@example.com or +1 415-555-0134 for the key")
    t.say("You're right, sorry.").bash("git commit --amend -S --no-edit", "ok")
    [cand] = lessons(t.write(tmp_path))[0]
    # The trigger is the commit the user forbade, not every commit.
    assert cand.when == "running `git commit` with `--no-gpg-sign` or `gpgsign=false` (the user forbade this)"
    assert cand.commands == [r"^(?=.*(?:--no-gpg-sign\b|gpgsign[= ]+false\b))(?:sudo\s+)?(?:\S*/)?git\b"
                             r"(?:\s+-\S+(?:\s+\S+)*?)?\s+commit(?![\w-])"]
    assert calibrate.fires(cand.commands, 'git commit --no-gpg-sign -m "x"')
    assert calibrate.fires(cand.commands, "git -c commit.gpgsign=false commit -m x")
    assert not calibrate.fires(cand.commands, "git commit -S -m x")
    assert cand.do == ("No, never commit without signing. Use gpg, ask [REDACTED:email] or "
                       "[REDACTED:phone number] for the key")  # fmt: skip
    stored = json.dumps([cand.to_dict()])
    assert "alice" not in stored and "415-555" not in stored


def test_nothing_the_scan_keeps_names_a_home_folder(tmp_path: Path) -> None:
    t = Claude(cwd="/home/alice/shop").bash("cd /home/alice/shop && make", "/home/alice/shop/a.c:3:1: error: x", 2)
    t.say("The problem is that `CFLAGS` misses `-std=c11`.").edit("/home/alice/shop/Makefile")
    t.bash("cd /home/alice/shop && make", "ok").say("- Added `-std=c11` to `CFLAGS` so C11 code compiles")
    [cand] = lessons(t.write(tmp_path))[0]
    stored = json.dumps(cand.to_dict())
    assert "alice" not in stored and "~/shop" in stored


# ---- dedup on meaning ---------------------------------------------------------------------------


def test_distinct_lessons_sharing_a_command_stay_distinct(tmp_path: Path) -> None:
    gcc = "gcc -I include -O2 main.c build/libvsla.a -lm -lpthread -o main"
    t = Claude().bash(gcc, "main.c:(.text+0x10): undefined reference to `pthread_create'", 1)
    t.say("The issue is that `-lpthread` must come after the archive.").edit("/p/Makefile").bash(gcc, "")
    t.say("- Moved `-lpthread` to the end of the link line so the archive's symbols resolve")
    t.user("now the math").bash(gcc, "main.c:(.text+0x90): undefined reference to `sqrtf'", 1)
    t.say("The problem is that `sqrtf` needs `-lm` after the objects that use it.").edit("/p/Makefile")
    t.bash(gcc, "").say("- Added `-lm` after `build/libvsla.a` so `sqrtf` links")
    found = lessons(t.write(tmp_path))[0]
    assert len(found) == 2 and len({c.key for c in found}) == 2


def test_one_lesson_from_two_sessions_merges_and_a_general_one_keeps_its_trigger(tmp_path: Path) -> None:
    from lessonbank.scan.candidates import Weights, merge

    a = Claude("s1").bash("nvcc --version", "nvcc: command not found", 127)
    a.bash("export PATH=/usr/local/cuda/bin:$PATH && nvcc --version", "ok")
    b = Claude("s2").bash("nvcc -o k k.cu", "/bin/bash: line 1: nvcc: command not found", 127)
    b.bash("/usr/local/cuda/bin/nvcc -o k k.cu", "ok")
    store: dict[str, Candidate] = {}
    for path in (a.write(tmp_path, "a.jsonl"), b.write(tmp_path, "b.jsonl")):
        merge(store, lessons(path)[0], Weights())
    [cand] = store.values()
    assert cand.sessions == ["s1", "s2"] and cand.key == "notfound|nvcc"
    assert "k.cu" not in cand.commands[0] and "version" not in cand.commands[0]


# ---- distilling with the user's own agent (the real CLI runs in tests/e2e/test_distill_e2e.py) -------------


def test_an_agents_answer_is_read_by_the_lesson_parser_and_redacted() -> None:
    from lessonbank.scan import agent

    cand = Candidate(key="k", tier=2, kind="fix", when="mechanical", do="mechanical")
    answer = ("Here it is.\n#lesson\ntitle: Sign commits\nwhen: committing in this repository\n"
              "do: sign with gpg; ask bob@example.com for the key\ntool: Bash\ntrigger: git commit\n#/lesson")  # fmt: skip
    assert agent.apply(cand, answer, "`claude -p`") == agent.Verdict("lesson")
    assert (cand.title, cand.when, cand.commands, cand.notes) == (
        "Sign commits", "committing in this repository", ["git commit"], "distilled by `claude -p`",
    )  # fmt: skip
    assert cand.do == "sign with gpg; ask [REDACTED:email] for the key"
    other = Candidate(key="j", tier=2, kind="fix", when="w", do="d")
    assert agent.apply(other, "No lesson.", "x").outcome == "no-lesson" and other.when == "w"
    assert agent.apply(other, "I think it is fine", "x").outcome == "failed"
