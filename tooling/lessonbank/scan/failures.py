"""What kind of failure a shell call met, the line that says so, and a signature that recurs across sessions. Pure.

Kinds, in the order they are tried (the first whose pattern is in the output wins):

- environment: the agent's own shell broke (Git Bash's `cygheap` fork failures): nobody's mistake;
- terminal: the command wanted a terminal or a password (`sudo: a terminal is required`);
- not-found: the tool is not installed or not on PATH (`command not found`, `is not recognized`);
- unknown-command: a subcommand or flag the tool does not have (`unknown command`, `unknown flag`);
- missing-script: a package script or make target that does not exist (`missing script: lint`);
- local-state: local state in the way, often with the tool's own hint (`index.lock`, `MERGE_HEAD exists`);
- push: the remote refused a push (behind, push protection);
- module: a language package not installed (`No module named`, `Cannot find module`);
- network: the network or a remote host (`Could not resolve`, `connection refused`, `timed out`);
- path: a file or folder not where the command expects (`No such file or directory`);
- check: a test, build or lint run that failed on the code;
- other.

The signature is the kind, the program and the stable part of that line (paths, numbers and
case flattened): the same mistake made again in another session has the same signature.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from lessonbank.index.compiled_read import fold
from lessonbank.matching import regex_compiler, shell, shell_words
from lessonbank.scan import outcomes

KINDS = ("environment", "terminal", "not-found", "unknown-command", "missing-script", "local-state", "push",
         "module", "network", "path", "check", "other")  # fmt: skip
# Kinds a lesson can prevent: the agent's own call was wrong for this project or machine.
TEACHABLE = frozenset(("terminal", "not-found", "unknown-command", "missing-script", "local-state", "push", "path"))

_PATTERNS = (
    ("environment", r"child_copy: cygheap read copy failed|Command failed: cygpath -u|\bWin32 error 299\b"),
    ("terminal", r"\bsudo: (?:a terminal is required|a password is required|no tty present)|\bnot a tty\b"
                 r"|Inappropriate ioctl for device|\binput device is not a TTY\b|stdin is not a terminal"
                 r"|\bInput is not a terminal\b|\brequires an interactive (?:terminal|shell)\b"),
    ("not-found", r"(?m)(?:^|: )[\w.+-]+: command not found|\b[\w.+-]+: not found$"
                  r"|is not recognized as (?:an internal or external command|the name of a cmdlet)"
                  r"|executable file not found in \$PATH"),
    ("unknown-command", r"(?i)\bunknown (?:sub)?command\b|\bunknown (?:shorthand )?(?:flag|option|argument)\b"
                        r"|\bunrecognized (?:option|argument|arguments|command|subcommand)\b|\binvalid choice\b"
                        r"|\bis not a [\w-]+ command\b|\bno such (?:command|subcommand|option)\b|\bextra operand\b"
                        r"|\bunexpected argument\b|\billegal option\b|\binvalid (?:option|subcommand)\b"
                        r"|\bunrecognized or incomplete command line\b|\bunknown arguments?:"),
    ("missing-script", r"(?i)\bmissing script:|ERR_PNPM_NO_SCRIPT|\bCommand \"[\w:.-]+\" not found"
                       r"|No rule to make target [`'‘][\w.-]+[`'’](?:\.|,)\s+Stop|\bTask '[\w:.-]+' not found"
                       r"|\bno such task\b"),
    ("local-state", r"(?i)\bindex\.lock\b|\bCould not lock\b|\bdatabase is locked\b|\banother git process\b"
                    r"|\bMERGE_HEAD exists\b|\bnot concluded your merge\b|\brebase in progress\b|\bout of sync\b"
                    r"|\bwould be overwritten by (?:merge|checkout)\b|\bplease commit or stash\b|\bstale info\b"
                    r"|\bis locked\b|\block(?:file)? (?:is )?held\b|\baddress already in use\b"
                    r"|\bgpg failed to sign\b|\bagent has no identities\b|\bpending migrations?\b"),
    ("push", r"\[(?:remote )?rejected\]|\bGH013\b|\bpush protection\b|\bfailed to push some refs\b"),
    ("module", r"No module named|ModuleNotFoundError|Cannot find module|ERR_MODULE_NOT_FOUND"
               r"|externally-managed-environment"),
    ("network", r"(?i)could not resolve|\bENOTFOUND\b|connection refused|\bConnectionRefused\b|FailedToOpenSocket"
                r"|no servers could be reached|Host key verification failed|Network is unreachable"
                r"|\bECONNREFUSED\b|connection timed out|\bOperationTimeout\b"),
    ("path", r"(?i)no such file or directory|\bcannot access\b|can't open file|cannot find (?:the )?path"
             r"|\bdoes not exist\b|\bENOENT\b|\bnot a directory\b"),
)
_COMPILED = tuple((kind, re.compile(pattern)) for kind, pattern in _PATTERNS)
# For each pattern, the literal runs every match passes through one of (regex_compiler.alternatives),
# folded as the compiled index folds its choices (compiled_read.fold: re.IGNORECASE's look-alikes of
# ASCII letters, `\s` as a space): an output that holds none of them is not searched (these
# searches, each over up to 6,000 characters, were a third of the scan).
_NEEDED = tuple(
    tuple(tuple(fold(run) for run in choice) for choice in regex_compiler.alternatives(pattern))
    for _, pattern in _PATTERNS
)
_SHELL_PREFIX = re.compile(r"^(?:\S*/)?(?:ba|z|da|k|a)?sh: (?:line \d+: |eval: line \d+: )?|^\(eval\):\w+:\d+: ")
_CD = re.compile(r"\bcd: |\bcd:\d+: ")
_PRELUDE = frozenset(("cd", "export", "set", "source", ".", "pushd", "popd", "mkdir", "rm", "echo", "sleep",
                      "true", "unset", "printf", "clear"))  # fmt: skip
_HINT = re.compile(
    r"(?i)(?:\bhint:\s*|\bto fix this,?\s*|\b(?:please |you may |try )?(?:run|use|try)\s+)([`'\"][^`'\"\n]{3,120}[`'\"])"
    r"|\(use \"([^\"\n]{3,120})\"|\bdid you mean[: ]+[`'\"‘]?([\w .:/=-]{2,80}?)[`'\"’]?\??$",
    re.M | re.I,
)


@dataclass(frozen=True)
class Failure:
    """A failed shell call's kind, its program, the line that says what failed, and its signature."""

    kind: str
    program: str  # `git`, `pnpm`, `blocky`: the first command that is not cd, export…
    line: str  # the error line, as the output said it
    signature: str

    @property
    def teachable(self) -> bool:
        return self.kind in TEACHABLE


