"""Recurring failures: the same error met in two sessions is a lesson candidate, written from the history. Pure.

A failed shell call of a teachable kind (scan/failures) opens a watch over the next calls of the
session. What worked instead is read from them: the next successful call of the same program
without the flawed word (`gh pr view --json` after `--jsn`, `pnpm run test:unit` after a missing
`test`, `bench/run.sh` after `./run.sh`), or, for local state in the way, the commands run before
the same command succeeded (`rm -f .git/index.lock`), else the fix the tool's own output names.
A way round that switches a safety check off (`--no-gpg-sign`, `--no-verify`, `--force`) is never
written as the fix: a person says whether that is allowed. Each kind writes its lesson in general
words, with a trigger on the flawed word that stays quiet on the fixed command; where only a
model could say what to do, the lesson says so and waits for review with its evidence.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from lessonbank.matching import check_commands
from lessonbank.scan import failures, outcomes, shellfail
from lessonbank.scan.events import Candidate

LOOKAHEAD = 8  # shell calls after the failure in which the way round is looked for
NEEDS_WORDS = "(no instruction could be read from the history: write one, or run `bank review --distill`)"
BYPASS = re.compile(
    r"--no-verify\b|--no-gpg-sign\b|gpgsign[= ]+false\b|--force(?:-with-lease)?\b|\bpush\b.*(?<![\w-])-f\b"
    r"|--break-system-packages\b|--insecure\b|--skip-[\w-]+|--no-check[\w-]*|--allow-unauthenticated\b"
    r"|--ignore-scripts\b|--legacy-peer-deps\b"
)
_TOKEN = {
    "unknown-command": re.compile(
        r"(?i)unknown (?:sub)?command[: ]+[\"'‘`]?([\w:.-]+)|unknown (?:shorthand )?(?:flag|option|argument)s?[: ]+"
        r"[\"'‘`]?(-{0,2}[\w-]+)|unrecognized (?:option|argument|arguments|command|subcommand)[: ]+[\"'‘`]?(-{0,2}[\w=-]+)"
        r"|invalid choice: [\"'‘]([\w-]+)|[\"'‘]([\w-]+)[\"'’] is not a [\w-]+ command|no such (?:command|subcommand|option)"
        r"[: ]+[\"'‘`]?(-{0,2}[\w-]+)|extra operand [\"'‘]([^\"'’\s]+)|unexpected argument [\"'‘]([^\"'’\s]+)"
        r"|illegal option -- ?(\w)|invalid (?:option|subcommand)[: ]+(?:-- )?[\"'‘]?(-{0,2}[\w-]+)"
    ),
    "missing-script": re.compile(
        r"(?i)missing script:? [\"'‘]?([\w:.-]+)|Command \"([\w:.-]+)\" not found|No rule to make target [`'‘]([\w.-]+)"
        r"|Task '([\w:.-]+)' not found|no such task:? [\"'‘]?([\w:.-]+)"
    ),
    "path": re.compile(
        r"cannot access [\"'‘]([^\"'’\n]+)[\"'’]|can't open file [\"'‘]([^\"'’\n]+)[\"'’]"
        r"|(?:^|: )([^\s:\"'‘]+): No such file or directory",
        re.M,
    ),
    "not-found": re.compile(r"(?m)([\w.+-]+): command not found|\b([\w.+-]+): not found$|[\"'‘]([\w.-]+)[\"'’] is not recognized"),
}
_FIXED_IN_PLACE = frozenset(("check", "module", "other"))  # the same command passing later ends the episode
# Flags whose value is the next word: the package managers' (check_commands), then git's, cargo's, kubectl's.
_VALUE_FLAGS = check_commands.PM_FLAGS_WITH_VALUE | {"-c", "--project", "-p", "--manifest-path", "--git-dir", "--work-tree",
                                                    "--context", "-n", "--namespace"}  # fmt: skip
# Programs whose first word is data, not a subcommand (`echo hi`, `ssh host`, `python3 -c`).
_NO_SUBCOMMANDS = frozenset(("ssh", "echo", "printf", "cat", "ls", "cd", "python", "python3", "node", "bash", "sh", "zsh",
                             "sudo", "timeout", "grep", "rg", "sed", "awk", "find", "powershell", "cmd", "curl", "wget",
                             "dig", "ping", "nslookup", "which", "rm", "cp", "mv", "mkdir", "touch", "chmod", "head",
                             "tail", "gcc", "g++", "clang", "nvcc", "pdflatex", "latexmk"))  # fmt: skip


@dataclass
class Lesson:
    """What a recurring failure teaches: title, situation, instruction, trigger, and how sure the history makes it."""

    title: str
    when: str
    do: str
    commands: list[str]
    keywords: list[str]
    confirmed: bool  # the history (or the tool's own words) shows what works
    written: bool  # an instruction in general words, not a placeholder


def token(kind: str, line: str) -> str:
    """The word a failure names as what is wrong: the flag, subcommand, script, path or tool."""
    pattern = _TOKEN.get(kind)
    match = pattern.search(line) if pattern is not None else None
    if match is None:
        return ""
    word = next((g for g in match.groups() if g), "").strip()
    if kind == "path":
        word = word.rstrip("/*").removeprefix("'")
    return word


def words(command: str) -> list[str]:
    return outcomes.display(command).replace('"', " ").replace("'", " ").split()


def has_word(command: str, word: str) -> bool:
    """Whether `word` is one of the command's words (or a path ending in it), not part of another."""
    if not word:
        return False
    return bool(re.search(rf"(?<![\w.-]){re.escape(word)}(?![\w-])", outcomes.display(command)))


