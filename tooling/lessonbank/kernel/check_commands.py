"""Which shell commands are checks (tests, builds, linters, type checkers), under one stable name.

`check_name(command)` gives e.g. "pytest", "npm test", "cargo clippy", "go vet", "make test" or
"ruff + mypy" for a command running two, and "" for anything else. Runner prefixes
(`python -m`, `uv run`, `npx`, `poetry run`, `sudo`, `timeout 60`, …) are looked through, so
`uv run python -m pytest -x` and `pytest tests/` are both "pytest".
"""

from lessonbank.kernel import shell

# A command that is a check by its name alone.
PLAIN = {
    "pytest": "pytest", "py.test": "pytest", "tox": "tox", "nox": "nox", "jest": "jest",
    "vitest": "vitest", "mocha": "mocha", "ava": "ava", "tsc": "tsc", "vue-tsc": "tsc",
    "ruff": "ruff", "mypy": "mypy", "dmypy": "mypy", "pyright": "pyright", "basedpyright": "pyright",
    "eslint": "eslint", "flake8": "flake8", "pylint": "pylint", "biome": "biome",
    "stylelint": "stylelint", "rubocop": "rubocop", "rspec": "rspec", "phpunit": "phpunit",
    "ctest": "ctest", "pre-commit": "pre-commit", "golangci-lint": "golangci-lint",
    "shellcheck": "shellcheck", "hadolint": "hadolint", "unittest": "unittest", "nosetests": "nose",
    "ward": "ward", "hypothesis": "pytest", "behave": "behave", "cypress": "cypress",
    "playwright": "playwright", "karma": "karma", "clippy-driver": "cargo clippy",
}  # fmt: skip
# Commands whose subcommand makes them a check.
SUBCOMMANDS = {
    "cargo": ("test", "check", "clippy", "build", "nextest", "bench", "fmt"),
    "go": ("test", "vet", "build"),
    "dotnet": ("test", "build"),
    "swift": ("test", "build"),
    "mix": ("test", "compile", "credo", "dialyzer"),
    "bazel": ("test", "build"),
    "deno": ("test", "lint", "check"),
    "black": ("--check",),
    "prettier": ("--check", "-c"),
    "isort": ("--check", "--check-only", "-c"),
}
PACKAGE_MANAGERS = ("npm", "pnpm", "yarn", "bun")
# Package-manager flags that take a value (`pnpm --filter web test`: the script is `test`).
PM_FLAGS_WITH_VALUE = frozenset({"--filter", "-F", "-C", "--dir", "-w", "--workspace", "--prefix", "--cwd"})
# make targets that build or check nothing: a failing `make dev` then a passing one is no recovery.
NOT_BUILD_TARGETS = frozenset(
    {"clean", "distclean", "install", "uninstall", "help", "run", "dev", "serve", "start", "deps",
     "format", "fmt", "setup", "init", "bench", "benchmark"}
)  # fmt: skip
SCRIPT_WORDS = ("test", "tests", "lint", "build", "typecheck", "type-check", "types", "tsc", "check", "e2e", "verify", "ci")  # fmt: skip
RUNNERS = {
    "uv": ("run",), "poetry": ("run",), "pipenv": ("run",), "pdm": ("run",), "hatch": ("run",),
    "rye": ("run",), "pixi": ("run",), "bundle": ("exec",), "npx": (), "bunx": (), "pnpx": (),
    "pnpm": ("exec", "dlx"), "yarn": ("dlx", "exec"), "bun": ("x",),
}  # fmt: skip
_PYTHONS = ("python", "python3", "py", "pypy", "pypy3")


def check_name(command: str) -> str:
    """The normalized check names in `command` joined by " + ", or "" when it runs none."""
    names: list[str] = []
    for words in shell.segments(command):
        name = segment_check(words)
        if name and name not in names:
            names.append(name)
    return " + ".join(names)


def _is_python(word: str) -> bool:
    name = shell.basename(word)
    return name in _PYTHONS or (name.startswith("python3.") and name[8:].isdigit())


def _unwrap(words: list[str]) -> list[str]:
    """Strip wrappers and runners: `uv run python -m pytest -x` -> [pytest, -x]."""
    for _ in range(6):
        words = words[shell.command_start(words) :]
        if not words:
            return words
        name = shell.basename(words[0])
        if _is_python(name):
            rest = words[1:]
            while rest and rest[0].startswith("-") and rest[0] != "-m":
                rest = rest[1:]
            if len(rest) >= 2 and rest[0] == "-m":
                words = rest[1:]
                continue
            return words
        subs = RUNNERS.get(name)
        if subs is not None:
            rest = words[1:]
            if not subs:  # npx and friends: the next non-option word
                while rest and rest[0].startswith("-"):
                    rest = rest[1:]
                words = rest
                continue
            if rest and rest[0] in subs:
                rest = rest[1:]
                while rest and rest[0].startswith("-"):
                    rest = rest[1:]
                words = rest
                continue
        return words
    return words


def _without_flag_values(words: list[str]) -> list[str]:
    """The positional words, skipping flags and the values of the flags that take one."""
    out: list[str] = []
    skip = False
    for w in words:
        if skip:
            skip = False
        elif w in PM_FLAGS_WITH_VALUE:
            skip = True
        elif not w.startswith("-"):
            out.append(w)
    return out


def segment_check(words: list[str]) -> str:
    """The check one simple command runs, or ""."""
    words = _unwrap(list(words))
    if not words:
        return ""
    name = shell.basename(words[0])
    args = [w for w in words[1:] if not w.startswith("-")]
    if name in PLAIN:
        return PLAIN[name]
    if name in SUBCOMMANDS:
        wanted = SUBCOMMANDS[name]
        if wanted[0].startswith("-"):
            return name if any(w in wanted for w in words[1:]) else ""
        return f"{name} {args[0]}" if args and args[0] in wanted else ""
    if name in PACKAGE_MANAGERS:
        args = _without_flag_values(words[1:])
        if not args:
            return ""
        script = args[1] if args[0] in ("run", "run-script") and len(args) > 1 else args[0]
        if script in ("t", "tst"):
            script = "test"
        head = script.replace(":", "-").split("-")[0]
        if script in SCRIPT_WORDS or head in SCRIPT_WORDS:
            return f"{name} {script}"
        return ""
    if name in ("make", "gmake"):
        target = ""
        rest = words[1:]
        i = 0
        while i < len(rest):
            w = rest[i]
            if w in ("-C", "-f", "-j", "-l", "-o", "-W", "-I"):
                i += 2
                continue
            if not w.startswith("-") and "=" not in w:
                target = w
                break
            i += 1
        return "" if target in NOT_BUILD_TARGETS else f"make {target}".strip()
    if name in ("mvn", "mvnw", "gradle", "gradlew"):
        tool = "mvn" if name.startswith("mvn") else "gradle"
        return f"{tool} {args[0]}" if args else tool
    if name == "just" and args and args[0].split("-")[0] in SCRIPT_WORDS:
        return f"just {args[0]}"
    return ""