@lru_cache(maxsize=1024)  # every open watch asks it of each later call
def program(command: str) -> str:
    """The program a command runs for its work: past `cd …&&`, exports and wrappers (`sudo`, `timeout`)."""
    first = ""
    for simple in sorted(shell.commands(command), key=lambda c: c.depth):  # `make -j$(nproc)` runs make
        words = simple.words[shell_words.command_start(simple.words) :]
        if not words:
            continue
        name = shell_words.basename(words[0]).removesuffix(".exe")
        first = first or name
        if name not in _PRELUDE:
            return name
    return first


def hint(output: str) -> str:
    """The fix the tool itself names in its output (`hint: …`, `To fix this, run …`, `did you mean …`), or ""."""
    match = _HINT.search(output[:4000])
    if match is None:
        return ""
    return next(g for g in match.groups() if g).strip("`'\"‘’ ")


def classify(command: str, output: str) -> Failure | None:
    """The kind of a failed call's failure, or None when the output says nothing at all."""
    text = outcomes.strip_ansi(output[:6000])
    prog = program(command)
    kind, line = "", ""
    folded = fold(text)
    for (name, pattern), needed in zip(_COMPILED, _NEEDED, strict=True):
        if not all(any(run in folded for run in choice) for choice in needed):
            continue
        match = pattern.search(text)
        if match:
            start = text.rfind("\n", 0, match.start()) + 1
            end = text.find("\n", match.end())
            kind, line = name, text[start : end if end >= 0 else len(text)].strip()[:200]
            break
    if kind == "path" and not _CD.search(line) and outcomes.check_of(command) is not None:
        kind = ""  # a build's missing header or a test's missing fixture: the code, not the call
    if not kind:
        found = outcomes.error_lines(text, 1)
        if not found:
            return None
        kind = "check" if outcomes.check_of(command) is not None else "other"
        line = found[0]
    stable = outcomes.signature(_SHELL_PREFIX.sub("", outcomes.stable_error(line)))
    if len(stable) < 6:
        return None  # "Error", "1": no way to tell one failure from another
    # The line names what failed (`nvcc: command not found`, `cd: build: …`); a generic one needs its program.
    named = kind in ("environment", "terminal", "not-found", "path", "network")
    return Failure(kind, prog, line, f"{kind}|{stable}" if named else f"{kind}|{prog}|{stable}")
