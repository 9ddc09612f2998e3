"""The words of one simple command: the command it runs, and which of its words are code.

A simple command, as `shell` cuts it out of a command line, is a list of words. The command it
runs is the first word past reserved words (`if`, `then`, `!`…), leading `NAME=value` assignments
and wrappers that run the rest of the line (`sudo -u web`, `env A=1`, `timeout 60`, `xargs -n1`):
`command_start`, and `basename` for a command written as a path (`.venv/bin/pytest`). Of its
words, the code is what is left once prose is dropped: quoted text holding whitespace, the
arguments of echo, printf and `:`, commit and PR messages (`git commit -m "fix pytest hang"`),
and the data words `shell_data` finds for the tools of DATA_NAMES (`code_words`).

`shell` reads every simple command through this module, and check_commands and the scan find a
command's name with it. Standard library only, no `re`: it runs on every Bash call.
"""

SHELLS = frozenset(("sh", "bash", "zsh", "dash", "ksh", "ash", "mksh"))
QUIET = frozenset(("echo", "printf", ":", "true", "false"))
KEYWORDS = frozenset(("if", "then", "else", "elif", "fi", "do", "done", "while", "until", "!", "{", "}"))
DATA_KEYWORDS = frozenset(("for", "case", "select", "function", "in", "esac"))
# Options whose value is a message (prose), per command.
MESSAGE_OPTIONS = {
    "git": frozenset(("-m", "--message")),
    "hg": frozenset(("-m", "--message")),
    "svn": frozenset(("-m", "--message")),
    "jj": frozenset(("-m", "--message")),
    "gh": frozenset(("-m", "--message", "-t", "--title", "-b", "--body")),
    "glab": frozenset(("-m", "--message", "-t", "--title", "-d", "--description")),
}
# Commands that run the rest of the line, and their options that take a value.
WRAPPERS = {
    "sudo": frozenset(("-u", "-g", "-C", "-D", "-h", "-p", "-U", "-r", "-t")),
    "env": frozenset(("-u", "-C", "-S")),
    "nice": frozenset(("-n",)),
    "nohup": frozenset(),
    "time": frozenset(("-f", "-o")),
    "timeout": frozenset(("-s", "-k", "--signal", "--kill-after")),
    "gtimeout": frozenset(("-s", "-k", "--signal", "--kill-after")),
    "command": frozenset(),
    "exec": frozenset(("-a",)),
    "builtin": frozenset(),
    "stdbuf": frozenset(("-i", "-o", "-e")),
    "xargs": frozenset(("-n", "-I", "-P", "-L", "-d", "-s", "-E", "-a")),
    "xvfb-run": frozenset(("-a", "-s", "-n")),
    "caffeinate": frozenset(),
}
# Tools whose arguments hold data (search patterns, scripts, names looked up). How each reads them
# is in shell_data, imported only for a command that `hands_data`: the names stay here so that a
# command running none of them (nearly every one) loads none of it.
DATA_NAMES = frozenset(
    ("grep", "egrep", "fgrep", "zgrep", "ggrep", "ugrep", "rg", "ag", "ack", "ack-grep", "sed", "gsed",
     "awk", "gawk", "mawk", "nawk", "pgrep", "pkill", "perl", "ruby", "node",
     "which", "whereis", "type", "man", "apropos", "whatis", "tldr", "git", "find")
)  # fmt: skip
# The git subcommands that search (their patterns are data), and git's options that take a value.
GIT_SEARCHING = frozenset(("grep", "log", "show", "diff", "whatchanged", "rev-list", "shortlog", "reflog"))
_GIT_GLOBAL_VALUES = frozenset(("-C", "-c", "--git-dir", "--work-tree", "--namespace"))


def basename(word: str) -> str:
    """The command name of a word that may be a path (`./gradlew`, `.venv/bin/pytest`)."""
    return word.rpartition("/")[2]


def is_assignment(word: str) -> bool:
    """Is the word a `NAME=value` assignment?"""
    name, eq, _ = word.partition("=")
    return bool(eq) and bool(name) and (name.replace("_", "a").isalnum()) and not name[0].isdigit()


def first_command(words: "list[tuple[str, bool]]") -> int:
    """Index of the first word after reserved words and NAME=value assignments, in (word, is
    prose) pairs as `shell` reads them."""
    k = 0
    for word, _ in words:
        if word not in KEYWORDS and not is_assignment(word):
            break
        k += 1
    return k


def command_start(texts: "list[str]", k: int = 0) -> int:
    """Index of the real command in `texts` from k on, past wrappers (sudo, env, timeout, …)."""
    n = len(texts)
    while k < n:
        name = basename(texts[k])
        takes = WRAPPERS.get(name)
        if takes is None:
            return k
        k += 1
        while k < n and (texts[k].startswith("-") or is_assignment(texts[k])):
            if texts[k] in takes:
                k += 1
            k += 1
        if name in ("timeout", "gtimeout") and k < n:
            k += 1  # the duration
    return k


def reads_script(words: "list[tuple[str, bool]]") -> bool:
    """Does this command (its words so far) run a shell that reads its script from stdin?"""
    k = first_command(words)
    if k >= len(words):
        return False
    name, _ = words[k]
    if basename(name) not in SHELLS:
        return False
    return all(w.startswith("-") and "c" not in w[1:] for w, _ in words[k + 1 :])


def git_subcommand(texts: "list[str]", i: int, end: int) -> "tuple[int, str]":
    """The index and name of git's subcommand, past its global options (-C dir, -c k=v)."""
    while i < end and texts[i].startswith("-"):
        i += 2 if texts[i] in _GIT_GLOBAL_VALUES else 1
    return i, texts[i] if i < end else ""


def hands_data(texts: "list[str]", j: int, name: str) -> bool:
    """Does the command `name` at texts[j] read some of its words as data, so that shell_data
    must look? git only when its subcommand searches: git status or git commit import nothing."""
    if name == "git":
        _, sub = git_subcommand(texts, j + 1, len(texts))
        return sub in GIT_SEARCHING
    return name in DATA_NAMES


def code_words(words: "list[tuple[str, bool]]", k: int, j: int, name: str, data: "set[int]") -> "list[str]":
    """The words from k on that are code: not prose, not a message given to the command `name`
    at j (MESSAGE_OPTIONS: `-m "text"`, `--message=text`, `-am "text"`, `-m"text"`), not in `data`."""
    options = MESSAGE_OPTIONS.get(name)
    kept: list[str] = []
    drop_next = False
    for idx in range(k, len(words)):
        word, is_prose = words[idx]
        if drop_next:
            drop_next = False
            continue
        if options is not None and idx > j and word.startswith("-"):
            if word in options:
                drop_next = True
                continue
            if word.startswith("--") and word.partition("=")[0] in options:
                continue
            if not word.startswith("--") and len(word) > 2:
                flags = [f for f in options if len(f) == 2 and f[1] in word[1:]]
                if flags:
                    if word.endswith(tuple(f[1] for f in flags)):
                        drop_next = True
                    else:
                        continue  # the message is attached: -m"text"
        if is_prose or idx in data:
            continue
        kept.append(word)
    return kept
