"""A shell command line cut into simple commands, so that lessons fire on what runs, not on what is said.

`segments(command)` splits a Bash command into simple commands (on `;`, `&&`, `||`, `|`, `&`,
newlines, parentheses) and returns each one's executable words. The shell's syntax is read here:
quotes and escapes, comments, redirections and their targets (`> out.txt`, `2>&1`, `<<< text`),
heredoc bodies (skipped, unless a shell reads them: `bash <<EOF` runs its body), and scripts run
in turn, which add their own segments: command substitutions (`$(…)`, backticks, `<(…)`), `eval …`
and scripts handed to a shell (`bash -c "…"`). Which words of each simple command are code is
`shell_words`' part (the command past keywords, assignments and wrappers; no prose, no messages),
and the data words of grep, sed, find, `git log` and the like are `shell_data`'s, loaded only
when one of them runs. No `re`: this runs on every Bash call.

`commands(command)` gives the same simple commands with what the scan also needs: the operators
after each one (`&&`, `||`, `|`, `;`, `)`…), how deeply it is nested, whether it writes a file and
the assignments it runs with. `trigger_texts(command)` is what command triggers match: each simple
command's words followed by those assignments (`RUST_BACKTRACE=1 cargo test` is matched as
`cargo test RUST_BACKTRACE=1`), so `\bcargo test\b(?!.*RUST_BACKTRACE=)` goes quiet when the fix is
set, a trigger keyed on `RUST_BACKTRACE=1` sees it, and `^cargo` still anchors at the command.
"""

from lessonbank.matching import shell_words

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
            pending.append((word, heredoc_next == 1, shell_words.reads_script(words)))
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
    env = [w for w, prose in words[:j] if not prose and shell_words.is_assignment(w)]
    command = Command(kept, depth, writes, env)
    info.append(command)
    return command


def _simple(
    words: list[tuple[str, bool]], depth: int, out: list[list[str]], info: list[Command] | None, writes: bool
) -> Command | None:
    """One simple command's words (word, is prose) as the syntax gives them: the scripts it runs
    parsed in turn, its code kept (shell_words, shell_data), and the command emitted."""
    k = shell_words.first_command(words)
    if k >= len(words):
        return None
    texts = [w for w, _ in words]
    if texts[k] in shell_words.DATA_KEYWORDS:
        return None
    j = shell_words.command_start(texts, k)
    real = shell_words.basename(texts[j]) if j < len(texts) else ""
    if real == "eval":
        _parse(" ".join(texts[j + 1 :]), depth + 1, out, info)
        return _emit(texts[k : j + 1], depth, out, info, writes, words, j)
    if real in shell_words.QUIET:
        return _emit(texts[k : j + 1], depth, out, info, writes, words, j)
    data: set[int] = set()
    if shell_words.hands_data(texts, j, real):
        from lessonbank.matching import shell_data

        shell_data.data_words(texts, j, len(texts), data)
    # Scripts handed to a shell run too: bash -c "…", xargs sh -c '…', find -exec sh -c '…'.
    for idx in range(j, len(texts)):
        if shell_words.basename(texts[idx]) in shell_words.SHELLS:
            m = idx + 1
            while m < len(texts) and texts[m].startswith("-"):
                if "c" in texts[m][1:] and not texts[m].startswith("--") and m + 1 < len(texts):
                    _parse(texts[m + 1], depth + 1, out, info)
                    break
                m += 1
    kept = shell_words.code_words(words, k, j, real, data)
    return _emit(kept, depth, out, info, writes, words, j) if kept else None
