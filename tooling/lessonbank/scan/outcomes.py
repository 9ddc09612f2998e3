"""Shell commands and tool results, read for mining transcripts: which check a command ran, how it ended. Pure.

Which commands are checks, and under what name, is matching/check_commands.py's answer (the hooks' too);
the command is cut into simple commands by matching/shell.py. This module adds what only the scan needs:
whether the exit status was masked, what the run was narrowed to, whether a command may have fixed
something, and how a tool result ended (status, error lines, their signature).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache

from lessonbank.matching import check_commands, shell, shell_words

# Category of a check -> the rule a lesson about it is proposed to graduate to.
DESTINATIONS = {"test": "rule:testing", "build": "rule:build", "lint": "rule:lint"}


@dataclass(frozen=True)
class Check:
    """A command that verifies the project, as matching/check_commands.py names it, and how it ran."""

    name: str  # what the hooks' ledger calls it too: "pytest", "pnpm test", "make test"
    key: str  # the same check across runs, e.g. "pytest", "pnpm test", "make -C sub test", "gcc a.c"
    category: str  # test | build | lint
    masked: bool = False  # exit status hidden by `| head`, `|| true`, `; echo`, `$(…)` ...
    targets: tuple[str, ...] = ()  # files or selectors it was narrowed to (`tests/x.py`, `-k name`)
    keys: tuple[str, ...] = ()  # every check the command runs (`cmake .. && make`: cmake and make)
    skips: str = ""  # a flag that leaves part of the check out (`--ignore`, `-k "not …"`, `--exclude`)

    @property
    def tool(self) -> str:
        """The runner, for tags: pytest, pnpm, make, ..."""
        return self.name.split(" ", 1)[0]

    @property
    def destination(self) -> str:
        return DESTINATIONS[self.category]


_VALUE_FLAGS = {"-p", "-c", "-o", "-n", "-j", "-C", "--rootdir", "--tb", "--maxfail", "--reporter",
                "--timeout", "--workers", "--config", "--filter", "-F", "--dir", "-w", "--workspace",
                "--prefix", "--cwd", "--project", "--pool", "--environment", "-e"}  # fmt: skip
_SELECTOR_FLAGS = {"-k", "-m", "-t", "--testNamePattern", "--grep", "-g", "--run", "--test", "-run"}
_NOT_TARGETS = {"run", "watch", "--", "test", "exec"}


def _targets(words: list[str]) -> tuple[str, ...]:
    """The positional arguments and selectors that narrow a check to part of the project."""
    out: list[str] = []
    it = iter(words)
    for word in it:
        if word in _SELECTOR_FLAGS:
            out.append(f"{word} {next(it, '')}".rstrip())
        elif word in _VALUE_FLAGS:
            next(it, None)
        elif not word.startswith(("-", "+")) and word not in _NOT_TARGETS and "=" not in word:
            out.append(word.rstrip("/"))
    return tuple(sorted(set(out)))


_SKIPS = re.compile(
    r"(?:^|\s)(--ignore|--deselect|--exclude|--skip|--testPathIgnorePatterns|--exclude-task)\b"
    r"|(?:^|\s)(-[km]|--testNamePattern)[\s=]+[\"']?(not\b|\^\(\?!)"
)


def skips(command: str) -> str:
    """The flag by which a run leaves part of the check out (`--ignore`, `-k "not …"`), or ""."""
    match = _SKIPS.search(command)
    if match is None:
        return ""
    return match.group(1) or f"{match.group(2)} {match.group(3)}"


def _filter(words: list[str]) -> tuple[str, ...]:
    """A package manager's workspace filter (`pnpm --filter web test`): it narrows the run too."""
    for index, word in enumerate(words[:-1]):
        if word in ("--filter", "-F", "--workspace", "-w") and words[0] in check_commands.PACKAGE_MANAGERS:
            return (f"{word} {words[index + 1]}",)
    return ()


def covers(passing: tuple[str, ...] | list[str], failing: tuple[str, ...] | list[str]) -> bool:
    """Whether a passing run checked at least what the failing run checked (not a narrower run)."""
    if not passing:
        return True
    if not failing:
        return False
    under = [(f, p) for f in failing for p in passing if f == p or f.startswith((p + "/", p + "::"))]
    # every failing target is checked, and no passing target narrows the run further
    return {f for f, _ in under} == set(failing) and {p for _, p in under} == set(passing)


def key_regex(key: str) -> str:
    """A trigger regex matching a check's key words in order, e.g. `\\bpnpm\\b.*\\btest\\b`."""
    return r".*".join(rf"\b{re.escape(w)}\b" if re.match(r"\w", w) else re.escape(w) for w in key.split())


