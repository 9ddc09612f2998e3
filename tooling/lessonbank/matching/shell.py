"""The executable parts of a shell command, so that lessons fire on what runs, not on what is said.

`segments(command)` splits a Bash command into simple commands (on `;`, `&&`, `||`, `|`, `&`,
newlines, parentheses) and returns each one's words, minus what is data rather than code:

- heredoc bodies (unless a shell reads them: `bash <<EOF` runs its body);
- redirections and their targets (`> out.txt`, `2>&1`, `<<< text`);
- the arguments of echo, printf and `:`;
- commit and PR messages (`git commit -m "fix pytest hang"`, `gh pr create --body …`);
- quoted text that holds whitespace (prose, inline code such as `python -c "…"`);
- search patterns and scripts handed to a tool that reads them as data: grep, rg, ag, ack,
  `git grep`, `git log --grep/-S/-G`, sed and awk scripts, `perl -e`, `find -name` globs, pgrep
  patterns, the names given to which, type and man (`rg -n pytest docs/` runs no pytest);
- leading `NAME=value` assignments, shell keywords and comments.

Scripts handed to a shell (`bash -c "…"`, `eval …`) and command substitutions (`$(…)`, backticks,
`<(…)`) are parsed in turn and add their own segments. No `re`: this runs on every Bash call.

`commands(command)` gives the same simple commands with what the scan also needs: the operators
after each one (`&&`, `||`, `|`, `;`, `)`…), how deeply it is nested, whether it writes a file and
the assignments it runs with. `trigger_texts(command)` is what command triggers match: each simple
command's words followed by those assignments (`RUST_BACKTRACE=1 cargo test` is matched as
`cargo test RUST_BACKTRACE=1`), so `\bcargo test\b(?!.*RUST_BACKTRACE=)` goes quiet when the fix is
set, a trigger keyed on `RUST_BACKTRACE=1` sees it, and `^cargo` still anchors at the command.
"""

# Longer than 400 lines: the one tokenizer for the hooks and the scan; the quote scanners stay in it
# because every module the hook process loads costs it about 0.1 ms on every Bash call. What each
# data tool reads (grep, rg, sed, git log, find…) is in shell_data, loaded only when one runs.

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

# Tools whose arguments hold data (search patterns, scripts, names looked up); shell_data says how
# each reads them, and is imported only on the first such command.
DATA_NAMES = frozenset(
    ("grep", "egrep", "fgrep", "zgrep", "ggrep", "ugrep", "rg", "ag", "ack", "ack-grep", "sed", "gsed",
     "awk", "gawk", "mawk", "nawk", "pgrep", "pkill", "perl", "ruby", "node",
     "which", "whereis", "type", "man", "apropos", "whatis", "tldr", "git", "find")
)  # fmt: skip
# The git subcommands that search (their patterns are data), and git's options that take a value.
_GIT_SEARCHING = frozenset(("grep", "log", "show", "diff", "whatchanged", "rev-list", "shortlog", "reflog"))
_GIT_GLOBAL_VALUES = frozenset(("-C", "-c", "--git-dir", "--work-tree", "--namespace"))
_MAX_DEPTH = 4
_REDIRECTS = ("&>>", "<<<", "<<-", "&>", ">>", ">|", "<<", "<>", ">&", "<&", "<", ">")
_WRITES = (">", ">>", ">|", "&>", "&>>", ">&")


class Command:
    """A simple command: its words (as `segments` gives them), the operators written after it up to the
    next command (`&&`, `|`, `)||`, a newline; "" at the end), its depth (0; 1 and more inside `$(…)`,
    backticks, `bash -c "…"`, a heredoc a shell reads), whether it redirects output to a file and the
    NAME=value assignments it runs with (written before it, or given to env or sudo)."""

    __slots__ = ("words", "after", "depth", "writes", "env")

    def __init__(self, words: list[str], depth: int, writes: bool, env: list[str]) -> None:
        self.words, self.after, self.depth, self.writes = words, "", depth, writes
        self.env = env

    def __repr__(self) -> str:
        return f"Command({self.words!r}, after={self.after!r}, depth={self.depth}, writes={self.writes})"


def segments(command: str) -> list[list[str]]:
    """The simple commands of `command`, each as its executable words, in order."""
    out: list[list[str]] = []
    _parse(command, 0, out, None)
    return out


