"""Shell commands and tool results, read for mining transcripts: which command is a check, how it ended. Pure."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache

from lessonbank.kernel.check_commands import NOT_BUILD_TARGETS, PM_FLAGS_WITH_VALUE

# Category of a check -> the rule a lesson about it is proposed to graduate to.
DESTINATIONS = {"test": "rule:testing", "build": "rule:build", "lint": "rule:lint"}


@dataclass(frozen=True)
class Check:
    """A command that verifies the project: its identity across runs, category and tool."""

    key: str  # the same check across runs, e.g. "pytest", "pnpm test", "make"
    category: str  # test | build | lint
    tool: str  # the runner, for tags: pytest, pnpm, make, ...
    masked: bool = False  # exit status hidden by `| head`, `|| true`, `; echo` ...
    targets: tuple[str, ...] = ()  # files or selectors it was narrowed to (`tests/x.py`, `-k name`)

    @property
    def destination(self) -> str:
        return DESTINATIONS[self.category]


_WRAPPERS = {
    "sudo", "time", "env", "nice", "nohup", "stdbuf", "xvfb-run", "command", "exec",
    "npx", "bunx", "pnpx", "dotenv", "caffeinate",
}  # fmt: skip
_RUNNERS_WITH_RUN = {("uv", "run"), ("poetry", "run"), ("pipenv", "run"), ("pdm", "run"),
                     ("hatch", "run"), ("pnpm", "exec"), ("npm", "exec"), ("yarn", "exec"),
                     ("bundle", "exec"), ("conda", "run")}  # fmt: skip
_DIRECT = {
    "pytest": "test", "py.test": "test", "tox": "test", "nox": "test", "vitest": "test",
    "jest": "test", "mocha": "test", "ava": "test", "ctest": "test", "phpunit": "test",
    "rspec": "test", "karma": "test", "playwright": "test", "cypress": "test", "bats": "test",
    "tsc": "lint", "eslint": "lint", "ruff": "lint", "mypy": "lint", "flake8": "lint",
    "pylint": "lint", "pyright": "lint", "black": "lint", "prettier": "lint", "biome": "lint",
    "shellcheck": "lint", "golangci-lint": "lint", "clippy-driver": "lint", "stylelint": "lint",
    "make": "build", "gmake": "build", "ninja": "build", "cmake": "build", "meson": "build",
    "bazel": "build", "gcc": "build", "g++": "build", "clang": "build", "clang++": "build",
    "cc": "build", "c++": "build", "nvcc": "build", "javac": "build", "rustc": "build",
    "pdflatex": "build", "xelatex": "build", "lualatex": "build", "latexmk": "build",
    "msbuild": "build", "xcodebuild": "build", "webpack": "build", "vite": "build",
    "swiftc": "build",
}  # fmt: skip
# Subcommand-style tools: tool -> {subcommand: category}.
_SUBCOMMANDS = {
    "cargo": {"test": "test", "nextest": "test", "build": "build", "check": "build", "clippy": "lint"},
    "go": {"test": "test", "build": "build", "vet": "lint"},
    "dotnet": {"test": "test", "build": "build"},
    "swift": {"test": "test", "build": "build"},
    "mvn": {"test": "test", "verify": "test", "package": "build", "compile": "build", "install": "build"},
    "gradle": {"test": "test", "check": "test", "build": "build", "assemble": "build"},
    "./gradlew": {"test": "test", "check": "test", "build": "build", "assemble": "build"},
    "docker": {"build": "build"},
    "deno": {"test": "test", "check": "lint", "lint": "lint"},
    "bun": {"test": "test"},
    "zig": {"build": "build", "test": "test"},
}
_PACKAGE_MANAGERS = {"npm", "pnpm", "yarn", "bun"}
_SCRIPT_CATEGORIES = (
    ("test", "test"), ("spec", "test"), ("e2e", "test"), ("vitest", "test"), ("jest", "test"),
    ("lint", "lint"), ("type-check", "lint"), ("typecheck", "lint"), ("tsc", "lint"),
    ("check", "lint"), ("format:check", "lint"), ("build", "build"), ("compile", "build"),
)  # fmt: skip
_SOURCE_SUFFIXES = (".c", ".cc", ".cpp", ".cxx", ".cu", ".m", ".java", ".rs", ".tex", ".swift")
_ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_PYTHON = re.compile(r"^(?:python[0-9.]*|py|python\.exe)$")


_TOKEN = re.compile(r"""'[^']*'?|"(?:\\.|[^"\\])*"?|\\.|\|\||&&|[|;&\n]|[^'"\\|;&\n]+""")
_OPERATORS = {"||", "&&", "|", ";", "&", "\n"}


