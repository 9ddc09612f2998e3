"""The data words of a simple command: what each tool of `shell_words.DATA_NAMES` reads as data
rather than code, and the getopt-style reading of its arguments that finds those words.

Search patterns and scripts handed to a tool that reads them as data: grep, rg, ag, ack,
`git grep`, `git log --grep/-S/-G`, sed and awk scripts, `perl -e`, `find -name` globs (and the
data of the command `find -exec` runs), pgrep patterns, the names given to which, type and man:
`rg -n pytest docs/` runs no pytest, so a lesson about pytest must not fire on it.

`shell` imports this module only when a simple command `shell_words.hands_data`, so a Bash call
without grep, sed, find, a searching git subcommand (`git log`, `git grep`…) and the like
loads none of it. Standard library only, no `re`.
"""

from lessonbank.matching import shell_words

FIND_EXEC = frozenset(("-exec", "-execdir", "-ok", "-okdir"))


def _reads(pattern: str = "", value: str = "", data: str = "", none: str = "", positional: int = 1) -> tuple:
    """What a tool reads as data: options whose value is its pattern or script, options taking another
    value, options whose value is other data, options after which no word is the pattern (a file of
    patterns, a listing mode), and which positional words are data (0 none, 1 the first, 2 all)."""
    return (*(frozenset(names.split()) for names in (pattern, value, data, none)), positional)


def _specs() -> dict[str, tuple]:
    """How each tool of shell_words.DATA_NAMES reads its arguments (`git grep`, `git log`: by subcommand)."""
    specs: dict[str, tuple] = {}
    context = "-A -B -C -m --max-count --context --after-context --before-context"
    grep = _reads(
        "-e --regexp",
        f"{context} -d -D -f --file --include --exclude --exclude-dir --label --binary-files --devices "
        "--directories",
        none="-f --file",
    )
    rg = _reads(
        "-e --regexp",
        f"{context} -g --glob --iglob -t --type -T --type-not -j --threads -M --max-columns -d --max-depth "
        "-E --encoding --sort --sortr --type-add --type-clear --colors --color --pre --pre-glob "
        "--ignore-file --max-filesize --context-separator --path-separator --engine -f --file",
        data="-r --replace",
        none="-f --file --files --type-list",
    )
    ack = _reads("--match -g", f"{context} --type --ignore-dir --noignore-dir", none="-f")
    sed = _reads("-e --expression", "-l --line-length -f --file", none="-f --file")
    awk = _reads("-e --source", "-F -v --field-separator --assign -f --file -W", none="-f --file")
    pgrep = _reads(
        value="-u -U -g -G -P -s -t -F --signal --uid --euid --group --parent --session --terminal --pidfile"
    )
    names = _reads(positional=2)  # which pytest, man git: names looked up
    specs.update(
        dict.fromkeys(("grep", "egrep", "fgrep", "zgrep", "ggrep", "ugrep"), grep),
        rg=rg,
        ag=_reads("-g", f"{context} --ignore --ignore-dir --depth -p --path-to-ignore", data="-G"),
        ack=ack,
        sed=sed,
        gsed=sed,
        pgrep=pgrep,
        pkill=pgrep,
        # perl -e, ruby -e, node -e: a script, not a command.
        perl=_reads("-e -E", positional=0),
        ruby=_reads("-e", positional=0),
        node=_reads("-e --eval -p --print", positional=0),
    )
    specs.update(dict.fromkeys(("awk", "gawk", "mawk", "nawk"), awk))
    specs.update(dict.fromkeys(("which", "whereis", "type", "man", "apropos", "whatis", "tldr"), names))
    specs["ack-grep"] = ack
    specs["git grep"] = _reads("-e", f"{context} -f --max-depth --threads", none="-f")
    # git log -S/-G (the pickaxe), --grep, --author: what the history is searched for.
    specs["git log"] = _reads("--grep -S -G --author --committer --grep-reflog -L", positional=0)
    specs["find"] = _reads(
        data="-name -iname -path -ipath -wholename -iwholename -regex -iregex -lname -ilname"
    )
    return specs


SPECS = _specs()


def data_words(texts: "list[str]", start: int, end: int, drop: "set[int]") -> None:
    """Add to `drop` the indexes of the words in texts[start:end] that the command there reads as data."""
    j = shell_words.command_start(texts, start)
    if j >= end:
        return
    name = shell_words.basename(texts[j])
    if name == "git":
        i, sub = shell_words.git_subcommand(texts, j + 1, end)
        if sub in shell_words.GIT_SEARCHING:
            option_data(texts, i + 1, end, SPECS["git grep" if sub == "grep" else "git log"], drop)
    elif name == "find":
        _, _, patterns, _, _ = SPECS["find"]  # -name '*.py': a glob
        i = j + 1
        while i < end:
            word = texts[i]
            if word in patterns:
                drop.add(i + 1)
                i += 1
            elif word in FIND_EXEC:  # -exec grep -l pytest {} + : the command it runs has data too
                stop = i + 1
                while stop < end and texts[stop] not in (";", "+"):
                    stop += 1
                data_words(texts, i + 1, stop, drop)
                i = stop
            i += 1
    elif name in shell_words.DATA_NAMES:
        option_data(texts, j + 1, end, SPECS[name], drop)


def option_data(texts: list[str], i: int, end: int, spec: tuple, drop: set[int]) -> None:
    """The data words of a tool's arguments texts[i:end], read as getopt reads them."""
    pattern, value, data, none, positional = spec  # as `_reads` gives them
    given = False  # the pattern came through an option (-e, -f): no positional word is one
    positionals: list[int] = []
    while i < end:
        word = texts[i]
        if not word:  # sed -i '' (BSD): the empty suffix
            pass
        elif word == "--":
            positionals.extend(range(i + 1, end))
            break
        elif word.startswith("--"):
            name, eq, _ = word.partition("=")
            if name in pattern or name in data:
                given = given or name in pattern
                if eq:
                    drop.add(i)
                else:
                    drop.add(i + 1)
                    i += 1
            elif name in value:
                given = given or name in none
                i += 0 if eq else 1
            elif name in none:
                given = True
        elif word.startswith("-") and len(word) > 1:
            for at in range(1, len(word)):  # a cluster: -rn, -A3, -ie PATTERN
                flag = "-" + word[at]
                if flag in pattern or flag in data:
                    given = given or flag in pattern
                    if at + 1 < len(word):
                        drop.add(i)
                    else:
                        drop.add(i + 1)
                        i += 1
                    break
                if flag in value:
                    given = given or flag in none
                    i += 1 if at + 1 == len(word) else 0
                    break
                if flag in none:
                    given = True
        else:
            positionals.append(i)
        i += 1
    if positional == 2:
        drop.update(positionals)
    elif positional == 1 and positionals and not given:
        drop.add(positionals[0])