def works(waiting: _Waiting, command: str, status: str) -> bool:
    """Whether one later call is the way round the failure `waiting` waits on."""
    failure, flawed, kind = waiting.failure, waiting.flawed, waiting.failure.kind
    ok = status == "ok" and not outcomes.status_masked(command)
    same = failures.program(command) == failure.program
    if ok and same and kind in _FIXED_IN_PLACE and _head(command) == waiting.head:
        return True  # fixed in the session: the fixed-check episode is the lesson
    if ok and same and kind == "local-state" and _head(command) == waiting.head:
        return True  # the same command again, once what was in the way was cleared
    differs = command.strip() != waiting.failing.strip()
    if ok and same and differs and kind in ("unknown-command", "missing-script") and flawed and not has_word(command, flawed):
        return True
    if ok and kind == "not-found" and flawed and flawed in shellfail.heads(command):
        return True  # the tool runs now: what was run before it (an install) set it up
    if ok and kind == "path" and flawed:
        base = flawed.rstrip("/").rsplit("/", 1)[-1]
        found = next((w for w in words(command) if w.rstrip("/").endswith("/" + base) and w != flawed), "")
        if found and not has_word(command, flawed):
            return True
    return False


def _head(command: str) -> str:
    """`git commit`, `pnpm test`: a program and, for tools with subcommands, the first word after its options."""
    parts = words(command)
    prog = failures.program(command)
    at = next((i for i, w in enumerate(parts) if w.rsplit("/", 1)[-1].removesuffix(".exe") == prog), -1)
    if at < 0:
        return prog
    rest = parts[at + 1 :]
    for i, w in enumerate(rest):
        if not w.startswith("-") and not (i and rest[i - 1] in _VALUE_FLAGS):
            # a subcommand is a plain word (`pr`, `ready`, `type-check`), not a file, a path or a value
            return f"{prog} {w}" if re.fullmatch(r"[a-z][\w:-]*", w) and prog not in _NO_SUBCOMMANDS else prog
    return prog


def _anchor(prog: str) -> str:
    """The start of a command running `prog`: wrappers and a path to it allowed (`sudo`, `./node_modules/.bin/`)."""
    return rf"^(?:(?:sudo|npx|pnpx|bunx)\s+)?(?:\S*/)?{re.escape(prog)}\b"


def _changed(failing: str, passing: str) -> list[str]:
    """The words of the passing call the failing one did not have (`--json`, `test:unit`)."""
    before = set(words(failing))
    return [w for w in dict.fromkeys(words(passing)) if w not in before and not w.startswith(("/", "~", "$"))][:2]