def _split_top(command: str) -> list[tuple[str, str]]:
    """Cut a command line into (segment, operator-after) pairs, ignoring operators inside quotes."""
    if not any(ch in command for ch in "|&;\n"):
        return [(command.strip(), "")] if command.strip() else []
    out: list[tuple[str, str]] = []
    buf: list[str] = []
    depth = 0
    for match in _TOKEN.finditer(command):
        tok = match.group(0)
        if tok in _OPERATORS and depth == 0:
            prev = buf[-1] if buf else ""
            if tok == "&" and (prev.endswith((">", "<")) or command[match.end() : match.end() + 1] == ">"):
                buf.append(tok)  # 2>&1, &>file: a redirection, not an operator
                continue
            out.append(("".join(buf).strip(), ";" if tok == "\n" else tok))
            buf = []
            continue
        if tok[0] not in "'\"\\":
            depth = max(0, depth + tok.count("(") - tok.count(")"))
        buf.append(tok)
    out.append(("".join(buf).strip(), ""))
    return [(seg, op) for seg, op in out if seg]


_REDIRECT = re.compile(r"^(?:\d*>>?|\d*<|&>>?|\d*>&\d*-?|<<<?)(.*)$")


def _words(segment: str) -> list[str]:
    """Whitespace words of a segment, quotes removed and redirections (`2>&1`, `> log`) dropped."""
    out: list[str] = []
    skip_next = False
    for raw in segment.split():
        if skip_next:
            skip_next = False
            continue
        redirect = _REDIRECT.match(raw)
        if redirect:
            skip_next = not redirect.group(1) and not raw.endswith(("&1", "&2", "-"))
            continue
        out.append(raw.strip("'\""))
    return out


def _strip_prefixes(words: list[str]) -> list[str]:
    """Drop env assignments, wrappers like `timeout 60` or `uv run`, and `python -m`."""
    while words:
        head = words[0]
        if _ASSIGN.match(head) or head in _WRAPPERS:
            words = words[1:]
        elif head in ("timeout", "gtimeout"):
            rest = words[1:]
            while rest and rest[0].startswith("-"):
                rest = rest[1:]
            words = rest[1:]  # the duration
        elif (len(words) > 1 and (head, words[1]) in _RUNNERS_WITH_RUN) or (
            _PYTHON.match(head) and len(words) > 2 and words[1] == "-m"
        ):
            words = words[2:]
        else:
            break
    return words


def _classify(words: list[str]) -> tuple[str, str, str] | None:
    """(key, category, tool) of a check's words, or None when they are not a check."""
    if not words:
        return None
    head = words[0]
    base = head.rsplit("/", 1)[-1]
    if base.endswith(".exe"):
        base = base[:-4]
    if base in _PACKAGE_MANAGERS:
        args = words[1:]
        rest: list[str] = []
        skip = False
        for arg in args:
            if skip:
                skip = False
                continue
            if arg in PM_FLAGS_WITH_VALUE:
                skip = True
                continue
            if arg.startswith("-"):
                continue
            rest.append(arg)
        if rest and rest[0] in ("run", "run-script"):
            rest = rest[1:]
        if not rest:
            return None
        script = rest[0]
        if base == "bun" and script == "test":
            return ("bun test", "test", "bun")
        if script in _DIRECT and script not in ("make", "cc"):
            return (script, _DIRECT[script], script)
        for needle, category in _SCRIPT_CATEGORIES:
            if script == needle or script.startswith(needle + ":") or script.endswith(":" + needle):
                return (f"{base} {script}", category, base)
        return None
    if base in _SUBCOMMANDS and len(words) > 1:
        sub = next((w for w in words[1:] if not w.startswith("-")), "")
        sub_category = _SUBCOMMANDS[base].get(sub)
        return (f"{base} {sub}", sub_category, base) if sub_category else None
    if base == "cmake":
        return ("cmake --build", "build", "cmake") if "--build" in words else ("cmake", "build", "cmake")
    if base in ("make", "gmake", "ninja"):
        targets = [w for w in words[1:] if not w.startswith("-") and "=" not in w and not w.isdigit()]
        # `-C dir`: the folder is part of the identity of the check
        folder = words[words.index("-C") + 1] if "-C" in words[:-1] else ""
        if targets and targets[0] in NOT_BUILD_TARGETS:
            return None
        target = targets[0] if targets else ""
        key = " ".join(x for x in (base, f"-C {folder}" if folder else "", target) if x)
        category = "test" if "test" in target or "check" in target else "build"
        return (key, category, base)
    if base in _DIRECT:
        category = _DIRECT[base]
        if base in ("black", "prettier", "ruff") and category == "lint":
            sub = next((w for w in words[1:] if not w.startswith("-")), "")
            if base == "ruff":
                return ("ruff check", "lint", "ruff") if sub in ("check", "") else None
            if base in ("black", "prettier") and "--check" not in words:
                return None
        if category == "build" and base not in ("cmake",) and base in (
            "gcc", "g++", "clang", "clang++", "cc", "c++", "nvcc", "javac", "rustc", "swiftc",
            "pdflatex", "xelatex", "lualatex", "latexmk",
        ):  # fmt: skip
            sources = sorted({w.rsplit("/", 1)[-1] for w in words[1:] if w.endswith(_SOURCE_SUFFIXES)})
            return (" ".join([base, *sources[:3]]), category, base)
        return (base, category, base)
    if base.startswith(("test_", "run_tests", "run-tests")) or base in ("test.sh", "tests.sh", "runtests"):
        return (base, "test", base)
    return None


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
            out.append(f"{word} {next(it, '')}")
        elif word in _VALUE_FLAGS:
            next(it, None)
        elif not word.startswith("-") and word not in _NOT_TARGETS and "=" not in word:
            out.append(word.rstrip("/"))
    return tuple(sorted(set(out)))