def commands(command: str) -> list[Command]:
    """The simple commands of `command` in the order `segments` gives them, with their operators."""
    info: list[Command] = []
    _parse(command, 0, [], info)
    return info


def trigger_texts(command: str) -> list[str]:
    """What command triggers match: each simple command's words, then the assignments it runs with."""
    return [" ".join(c.words + c.env) if c.env else " ".join(c.words) for c in commands(command)]


def basename(word: str) -> str:
    """The command name of a word that may be a path (`./gradlew`, `.venv/bin/pytest`)."""
    return word.rpartition("/")[2]


def _parse(text: str, depth: int, out: list[list[str]], info: list[Command] | None) -> None:
    if depth > _MAX_DEPTH:
        return
    n = len(text)
    i = 0
    words: list[tuple[str, bool]] = []
    cur: list[str] = []
    in_word = False
    prose = False
    skip_next = False  # the next word is a redirection target
    writing = writes = False  # that target is written to; this command writes a file
    last: Command | None = None  # the command the operators being read follow
    heredoc_next = -1  # >= 0: the next word is a heredoc delimiter (1 = strip tabs)
    pending: list[tuple[str, bool, bool]] = []  # (delimiter, strip tabs, body is a shell script)

    def end_word() -> None:
        nonlocal in_word, prose, skip_next, heredoc_next, writes
        if not in_word:
            return
        word = "".join(cur)
        cur.clear()
        if heredoc_next >= 0:
            pending.append((word, heredoc_next == 1, _reads_script(words)))
            heredoc_next = -1
        elif skip_next:
            skip_next = False
            if writing and not word.startswith("/dev/"):
                writes = True
        else:
            words.append((word, prose))
        in_word = False
        prose = False

    def end_command(op: str) -> None:
        nonlocal last, writes
        end_word()
        if words:
            last = _simple(words, depth, out, info, writes)
            words.clear()
            writes = False
        if last is not None:
            last.after += op

    while i < n:
        c = text[i]
        if c == " " or c == "\t":
            end_word()
            i += 1
        elif c == "\n":
            end_command(c)
            i += 1
            while pending:
                i = _heredoc(text, i, pending.pop(0), depth, out, info)
        elif c in ";|()" or (c == "&" and text[i + 1 : i + 2] != ">"):
            end_command(c)
            i += 1
        elif c == "<" or c == ">" or c == "&":
            if in_word and "".join(cur).isdigit():
                cur.clear()  # an fd number: 2>file
                in_word = False
            else:
                end_word()
            if text.startswith("<(", i) or text.startswith(">(", i):
                j = _close(text, i + 2, "(", ")")
                _parse(text[i + 2 : j - 1], depth + 1, out, info)
                cur.append("<(…)")
                in_word = True
                i = j
                continue
            op = next(o for o in _REDIRECTS if text.startswith(o, i))
            i += len(op)
            writing = op in _WRITES
            if op == "<<<":
                skip_next = True
            elif op == "<<-":
                heredoc_next = 1
            elif op == "<<":
                heredoc_next = 0
            elif op in (">&", "<&") and i < n and (text[i].isdigit() or text[i] == "-"):
                while i < n and (text[i].isdigit() or text[i] == "-"):
                    i += 1  # a descriptor copy (2>&1) has no target word
            else:
                skip_next = True
        elif c == "#" and not in_word:
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif c == "\\":
            if text[i + 1 : i + 2] == "\n":
                i += 2
            else:
                cur.append(text[i + 1 : i + 2])
                in_word = True
                i += 2
        elif c == "'":
            j = text.find("'", i + 1)
            j = n if j < 0 else j
            part = text[i + 1 : j]
            cur.append(part)
            in_word = True
            if _has_space(part):
                prose = True
            i = j + 1
        elif c == '"':
            part, i = _double(text, i + 1, depth, out, info)
            cur.append(part)
            in_word = True
            if _has_space(part):
                prose = True
        elif c == "$":
            nxt = text[i + 1 : i + 2]
            if nxt == "(":
                if text[i + 2 : i + 3] == "(":
                    j = _close(text, i + 3, "(", ")")
                    cur.append("$((…))")
                    i = j
                else:
                    j = _close(text, i + 2, "(", ")")
                    _parse(text[i + 2 : j - 1], depth + 1, out, info)
                    cur.append("$(…)")
                    i = j
            elif nxt == "{":
                j = _close(text, i + 2, "{", "}")
                cur.append(text[i:j])
                i = j
            elif nxt == "'":
                part, i = _ansi_c(text, i + 2)
                cur.append(part)
                if _has_space(part):
                    prose = True
            else:
                cur.append("$")
                i += 1
            in_word = True
        elif c == "`":
            j = _backtick_end(text, i + 1)
            _parse(text[i + 1 : j], depth + 1, out, info)
            cur.append("`…`")
            in_word = True
            i = j + 1
        else:
            j = i + 1
            while j < n and text[j] not in " \t\n;|&()<>\\'\"$`":
                j += 1
            cur.append(text[i:j])
            in_word = True
            i = j
    end_command("")