def invocation_regex(name: str) -> str:
    """A trigger for a program and its subcommand at the start of a command: `git push` matches `git -C x push`,
    not `git stash push`; `pnpm test` matches `pnpm --filter web test`. `sudo` and a path to the program are allowed."""
    tool, _, rest = name.partition(" ")
    head = rf"^(?:sudo\s+)?(?:\S*/)?{re.escape(tool)}\b"
    if not rest:
        return head
    subs = r"\s+".join(re.escape(w) for w in rest.split())
    if tool in check_commands.PACKAGE_MANAGERS:
        subs = rf"(?:run\s+)?{subs}"  # `pnpm run test` is `pnpm test`
    # Options (and their values) may come first; a first word that is no option is another subcommand.
    return rf"{head}(?:\s+-\S+(?:\s+\S+)*?)?\s+{subs}(?![\w-])"


_TEST_FILE = re.compile(r"[\w./-]+\.(?:py|ts|tsx|js|jsx|mjs|go|rs|java|rb|php|cs|kt|swift)\b")


def names_failing(passing: tuple[str, ...], excerpt: list[str]) -> bool:
    """Whether a narrower passing run checked every test file the failing run's errors named (and one was named)."""
    named = {m.lstrip("./") for line in excerpt for m in _TEST_FILE.findall(line)}
    targets = [t.lstrip("./").split("::", 1)[0] for t in passing if not t.startswith("-")]
    return bool(named) and bool(targets) and all(
        any(n == t or n.startswith(t.rstrip("/") + "/") or n.endswith("/" + t) for t in targets) for n in named
    )


def display(command: str) -> str:
    """A command as a lesson shows it: leading `cd somewhere &&` steps dropped, first line only."""
    text = command.strip()
    while True:
        match = re.match(r"^cd\s+(?:\"[^\"]*\"|'[^']*'|\S+)\s*(?:&&|;)\s*", text)
        if not match:
            return text.split("\n", 1)[0] if "<<" not in text else text.split("\n", 1)[0] + " …"
        text = text[match.end() :]


_HINT_WORD = re.compile(r"[^\s|&;()<>\"'`=]+")  # words as str.split() sees them, operators and quotes cut out


def _may_be_check(command: str) -> bool:
    """A cheap look for a name check_commands can call a check (a tool or a test script), before the real parse."""
    words = _HINT_WORD.findall(command)
    if not check_commands.NAMES.isdisjoint(words):
        return True
    for word in words:
        if "/" in word or word.endswith(".exe") or "test" in word:
            name = word.rpartition("/")[2].removesuffix(".exe")
            if name in check_commands.NAMES or check_commands.is_test_script(name):
                return True
    return False


def _operator(after: str) -> str:
    """The operator that decides what happens to a command's exit status: `&&`, `||`, `|`, `&`, `;` or ""."""
    op = after.replace("(", "").replace(")", "")
    for known in ("||", "&&", "|", "&"):
        if op.startswith(known):
            return known
    return ";" if op else ""


@lru_cache(maxsize=1024)
def check_of(command: str) -> Check | None:
    """The check a shell command runs (the first one in it), or None when it runs no check."""
    if not command or not _may_be_check(command):
        return None
    pipefail = "pipefail" in command
    commands = shell.commands(command)
    top = [c for c in commands if c.depth == 0]
    first: Check | None = None
    keys: list[str] = []
    for simple in commands:
        found = check_commands.classify(simple.words)
        if found is None:
            continue
        if simple.depth == 0 and found.key not in keys:
            keys.append(found.key)
        if first is not None:
            continue
        # The status seen is the last command's: anything after the check but `&&` hides the check's
        # (`make || true`, `make | tail`, `make &`, `make; echo`, `make && echo ok || echo failed`).
        rest = top[top.index(simple) :] if simple in top else []
        ops = [_operator(c.after) for c in rest]
        masked = simple.depth > 0 or any(
            op in ("||", "&") or (op == "|" and not pipefail) or (op == ";" and at + 1 < len(ops))
            for at, op in enumerate(ops)
        )
        own = set(found.key.split())
        targets = () if found.category == "build" else _targets([w for w in found.words[1:] if w not in own])
        targets = tuple(sorted(set(targets + _filter(simple.words))))
        first = Check(found.name, found.key, found.category, masked, targets, (), skips(command))
    if first is None:
        return None
    return Check(first.name, first.key, first.category, first.masked, first.targets, tuple(keys), first.skips)


@lru_cache(maxsize=1024)  # as program: asked of each later call by every open watch
def status_masked(command: str) -> bool:
    """Whether any command's exit status is hidden by what follows it (`||`, `|`, `&`): it confirms nothing."""
    if not any(op in command for op in ("|", "&")):
        return False
    pipefail = "pipefail" in command
    ops = [_operator(c.after) for c in shell.commands(command) if c.depth == 0]
    return any(op in ("||", "&") or (op == "|" and not pipefail) for op in ops)