def lesson(failure: failures.Failure, failing: str, passing: str, between: list[str], hint: str) -> Lesson | None:
    """The lesson a recurring failure of a teachable kind states (`hint`: the fix the tool's output named),
    or None for a kind no template covers."""
    kind, prog, line = failure.kind, failure.program, failure.line
    said = outcomes.stable_error(line)[:120]
    flawed = token(kind, line)
    shown = outcomes.display(passing)[:160]
    risky = bool(passing) and (bool(BYPASS.search(passing)) and not BYPASS.search(failing))
    if risky:
        passing, shown = "", ""
    owner = re.match(r"^([\w.-]+): ", line)
    inner = owner is not None and owner.group(1) != prog and owner.group(1) in words(failing)
    if inner and kind in ("unknown-command", "missing-script"):
        flawed = ""  # the error is another program's, run inside this one (`ssh host "ps aux"`): no trigger sees it
    if len(flawed.lstrip("-")) < 2:
        flawed = ""  # a bundled letter (`ps: unrecognized option: a`) names no word a trigger can key on
    if kind == "unknown-command" and flawed:
        what = "flag" if flawed.startswith("-") else "subcommand or argument"
        new = _changed(failing, passing) if passing else []
        fix = (f"use `{new[0]}`, as in `{shown}`" if new else f"run it as `{shown}`") if passing else (
            f"use `{hint}` (the tool's own suggestion)" if hint else f"check `{prog} --help` for what it accepts")
        return Lesson(
            f"`{prog}` has no {what} `{flawed}`",
            f"running `{prog}` with `{flawed}`: this version of `{prog}` has no such {what} (`{said}`)",
            f"Do not pass `{flawed}` to `{prog}`: {fix}.",
            [_anchor(prog) + rf".*(?<![\w-]){re.escape(flawed)}(?![\w-])"], [prog.lower()],
            bool(passing or hint), True,
        )  # fmt: skip
    if kind == "missing-script" and flawed:
        runner = r"(?:\s+-\S+)*(?:\s+run(?:-script)?)?\s+" if prog != "make" else r"\b.*\s"
        alt = _changed(failing, passing) if passing else []
        fix = (f"run `{shown}` instead" if not alt else f"use `{alt[0]}` instead (as in `{shown}`)") if passing else (
            f"list what exists first (`{prog} run`, or the scripts in package.json; `make help` or the Makefile)")
        return Lesson(
            f"There is no `{flawed}` script for `{prog}` here",
            f"running `{prog} {flawed}`: this project has no `{flawed}` script or target (`{said}`)",
            f"Do not run `{prog} {flawed}`: {fix}.",
            [_anchor(prog) + runner + rf"{re.escape(flawed)}(?![\w:.-])"], [flawed.lower()],
            bool(passing), True,
        )  # fmt: skip
    if kind == "path" and flawed and passing:
        base = flawed.rstrip("/").rsplit("/", 1)[-1]
        found = next(w for w in words(passing) if w.rstrip("/").endswith("/" + base))
        return Lesson(
            f"`{base}` is at `{found}`, not `{flawed}`",
            f"using `{flawed}` with `{prog}`: there is no such file or folder there (`{said}`)",
            f"Use `{found}` (as in `{shown}`), not `{flawed}`.",
            [rf"(?<![\w/.-]){re.escape(flawed)}(?![\w/.-])"], [base.lower()], True, True,
        )  # fmt: skip
    if kind == "local-state":
        head = _head(failing)
        steps = [outcomes.display(c)[:120] for c in between[:2]]
        if steps and not any(BYPASS.search(s) for s in steps):
            do = f"Run {' then '.join(f'`{s}`' for s in steps)}, then retry `{head}`."
        elif hint and not BYPASS.search(hint):
            do = f"Do what `{prog}` says: `{hint}`, then retry `{head}`."
        else:
            do = ""
        confirmed = bool(do)
        if risky:
            do = (f"Do not switch the check off to get round it (the way round seen was `{outcomes.display(failing)[:60]}` "
                  f"with a bypass flag): ask the user, or fix what is in the way. {NEEDS_WORDS}")  # fmt: skip
        return Lesson(
            f"`{head}` fails: {said[:50]}",
            f"running `{head}` when local state is in the way (`{said}`)",
            do or f"Find out what is in the way before retrying `{head}` {NEEDS_WORDS}.",
            [_anchor(prog) + (rf".*\b{re.escape(head.split(' ', 1)[1])}\b" if " " in head else "")], [prog.lower()],
            confirmed, confirmed and not risky,
        )  # fmt: skip
    if kind in ("not-found", "check", "module", "path", "other", "terminal", "push", "unknown-command"):
        head = _head(failing)
        return Lesson(
            f"`{head}` keeps failing: {said[:50]}",
            f"running `{head}` (it failed the same way in earlier sessions: `{said}`)",
            f"It failed the same way before: {NEEDS_WORDS}.",
            [_anchor(prog) + (rf".*\b{re.escape(head.split(' ', 1)[1])}\b" if " " in head else "")], [prog.lower()],
            False, False,
        )  # fmt: skip
    return None