def _has_space(text: str) -> bool:
    return " " in text or "\t" in text or "\n" in text


def _heredoc(
    text: str,
    i: int,
    doc: tuple[str, bool, bool],
    depth: int,
    out: list[list[str]],
    info: list[Command] | None,
) -> int:
    """Skip a heredoc body that starts at i (parsing it when a shell reads it); return its end.

    doc: its delimiter, whether tabs are stripped (<<-) and whether a shell reads it as a script."""
    delim, strip, script = doc
    n = len(text)
    start = i
    while i < n:
        j = text.find("\n", i)
        end = n if j < 0 else j
        line = text[i:end]
        if (line.lstrip("\t") if strip else line) == delim:
            if script:
                _parse(text[start:i], depth + 1, out, info)
            return end + 1 if j >= 0 else n
        i = end + 1
    if script:
        _parse(text[start:], depth + 1, out, info)
    return n


def _reads_script(words: list[tuple[str, bool]]) -> bool:
    """Does this command (so far) run a shell that reads its script from stdin?"""
    k = _first_command(words)
    if k >= len(words) or basename(words[k][0]) not in SHELLS:
        return False
    return all(w.startswith("-") and "c" not in w[1:] for w, _ in words[k + 1 :])


def _double(
    text: str, i: int, depth: int, out: list[list[str]], info: list[Command] | None
) -> tuple[str, int]:
    """The content of a double-quoted string starting after its quote; substitutions are parsed."""
    n = len(text)
    part: list[str] = []
    while i < n:
        c = text[i]
        if c == '"':
            return "".join(part), i + 1
        if c == "\\" and i + 1 < n:
            nxt = text[i + 1]
            if nxt == "\n":
                pass
            elif nxt in '"\\$`':
                part.append(nxt)
            else:
                part.append(c + nxt)
            i += 2
        elif c == "$" and text.startswith("$(", i) and not text.startswith("$((", i):
            j = _close(text, i + 2, "(", ")")
            _parse(text[i + 2 : j - 1], depth + 1, out, info)
            part.append("$(…)")
            i = j
        elif c == "`":
            j = _backtick_end(text, i + 1)
            _parse(text[i + 1 : j], depth + 1, out, info)
            part.append("`…`")
            i = j + 1
        else:
            j = text.find('"', i + 1)  # plain text runs to the first quote, backslash, $ or backtick
            j = n if j < 0 else j
            for special in "\\$`":
                k = text.find(special, i + 1, j)
                if k >= 0:
                    j = k
            part.append(text[i:j])
            i = j
    return "".join(part), n


def _ansi_c(text: str, i: int) -> tuple[str, int]:
    """A $'…' string starting after its quote: backslash escapes end nothing."""
    n = len(text)
    start = i
    while i < n:
        if text[i] == "\\":
            i += 2
        elif text[i] == "'":
            return text[start:i], i + 1
        else:
            i += 1
    return text[start:], n


def _backtick_end(text: str, i: int) -> int:
    n = len(text)
    while i < n:
        if text[i] == "\\":
            i += 2
        elif text[i] == "`":
            return i
        else:
            i += 1
    return n


def _close(text: str, i: int, open_: str, close: str) -> int:
    """The index after the `close` that balances an `open_` before i, skipping quoted text."""
    n = len(text)
    depth = 1
    while i < n:
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if c == "'":
            j = text.find("'", i + 1)
            i = n if j < 0 else j + 1
            continue
        if c == '"':
            _, i = _double(text, i + 1, _MAX_DEPTH + 1, [], None)
            continue
        if c == open_:
            depth += 1
        elif c == close:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return n + 1


def _is_assignment(word: str) -> bool:
    name, eq, _ = word.partition("=")
    return bool(eq) and bool(name) and (name.replace("_", "a").isalnum()) and not name[0].isdigit()