# A compiler's message about the code itself (not a missing tool or a failing assertion).
COMPILE_ERROR = re.compile(
    r"\S+\.\w+:\d+(?::\d+)?:\s*(?:fatal )?error\b|\berror TS\d+|undefined reference to|\bundeclared\b"
    r"|has no member named|implicit declaration|SyntaxError|IndentationError|cannot find symbol"
)
_WRITTEN = re.compile(r"(?:>>?|\btee(?:\s+-a)?)\s*['\"]?([\w./~-]+\.\w+)")


def written_files(command: str) -> list[str]:
    """Files a command writes by redirection or `tee` (`printf … > t.c`): what the agent wrote itself."""
    return _WRITTEN.findall(command) if ">" in command or "tee" in command else []


# Read-only commands are investigation, not a fix.
_READ_ONLY = {
    "ls", "cat", "sed", "nl", "rg", "grep", "find", "head", "tail", "pwd", "echo", "which", "wc",
    "file", "tree", "stat", "less", "more", "diff", "type", "whoami", "date", "env", "printenv",
    "du", "df", "ps", "sleep", "true", "printf", "realpath", "dirname", "basename", "jq", "awk",
    "git", "gh", "uname", "id", "hostname", "history", "clear",
}  # fmt: skip
_GIT_WRITES = {"checkout", "restore", "reset", "revert", "stash", "apply", "am", "cherry-pick", "rm", "mv"}


@lru_cache(maxsize=1024)
def is_fix_action(command: str) -> bool:
    """Whether a (non-check) shell command may have changed something: installs, config, edits."""
    for simple in shell.commands(command):
        words = simple.words[shell_words.command_start(simple.words) :]
        if not words or words[0] == "cd":
            continue
        head = shell_words.basename(words[0])
        if head == "git":
            sub = next((w for w in words[1:] if not w.startswith("-")), "")
            if sub in _GIT_WRITES:
                return True
            continue
        if head == "sed" and any(w.startswith("-i") for w in words[1:]):
            return True
        if head in _READ_ONLY:
            if simple.writes:
                return True
            continue
        return True
    return False


# ---- results -----------------------------------------------------------------------------

# Said by the harness, not by the project: the agent made no mistake here.
_DENIED = (
    "requires approval", "has been denied", "haven't granted it yet", "permission to use",
    "permission for this tool use was denied",
    "was blocked. for security", "not allowed in write operations", "approval policy",
    "rejected by policy", "sandbox denied", "operation not permitted by sandbox",
)  # fmt: skip
_REJECTED = (
    "the user doesn't want to proceed", "the user doesn't want to take this action",
    "tool use was rejected", "rejected by user", "user rejected", "user denied",
)  # fmt: skip
_INTERRUPTED = ("[request interrupted by user", "interrupted by user", "aborted by user")
_INVALID = ("<tool_use_error>", "inputvalidationerror", "sibling tool call errored", "write_stdin failed")
_EXIT_RE = re.compile(r"(?:^Exit code:?|Process exited with code) (-?\d+)", re.M)
_TIMEOUT = ("command timed out after", "timed out after")


def result_status(text: str, is_error: bool) -> tuple[str, int | None, bool]:
    """(status, exit code, timed out) of a tool result.

    status: ok | fail | denied | rejected | interrupted | invalid. Only `fail` is a mistake.
    """
    head = text[:400].lower()
    if any(p in head for p in _DENIED):
        return "denied", None, False
    if any(p in head for p in _REJECTED):
        return "rejected", None, False
    if any(p in head for p in _INTERRUPTED):
        return "interrupted", None, False
    if any(p in head for p in _INVALID):
        return "invalid", None, False
    timed_out = any(p in head for p in _TIMEOUT)
    match = _EXIT_RE.search(text[:400])
    code = int(match.group(1)) if match else None
    if code in (124, 137) and not is_error:
        timed_out = True
    if code is not None:
        return ("ok" if code == 0 and not timed_out else "fail"), code, timed_out
    if timed_out:
        return "fail", None, True
    return ("fail", 1, False) if is_error else ("ok", 0, False)


# ---- error excerpts ----------------------------------------------------------------------