# ---- watching a session for the way round ------------------------------------------------------

WATCHED = frozenset(("terminal", "not-found", "unknown-command", "missing-script", "local-state", "push", "path",
                     "module", "check", "other"))  # fmt: skip
# Looking is not a mistake: `which x`, `ls missing/`, `grep` with no match say only that something is absent.
_LOOKING = frozenset(("which", "where", "type", "command", "test", "[", "find", "ls", "stat", "grep", "rg", "pgrep",
                      "file", "dir", "Test-Path", "Get-Command", "diff", "cmp"))  # fmt: skip
MAX_WATCHES = 6


class _Waiting:
    """A failure waiting for its way round, and what it has seen of the calls after it."""

    def __init__(self, failure: failures.Failure, failing: str, time: str, hint: str) -> None:
        self.failure, self.failing, self.time, self.hint = failure, failing, time, hint
        self.flawed = token(failure.kind, failure.line)  # what the failure names as wrong
        self.head = _head(failing)
        self.calls = 0  # later calls seen
        self.between: list[str] = []  # the fix actions among them

    def ended(self, passing: str) -> dict[str, Any]:
        """Its evidence item: the call that worked ("" when none did) and the fix actions run before it."""
        failure = self.failure
        return {
            "failing": self.failing, "time": self.time, "kind": failure.kind, "program": failure.program,
            "line": failure.line, "signature": failure.signature, "hint": self.hint, "named": self.flawed,
            "passing": passing, "commands": self.between[-4:] if passing else [],
        }  # fmt: skip


class Watch:
    """The failures of one session waiting for their way round; each ends as one evidence item."""

    def __init__(self) -> None:
        self.open: list[_Waiting] = []

    def feed(self, command: str, status: str, output: str, time: str) -> list[dict[str, Any]]:
        """The watches this call ends (the way round found, or no call left to find it in)."""
        # Each waiting failure weighs this call alone: the calls before it were not its way round.
        done = []
        kept = command[:2000]
        for waiting in list(self.open):
            waiting.calls += 1
            passing = works(waiting, kept, status)
            if not passing and status == "ok" and outcomes.is_fix_action(kept):
                waiting.between.append(kept)
            if passing or waiting.calls >= LOOKAHEAD:
                self.open.remove(waiting)
                if not (passing and waiting.failure.kind in _FIXED_IN_PLACE):
                    done.append(waiting.ended(kept if passing else ""))
        if status == "fail":
            self._start(command, output, time)
        return done

    def flush(self) -> list[dict[str, Any]]:
        """Every open watch, ended where the transcript ends."""
        done = [waiting.ended("") for waiting in self.open]
        self.open = []
        return done

    def _start(self, command: str, output: str, time: str) -> None:
        found = failures.classify(command, output)
        if found is None or found.kind not in WATCHED or found.program in _LOOKING:
            return
        if any(waiting.failure.signature == found.signature for waiting in self.open):
            return
        if len(self.open) >= MAX_WATCHES:
            self.open.pop(0)
        self.open.append(_Waiting(found, command[:2000], time, failures.hint(output)))


def candidate(item: dict[str, Any], cand: Candidate, evidence: dict[str, Any], clean: Callable[[str], str]) -> Candidate:
    """A recurring failure's candidate: its evidence (redacted); the lesson is written by distill."""
    cand.tools, cand.tags = ["Bash"], [f"kind:{item['kind']}"]
    cand.signals = {"recurs": 1}
    evidence.update({"failure": item["kind"],
                "failing": clean(outcomes.display(str(item["failing"])))[:300], "excerpt": [clean(str(item["line"]))],
                "signature": item["signature"], "program": item["program"], "named": clean(str(item["named"]))})  # fmt: skip
    if item.get("passing"):
        evidence["passing"] = clean(outcomes.display(str(item["passing"])))[:300]
    if item.get("commands"):
        evidence["commands"] = [clean(outcomes.display(str(c)))[:200] for c in item["commands"]]
    if item.get("hint"):
        evidence["hint"] = clean(str(item["hint"]))
    cand.evidence = [evidence]
    return cand