def covers(passing: tuple[str, ...] | list[str], failing: tuple[str, ...] | list[str]) -> bool:
    """Whether a passing run checked at least what the failing run checked (not a narrower run)."""
    if not passing:
        return True
    if not failing:
        return False
    return all(any(f == p or f.startswith((p + "/", p + "::")) for p in passing) for f in failing)


def display(command: str) -> str:
    """A command as a lesson shows it: leading `cd somewhere &&` steps dropped, first line only."""
    text = command.strip()
    while True:
        match = re.match(r"^cd\s+(?:\"[^\"]*\"|'[^']*'|\S+)\s*(?:&&|;)\s*", text)
        if not match:
            return text.split("\n", 1)[0] if "<<" not in text else text.split("\n", 1)[0] + " …"
        text = text[match.end() :]


_HINT_NAMES = frozenset({*_DIRECT, *_SUBCOMMANDS, *_PACKAGE_MANAGERS, "gradlew", "run_tests", "runtests"})
_HINT_WORD = re.compile(r"[^\s|&;()<>\"'`=]+")  # words as str.split() sees them, operators and quotes cut out


def _may_be_check(command: str) -> bool:
    """A cheap look for a check tool's name, before the real parse."""
    if "<<" in command and ".exe" not in command:
        # check_of parses only a heredoc's first line (with an `x.exe` about, all of it is looked at)
        command = command.split("\n", 1)[0]
    if "test" in command:
        return True
    words = _HINT_WORD.findall(command)
    if not _HINT_NAMES.isdisjoint(words):
        return True
    return any(word.rsplit("/", 1)[-1] in _HINT_NAMES for word in words if "/" in word)


@lru_cache(maxsize=1024)
def check_of(command: str) -> Check | None:
    """The check a shell command runs (the first one in it), or None when it runs no check."""
    if not command or not _may_be_check(command):
        return None
    first_line = command.split("\n", 1)[0] if "<<" in command else command
    pipefail = "pipefail" in first_line
    segments = _split_top(first_line)
    for index, (segment, op) in enumerate(segments):
        words = _strip_prefixes(_words(segment))
        if words and words[0] == "cd":
            continue
        if segment.startswith("(") and segment.endswith(")"):
            inner = check_of(segment[1:-1])
            if inner is not None:
                later_ops = (
                    op in ("||", "&")
                    or (op == "|" and not pipefail)
                    or (op == ";" and index + 1 < len(segments))
                )
                return Check(inner.key, inner.category, inner.tool, inner.masked or later_ops, inner.targets)
            continue
        found = _classify(words)
        if found is None:
            continue
        key, category, tool = found
        own = set(key.split())
        targets = _targets([w for w in words[1:] if w not in own]) if category in ("test", "lint") else ()
        later = segments[index + 1 :]
        masked = op == "||" or op == "&" or (op == "|" and not pipefail) or (op == ";" and bool(later))
        return Check(key, category, tool, masked, targets)
    return None


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
    for segment, _op in _split_top(command.split("\n", 1)[0]):
        words = _strip_prefixes(_words(segment))
        if not words or words[0] == "cd":
            continue
        head = words[0].rsplit("/", 1)[-1]
        if head == "git":
            sub = next((w for w in words[1:] if not w.startswith("-")), "")
            if sub in _GIT_WRITES:
                return True
            continue
        if head == "sed" and any(w.startswith("-i") for w in words[1:]):
            return True
        if head in _READ_ONLY:
            if ">" in segment:
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
_EXIT_RE = re.compile(r"(?:^Exit code|Process exited with code) (-?\d+)", re.M)
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


def signature(line: str) -> str:
    """An error line with paths, numbers and case flattened, so the same error matches across runs."""
    text = _NORMALIZE_PATH.sub(lambda m: m.group(0).replace("\\", "/").rsplit("/", 1)[-1], line)
    text = _NORMALIZE_NUM.sub("N", text.lower())
    text = re.sub(r"[^\w:.' -]+", " ", text)
    return " ".join(text.split())[:90]


def is_startup_error(line: str) -> bool:
    """Whether an error says the check could not start at all (missing tool, module or file)."""
    return bool(_STARTUP.search(line))