def _first_command(words: list[tuple[str, bool]]) -> int:
    """Index of the first word after keywords and NAME=value assignments."""
    k = 0
    while k < len(words) and (words[k][0] in KEYWORDS or _is_assignment(words[k][0])):
        k += 1
    return k


def command_start(texts: list[str], k: int = 0) -> int:
    """Index of the real command in `texts` from k on, past wrappers (sudo, env, timeout, …)."""
    n = len(texts)
    while k < n:
        name = basename(texts[k])
        takes = WRAPPERS.get(name)
        if takes is None:
            return k
        k += 1
        while k < n and (texts[k].startswith("-") or _is_assignment(texts[k])):
            if texts[k] in takes:
                k += 1
            k += 1
        if name in ("timeout", "gtimeout") and k < n:
            k += 1  # the duration
    return k


def _emit(
    kept: list[str],
    depth: int,
    out: list[list[str]],
    info: list[Command] | None,
    writes: bool,
    words: list[tuple[str, bool]],
    j: int,
) -> Command | None:
    out.append(kept)
    if info is None:
        return None
    env = [w for w, prose in words[:j] if not prose and _is_assignment(w)]
    command = Command(kept, depth, writes, env)
    info.append(command)
    return command


def _git_subcommand(texts: list[str], i: int, end: int) -> tuple[int, str]:
    """The index and name of git's subcommand, past its global options (-C dir, -c k=v)."""
    while i < end and texts[i].startswith("-"):
        i += 2 if texts[i] in _GIT_GLOBAL_VALUES else 1
    return i, texts[i] if i < end else ""


def _data_words(texts: list[str], start: int, end: int, drop: set[int]) -> None:
    """Add to `drop` the indexes of the words in texts[start:end] that a tool reads as data."""
    j = command_start(texts, start)
    if j >= end:
        return
    name = basename(texts[j])
    i, sub = _git_subcommand(texts, j + 1, end) if name == "git" else (j, "")
    if name == "git" and sub not in _GIT_SEARCHING:
        return  # git status, git commit…: no data to drop, and no import
    from lessonbank.matching import shell_data

    if name == "git":
        spec = shell_data.SPECS["git grep" if sub == "grep" else "git log"]
        shell_data.option_data(texts, i + 1, end, spec, drop)
    elif name == "find":
        patterns = shell_data.SPECS["find"][2]  # -name '*.py': a glob
        i = j + 1
        while i < end:
            word = texts[i]
            if word in patterns:
                drop.add(i + 1)
                i += 1
            elif word in shell_data.FIND_EXEC:  # -exec grep -l pytest {} + : the command it runs has data too
                stop = i + 1
                while stop < end and texts[stop] not in (";", "+"):
                    stop += 1
                _data_words(texts, i + 1, stop, drop)
                i = stop
            i += 1
    elif name in DATA_NAMES:
        shell_data.option_data(texts, j + 1, end, shell_data.SPECS[name], drop)


def _simple(
    words: list[tuple[str, bool]], depth: int, out: list[list[str]], info: list[Command] | None, writes: bool
) -> Command | None:
    k = _first_command(words)
    if k >= len(words) or words[k][0] in DATA_KEYWORDS:
        return None
    texts = [w for w, _ in words]
    j = command_start(texts, k)
    real = basename(texts[j]) if j < len(texts) else ""
    if real == "eval":
        _parse(" ".join(texts[j + 1 :]), depth + 1, out, info)
        return _emit(texts[k : j + 1], depth, out, info, writes, words, j)
    if real in QUIET:
        return _emit(texts[k : j + 1], depth, out, info, writes, words, j)
    data: set[int] = set()
    if real in DATA_NAMES:
        _data_words(texts, j, len(texts), data)
    # Scripts handed to a shell run too: bash -c "…", xargs sh -c '…', find -exec sh -c '…'.
    for idx in range(j, len(texts)):
        if basename(texts[idx]) in SHELLS:
            m = idx + 1
            while m < len(texts) and texts[m].startswith("-"):
                if "c" in texts[m][1:] and not texts[m].startswith("--") and m + 1 < len(texts):
                    _parse(texts[m + 1], depth + 1, out, info)
                    break
                m += 1
    options = MESSAGE_OPTIONS.get(real)
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
    return _emit(kept, depth, out, info, writes, words, j) if kept else None
