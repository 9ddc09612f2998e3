"""Plain shell mistakes: a recognisable, recurring error, then a different approach that worked. Pure.

Not every failed command teaches something: the scan proposes one only when its error is of a kind
that comes back (a tool not on PATH, a relative `cd` from where an earlier call left the shell, a
push the remote rejected) and a later call in the same turn took a different way that succeeded
(another command, flag, path or tool). A typo fixed on the next call is no lesson, nor is a failure
nothing recovered from. Each kind writes its lesson in general words; the episode is the evidence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from lessonbank.matching import shell, shell_words
from lessonbank.scan import outcomes

LOOKAHEAD = 6  # shell calls after the failure in which a different approach may succeed
# Kinds that are another face of one lesson.
LESSON = {"relative-path": "cd-relative", "cmake-build-dir": "cd-relative"}


@dataclass(frozen=True)
class Kind:
    """A recurring shell error: how to recognise it (its output, and the command when that matters).

    `needles`: plain strings, one of which every match of `error` contains; most failed outputs
    contain none, and a substring test is far cheaper than the regex (a fifth of the scan's time).
    """

    name: str
    error: re.Pattern[str]
    needles: tuple[str, ...]
    command: re.Pattern[str] | None = None


_WINDOWS_TOOLS = r"(?:whoami|dir|net|ipconfig|tasklist|taskkill|findstr|sc|reg|netsh|icacls|systeminfo|schtasks)"
_WINDOWS_SWITCH = re.compile(rf"(?:^|[;&|(]\s*|\bpowershell(?:\.exe)? -Command \"?){_WINDOWS_TOOLS}\b[^|;&]*\s/[A-Za-z]{{1,8}}\b")


KINDS = (
    Kind("not-found", re.compile(r"(?m)(?:^|: )([\w.+-]+): command not found|\b([\w.+-]+): not found$"), ("not found",)),
    Kind("cd-relative", re.compile(r"\bcd: ([^:\n]+): No such file or directory"), ("No such file",)),
    # the same mistake seen later: a relative path, or `cmake ..`, from where an earlier `cd` left the shell
    Kind("relative-path", re.compile(r"(?m)(?:^|: )(?![/~])([\w.-]+/[\w./-]+): No such file or directory"),
         ("No such file",)),
    Kind("cmake-build-dir", re.compile(r'The source directory "[^"\n]*" does not appear to contain CMakeLists\.txt'),
         ("CMakeLists.txt",)),
    Kind("push-behind", re.compile(r"\[rejected\][^\n]*\((?:fetch first|non-fast-forward)\)"), ("[rejected]",)),
    Kind("push-protection", re.compile(r"\bGH013\b|push protection|Push cannot contain secrets"),
         ("GH013", "push protection", "Push cannot contain secrets")),
    # a cmd.exe command with /switches typed into Git Bash: the GNU tool of that name runs, or /b becomes a path
    Kind("windows-switch", re.compile(r"Try '[^'\n]*--help' for more information|cannot access '[^'\n]*/[A-Za-z]{1,8}'"),
         ("--help' for more information", "cannot access '"), _WINDOWS_SWITCH),
    Kind("sudo", re.compile(r"\bsudo: (?:a terminal is required|a password is required|no tty present)"), ("sudo: ",)),
    # C source written through the shell: the Bash tool turns `!` into `\!`, the compiler sees a stray `\`
    Kind("shell-written-source", re.compile(r"stray [‘'`]\\[’'`] in program"), (" in program",)),
)
_COMPILERS = {"gcc", "g++", "cc", "c++", "clang", "clang++", "nvcc", "make", "cmake"}


def classify(output: str, command: str = "") -> tuple[str, str] | None:
    """(kind, what it names) for a failure of a recurring kind, else None."""
    head = output[:3000]
    for kind in KINDS:
        if not any(needle in head for needle in kind.needles):
            continue
        match = kind.error.search(head)
        if match and (kind.command is None or kind.command.search(command)):
            return kind.name, next((g for g in match.groups() if g), "") if match.groups() else ""
    return None


def heads(command: str) -> list[str]:
    """The programs a command runs, in order (`cd x && pipx run y`: cd, pipx)."""
    out = []
    for simple in shell.commands(command):
        words = simple.words[shell_words.command_start(simple.words) :]
        if words:
            out.append(shell_words.basename(words[0]).removesuffix(".exe"))
    return out


def _distance(a: str, b: str) -> int:
    """Levenshtein distance, for telling a typo from another tool."""
    row = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, cb in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (ca != cb))
    return row[-1]


def is_typo(failing: str, passing: str, named: str = "") -> bool:
    """A slip of the keyboard fixed on the next call: `gti status` -> `git status`, `cd biuld` -> `cd build`."""
    ran = heads(passing)
    if named and any(h != named and h.startswith(named) for h in ran):
        return False  # another tool of that name (`python` -> `python3`), not a slip
    if "-" in named and re.search(rf"\b{re.escape(named.replace('-', ' ', 1))}\b", passing):
        return False  # its successor, a subcommand (`docker-compose` -> `docker compose`)
    failing, passing = failing.strip(), passing.strip()
    if abs(len(failing) - len(passing)) <= 2 and len(failing) <= 400 and _distance(failing, passing) <= 2:
        return True
    return bool(named) and any(
        abs(len(named) - len(h)) <= 2 and h[:1] == named[:1] and 0 < _distance(named, h) <= 2 for h in ran
    ) and not any(
        h.startswith(named) for h in ran
    )


_READ_ONLY = {"which", "where", "type", "command", "ls", "find", "echo", "cat", "pwd", "whereis", "dpkg", "apt",
              "apt-cache", "test", "git"}  # fmt: skip


_INSTALLERS = frozenset(("pip", "pip3", "pipx", "uv", "npm", "pnpm", "yarn", "bun", "brew", "apt", "apt-get", "dnf", "yum",
                         "pacman", "apk", "cargo", "go", "gem", "conda", "mamba", "choco", "winget", "scoop", "corepack",
                         "nix-env", "port", "snap"))  # fmt: skip


def installs(command: str, named: str) -> bool:
    """Whether a command installs `named` (`pip install pipx`, `npm i -g pnpm`, `corepack enable pnpm`)."""
    if not named or not _INSTALLERS.intersection(heads(command)):
        return False
    return bool(re.search(rf"\b(?:install|add|i|enable|get)\b[^|;&]*(?<![\w/.-]){re.escape(named)}(?![\w.-])", command))


_HANDS_OVER = re.compile(
    r"(?i)\b(?:you(?:'ll| will)? (?:need|have|can|should|must) (?:to )?run|please run|run (?:this|these|the following)"
    r"(?: commands?)? (?:yourself|manually|in your terminal)|(?:run|install) (?:it|them) manually"
    r"|i can'?t run sudo|need you to run|here'?s what you should do)"
)


def hands_over(text: str) -> bool:
    """Whether the agent gives the user the command to run instead (the way round a sudo prompt)."""
    return bool(_HANDS_OVER.search(text))


def different_approach(kind: str, named: str, failing: str, command: str) -> bool:
    """Whether a succeeding call took a different way to what the failing one tried."""
    ran = heads(command)
    if not ran or command.strip() == failing.strip():
        return False
    if kind == "not-found":
        if any(h == named for h in ran):  # the same tool, now found: by a path or a PATH change
            return f"/{named}" in command or "PATH=" in command or f"\\{named}" in command
        if installs(command, named):
            return False  # installing the tool is setting up, not another tool to use instead
        alternative = [h for h in ran if h not in _READ_ONLY and h.startswith(named[:3])]
        rest = set(failing.split()[1:]) & set(command.split()[1:])
        return bool(alternative) and bool(rest)
    if kind == "cd-relative":
        moved = re.findall(r"(?:^|&&|;)\s*cd\s+(\S+)", command)
        rest_failing = re.sub(r"^.*?\bcd\s+\S+\s*(?:&&|;)\s*", "", failing, count=1)
        if moved and moved[0].startswith(("/", "~", '"/', "'/", "$", '"$')):
            return rest_failing.split()[:1] == re.sub(r"^.*?\bcd\s+\S+\s*(?:&&|;)\s*", "", command).split()[:1]
        return not moved and command.split()[:2] == rest_failing.split()[:2]
    if kind == "relative-path":
        return any(w.strip("'\"").endswith(("/" + named, "\\" + named)) and w.strip("'\"")[:1] in "/~"
                   for w in command.split())  # fmt: skip
    if kind == "cmake-build-dir":
        return "cmake" in ran
    if kind == "push-behind":
        return "pull" in command and "push" in command
    if kind == "push-protection":
        return "git" in ran and "push" in command.split()
    if kind == "windows-switch":
        return bool(re.search(r"\bcmd(?:\.exe)?\s+/+c\b|\bpowershell(?:\.exe)?\b.*\bGet-\w+", command))
    if kind == "shell-written-source":  # compiled after the file was written another way
        writes = re.search(r"\b(?:echo|printf)\b[^|;&]*>|<<", command)
        return bool(_COMPILERS.intersection(ran)) and not writes
    return False


def lesson(kind: str, named: str, failing: str, passing: str, between: list[str]) -> tuple[str, str, str, str]:
    """(title, when, do, command trigger) of a shell mistake of this kind."""
    if kind == "not-found":
        path = next((w for w in passing.split() if w.endswith(f"/{named}") or w.endswith(f"\\{named}")), "")
        export = re.search(r"export PATH=([^:\s]+)", passing)
        if path or export:
            folder = path.rsplit("/", 1)[0] if path else export.group(1) if export else ""
            return (
                f"{named} is not on PATH: use {folder}/{named}",
                f"running `{named}`: it is not on PATH in this environment (`{named}: command not found`)",
                f"Call `{named}` as `{folder}/{named}`, or run `export PATH={folder}:$PATH` first.",
                rf"^(?!.*{re.escape(folder)}).*(?<![\w/.-]){re.escape(named)}(?![\w.-])",
            )
        other = next(h for h in heads(passing) if h not in _READ_ONLY and h.startswith(named[:3]))
        sub = named[len(other) + 1 :] if named.startswith(other + "-") else ""
        if sub and re.search(rf"\b{re.escape(other)}\s+{re.escape(sub)}\b", passing):  # docker-compose -> docker compose
            return (
                f"Use `{other} {sub}`, not `{named}`",
                f"running `{named}` in this environment: `{named}: command not found` (its successor is the "
                f"`{other} {sub}` subcommand)",
                f"Run `{other} {sub} …` instead of `{named} …` (`{named}` is not installed here).",
                tool_trigger(named),
            )
        return (
            f"Use {other}, not {named}",
            f"running `{named}` in this environment: `{named}: command not found`",
            f"Use `{other}` instead of `{named}` here (`{named}` is not installed).",
            tool_trigger(named),
        )
    if LESSON.get(kind, kind) == "cd-relative":
        return (
            "Use absolute paths: the working directory carries over",
            "running a relative `cd` (or a relative path) in the agent's shell: the working directory carries "
            "over from earlier calls, so the folder is not where the command expects",
            "Use absolute paths (`cd /path/to/project/sub && …`) or check `pwd` first; never assume the shell "
            "starts in the project root.",
            r"(?:^|&&|;)\s*cd\s+(?![/~\"'$])[\w.-]",
        )
    if kind == "push-behind":
        return (
            "Pull with rebase before pushing when the remote moved",
            "running `git push` when the remote branch has commits you do not have (`[rejected] … (fetch first)`)",
            "Run `git pull --rebase` and then `git push`; never force-push over the remote's commits.",
            # Every push, forced ones too: "never force-push" matters most when the agent is about to.
            outcomes.invocation_regex("git push"),
        )
    between = [re.sub(r"^cd\s+(?:\"[^\"]*\"|'[^']*'|\S+)\s*&&\s*", "", c) for c in between]
    if kind == "windows-switch":
        return (
            "Run Windows /switch commands through cmd.exe /c",
            "running a Windows command with `/switches` (`whoami /priv`, `dir /b`) from Git Bash: bash runs the "
            "GNU tool of that name or turns the switch into a path (`Try 'whoami --help'`, `cannot access '/b'`)",
            'Run it as `cmd.exe /c "whoami /priv"`, or use the PowerShell cmdlet (`Get-ChildItem` for `dir`).',
            r"^(?!.*\bcmd(?:\.exe)?\s+/+c\b).*?" + _WINDOWS_SWITCH.pattern,
        )
    if kind == "sudo":
        return (
            "Hand sudo commands to the user instead of running them",
            "running `sudo` in the agent's shell: nobody can answer the password prompt there "
            "(`sudo: a password is required` / `a terminal is required`)",
            "Do not run `sudo` yourself: give the user the exact command to run in their terminal, and continue "
            "once they say it is done.",
            r"(?:^|[;&|(]\s*)sudo\s",
        )
    if kind == "shell-written-source":
        return (
            "Write source files with the file tool, not the shell",
            "writing C/C++/CUDA source through the shell (`echo`, `printf`, `cat <<EOF` into a `.c` file): `!` "
            "arrives as `\\!` and the compiler fails with `stray '\\' in program`",
            "Create or change source files with the file-writing tool (Write/Edit), never through a shell "
            "command; then compile.",
            r"(?:\becho\b|\bprintf\b|\bcat\b[^|;&]*<<)[^|;&]*>\s*['\"]?[\w./-]+\.(?:c|h|cc|cpp|cu|cuh|hpp)\b"
            r"|\bcat\s*>\s*['\"]?[\w./-]+\.(?:c|h|cc|cpp|cu|cuh|hpp)\b",
        )
    # The episode's own commands stay in the evidence: they carry its flags (a `--no-gpg-sign` the
    # user may have forbidden), and the instruction is the general one.
    return (
        "Rewrite commits with secret-like data before pushing",
        "running `git push` when a commit being pushed holds a secret or secret-like test data (GitHub push "
        "protection, `GH013`)",
        "Remove the data from every commit being pushed, not only the last one: rewrite the commit that added it "
        "(`git commit --amend` for the last commit, `git rebase -i` for an earlier one), then push again.",
        outcomes.invocation_regex("git push"),
    )


def tool_trigger(named: str) -> str:
    """A command trigger on running `named` anywhere in a command line (after a separator or a
    space, not inside another word or path)."""
    return rf"(?:^|[;&|(]\s*|\s)(?<![\w/.-]){re.escape(named)}(?![\w.-])"