_STRONG = re.compile(
    r"Error\b|Exception\b|error(?:\[\w+\])?:|\bERROR\b|^[ \t]*FAIL|\bFAILED\b|\bfatal\b|panicked"
    r"|No module named|command not found|undefined reference|Segmentation fault|timed out|[Cc]annot find"
    r"|not recognized as|No such file or directory|^[ \t]*[×✗]|^[ \t]*! ",
    re.M,
)
_BANNERS = ("Exit code", "Chunk ID", "Wall time", "Process exited", "Original token count")
_WEAK = re.compile(r"(?i)\b(?:error|failed|failure|fail|assert\w*|expected|exception|traceback)\b")
_CODE_LINE = re.compile(r"^\s*(?:/\*|\*|//|#\s|\d+\s*[|│])")
_TASK_PREFIX = re.compile(r"^[\w@/.-]+:[A-Za-z][\w:-]*: ", re.M)  # `web:test: ` from turbo and the like
_STARTUP = re.compile(
    r"(?i)no module named|command not found|not recognized as an internal|is not recognized as"
    r"|cannot find module|module not found|executable file not found|no such file or directory"
    r"|could not find|not installed|enoent"
)
_NORMALIZE_PATH = re.compile(r"(?:[A-Za-z]:)?(?:[\w.~-]*[/\\])+[\w.-]*")
_NORMALIZE_NUM = re.compile(r"\b0x[0-9a-fA-F]+\b|\d+(?:\.\d+)?")
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def _clean_line(raw: str) -> str:
    return raw.strip()


# Every _STRONG match holds one of these: only the lines holding one are searched (the regex, tried at each
# position of a long output, was most of a failed check's cost).
_STRONG_PIECES = ("rror", "Exception", "ERROR", "FAIL", "fatal", "panicked", "No module named", "command not found",
                  "undefined reference", "Segmentation fault", "timed out", "annot find", "not recognized as",
                  "No such file or directory", "×", "✗", "! ")  # fmt: skip


def _strong_lines(text: str) -> Iterator[tuple[int, int]]:
    """(start, end) of each line of `text` holding a _STRONG match, in order."""
    ahead = {piece: at for piece in _STRONG_PIECES if (at := text.find(piece)) >= 0}
    while ahead:
        at = min(ahead.values())
        start = text.rfind("\n", 0, at) + 1
        end = text.find("\n", at)
        end = len(text) if end < 0 else end
        # A match never crosses a newline, and `^` and `\b` see the text around the line as the whole text would.
        if _STRONG.search(text, start, end):
            yield start, end
        for piece, where in list(ahead.items()):
            if where <= end:
                found = text.find(piece, end + 1)
                if found < 0:
                    del ahead[piece]
                else:
                    ahead[piece] = found


def _weak_lines(text: str) -> Iterator[tuple[int, int]]:
    """(start, end) of each line of `text` holding a _WEAK match, in order."""
    last_end = -1
    for match in _WEAK.finditer(text):
        if match.start() < last_end:
            continue
        start = text.rfind("\n", 0, match.start()) + 1
        end = text.find("\n", match.end())
        last_end = end = len(text) if end < 0 else end
        yield start, end


def error_lines(output: str, limit: int = 3, width: int = 200) -> list[str]:
    """The lines of an output that say what went wrong (at most `limit`), else its last lines."""
    text = _ANSI.sub("", output) if "\x1b" in output else output
    if ": " in text:  # no escape, no ANSI code; no ": ", no task prefix: a pass skipped changes nothing
        text = _TASK_PREFIX.sub("", text)
    picked: list[str] = []
    for spans in (_strong_lines, _weak_lines):
        for start, end in spans(text):
            line = _clean_line(text[start:end])
            if line and not _CODE_LINE.match(line) and not line.startswith(_BANNERS) and line not in picked:
                picked.append(line)
                if len(picked) >= limit:
                    break
        if picked:
            break
    if not picked:
        lines = [_clean_line(x) for x in text.splitlines()]
        picked = [x for x in lines if x and not x.startswith(_BANNERS)][-limit:]
    return [line[:width] for line in picked]


_LOCATION = re.compile(r"^(?:[\w./~\\-]*[/\\])?([\w.-]+):\d+(?::\d+)?:\s*|^\S+\.\w+:\(\.\w+\+0x[0-9a-f]+\):\s*")
_NOISE = re.compile(r"^(?:/bin/\w+: line \d+: |/usr/bin/\w+: (?:line \d+: )?|\./\S+: |\S*python[\d.]*(?:\.exe)?: )")


def stable_error(line: str) -> str:
    """An error line without its location (`src/a.c:3:9: `) or shell prefix: the part that recurs."""
    text = _LOCATION.sub("", line.strip())
    text = _NOISE.sub("", text)
    return " ".join(text.split())[:140]


def strip_ansi(text: str) -> str:
    """Text without its terminal colour codes."""
    return _ANSI.sub("", text) if "\x1b" in text else text


def signature(line: str) -> str:
    """An error line with paths, numbers and case flattened, so the same error matches across runs."""
    text = _NORMALIZE_PATH.sub(lambda m: m.group(0).replace("\\", "/").rsplit("/", 1)[-1], line)
    text = _NORMALIZE_NUM.sub("N", text.lower())
    text = re.sub(r"[^\w:.' -]+", " ", text)
    return " ".join(text.split())[:90]


def is_startup_error(line: str) -> bool:
    """Whether an error says the check could not start at all (missing tool, module or file)."""
    return bool(_STARTUP.search(line))
