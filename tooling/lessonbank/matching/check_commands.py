"""Which shell commands are checks (tests, builds, linters, type checkers, format checks): the one answer.

Both sides ask here and nowhere else: the hooks record `check_name(command)` for each Bash call
(the trial's failed checks per turn), and the scan (scan/outcomes.py) asks `classify(words)` of each
simple command matching/shell.py cuts out of a transcript's command (its failed-then-passed episodes).

`check_name` gives e.g. "pytest", "npm test", "cargo clippy", "go vet", "make test", "gcc" or
"ruff + mypy" for a command running two, and "" for anything else. Runner prefixes (`python -m`,
`uv run`, `npx`, `poetry run`, `sudo`, `timeout 60`, …) are looked through, so
`uv run python -m pytest -x` and `pytest tests/` are both "pytest". A compiler or build is a check;
what only installs, serves, cleans or formats in place is not. No `re`: the hooks run this on every
Bash call.
"""

from lessonbank.matching import shell, shell_words

TEST, BUILD, LINT = "test", "build", "lint"

# A check by its name alone: command -> (stable name, category).
PLAIN = {
    "pytest": ("pytest", TEST), "py.test": ("pytest", TEST), "tox": ("tox", TEST), "nox": ("nox", TEST),
    "jest": ("jest", TEST), "vitest": ("vitest", TEST), "mocha": ("mocha", TEST), "ava": ("ava", TEST),
    "rspec": ("rspec", TEST), "phpunit": ("phpunit", TEST), "ctest": ("ctest", TEST),
    "unittest": ("unittest", TEST), "nosetests": ("nose", TEST), "ward": ("ward", TEST),
    "behave": ("behave", TEST), "karma": ("karma", TEST), "bats": ("bats", TEST),
    "tsc": ("tsc", LINT), "vue-tsc": ("tsc", LINT), "mypy": ("mypy", LINT), "dmypy": ("mypy", LINT),
    "pyright": ("pyright", LINT), "basedpyright": ("pyright", LINT), "eslint": ("eslint", LINT),
    "flake8": ("flake8", LINT), "pylint": ("pylint", LINT), "stylelint": ("stylelint", LINT),
    "rubocop": ("rubocop", LINT), "golangci-lint": ("golangci-lint", LINT),
    "shellcheck": ("shellcheck", LINT), "hadolint": ("hadolint", LINT),
    "clippy-driver": ("cargo clippy", LINT), "msbuild": ("msbuild", BUILD),
}  # fmt: skip
# Formatters: a check only with one of these flags (without one they rewrite files).
FORMATTERS = {
    "black": ("--check",), "prettier": ("--check", "-c", "--list-different", "-l"),
    "isort": ("--check", "--check-only", "-c"),
}  # fmt: skip
# Compilers: a check, named by the tool; the scan's key adds the sources they were given.
COMPILERS = frozenset(
    ("gcc", "g++", "clang", "clang++", "cc", "c++", "nvcc", "javac", "rustc", "swiftc",
     "pdflatex", "xelatex", "lualatex", "latexmk")
)  # fmt: skip
SOURCE_SUFFIXES = (".c", ".cc", ".cpp", ".cxx", ".cu", ".m", ".java", ".rs", ".tex", ".swift")
# Tools whose first positional word makes them a check: tool -> {subcommand: category}.
SUBCOMMANDS = {
    "cargo": {"test": TEST, "nextest": TEST, "check": BUILD, "build": BUILD, "clippy": LINT},
    "go": {"test": TEST, "build": BUILD, "vet": LINT},
    "dotnet": {"test": TEST, "build": BUILD},
    "swift": {"test": TEST, "build": BUILD},
    "mix": {"test": TEST, "compile": BUILD, "credo": LINT, "dialyzer": LINT},
    "bazel": {"test": TEST, "build": BUILD},
    "deno": {"test": TEST, "lint": LINT, "check": LINT},
    "zig": {"test": TEST, "build": BUILD},
    "docker": {"build": BUILD},
    "meson": {"test": TEST, "compile": BUILD, "setup": BUILD},
}
# Their formatting subcommands: a check only with the flag that makes them report instead of rewrite.
FORMAT_SUBCOMMANDS = {
    ("cargo", "fmt"): "--check", ("deno", "fmt"): "--check", ("mix", "format"): "--check-formatted",
    ("dotnet", "format"): "--verify-no-changes",
}  # fmt: skip
# Maven phases and Gradle tasks that check (`mvn clean install` is "mvn install"; `:app:test` counts).
BUILD_TOOLS = {"mvn": "mvn", "mvnw": "mvn", "gradle": "gradle", "gradlew": "gradle"}
PHASES = {
    "mvn": {"test": TEST, "verify": TEST, "integration-test": TEST, "compile": BUILD, "test-compile": BUILD,
            "package": BUILD, "install": BUILD},
    "gradle": {"test": TEST, "check": TEST, "build": BUILD, "assemble": BUILD},
}  # fmt: skip
# Tools that check only through one subcommand (`npx playwright install` installs browsers).
CHECKING_SUBCOMMAND = {"playwright": "test", "cypress": "run", "vite": "build"}
WEBPACK_NOT_BUILDING = frozenset(("serve", "init", "info", "configtest"))
BUILD_TOOL_FLAGS_WITH_VALUE = frozenset(("-pl", "-f", "-s", "-P", "-p", "-x", "--exclude-task"))
RUFF_NOT_CHECKING = frozenset(("clean", "rule", "config", "linter", "server", "version", "help", "analyze"))
PACKAGE_MANAGERS = frozenset(("npm", "pnpm", "yarn", "bun"))
# Package-manager flags that take a value (`pnpm --filter web test`: the script is `test`).
PM_FLAGS_WITH_VALUE = frozenset({"--filter", "-F", "-C", "--dir", "-w", "--workspace", "--prefix", "--cwd"})
# A script is a check when its first or last part (split on `:`, `-`, `_`) is one of these.
SCRIPT_WORDS = {
    "test": TEST, "tests": TEST, "spec": TEST, "e2e": TEST, "jest": TEST, "vitest": TEST, "verify": TEST,
    "ci": TEST, "lint": LINT, "typecheck": LINT, "types": LINT, "tsc": LINT, "check": LINT,
    "build": BUILD, "compile": BUILD,
}  # fmt: skip
# make targets that build or check nothing: a failing `make dev` then a passing one is no recovery.
NOT_BUILD_TARGETS = frozenset(
    {"clean", "distclean", "install", "uninstall", "help", "run", "dev", "serve", "start", "deps",
     "format", "fmt", "setup", "init", "bench", "benchmark"}
)  # fmt: skip
MAKE_FLAGS_WITH_VALUE = frozenset(("-C", "--directory", "-f", "--file", "--makefile", "-o", "-W", "-I"))
MAKES = {"make": "make", "gmake": "make", "ninja": "ninja"}
# cmake without `--build` configures (a check), unless it runs a command (-E), a script (-P) or an install.
CMAKE_NOT_BUILDING = frozenset(("-E", "-P", "--install"))
# Runners looked through: command -> the subcommands that run the rest ((): the rest, after options).
RUNNERS = {
    "uv": ("run",), "poetry": ("run",), "pipenv": ("run",), "pdm": ("run",), "hatch": ("run",),
    "rye": ("run",), "pixi": ("run",), "conda": ("run",), "pipx": ("run",), "bundle": ("exec",),
    "npx": (), "bunx": (), "pnpx": (), "uvx": (), "dotenv": (), "npm": ("exec",),
    "pnpm": ("exec", "dlx"), "yarn": ("dlx", "exec"), "bun": ("x",),
}  # fmt: skip
# Runner and interpreter options that take a value (`uv run --with x pytest`, `python -X dev -m pytest`).
RUNNER_FLAGS_WITH_VALUE = frozenset(
    ("--with", "--python", "-p", "--package", "--project", "--directory", "--env-file", "-n", "--name",
     "--prefix", "-e", "--extra", "--group", "--from", "--spec", "-X", "-W")
)  # fmt: skip
_PYTHONS = ("python", "python3", "py", "pypy", "pypy3")
_TEST_SCRIPT_PREFIXES = ("test_", "run_tests", "run-tests")

# Every command name this module can call a check (and test scripts), for a quick look before parsing.
NAMES = frozenset(
    {*PLAIN, *FORMATTERS, *COMPILERS, *SUBCOMMANDS, *BUILD_TOOLS, *PACKAGE_MANAGERS, *MAKES, "ruff", "biome",
     "playwright", "cypress", "pre-commit", "vite", "webpack", "xcodebuild", "cmake", "just"}
)  # fmt: skip


class CheckCommand:
    """A simple command that is a check: its stable name, category, key and words.

    name: what both the hooks' ledger and the scan call it ("pytest", "npm test", "make test").
    category: test | build | lint. key: the check as written, for telling runs apart in the scan
    ("py.test", "make -C sub test", "gcc a.c"). words: from the tool (or the package script) on.
    """

    __slots__ = ("name", "category", "key", "words")

    def __init__(self, name: str, category: str, key: str, words: list[str]) -> None:
        self.name, self.category, self.key, self.words = name, category, key, words

    def __repr__(self) -> str:
        return f"CheckCommand({self.name!r}, {self.category!r}, {self.key!r})"


def check_name(command: str) -> str:
    """The names of the checks in `command` joined by " + ", or "" when it runs none."""
    names: list[str] = []
    for words in shell.segments(command):
        found = classify(words)
        if found is not None and found.name not in names:
            names.append(found.name)
    return " + ".join(names)


def classify(words: list[str]) -> CheckCommand | None:
    """The check one simple command (its words, as matching/shell.py gives them) runs, or None."""
    words = _unwrap(list(words))
    if not words:
        return None
    base = _command(words[0])
    if base in PACKAGE_MANAGERS:
        return _package_script(base, words)
    found = _tool(base, words)
    if found is not None:
        return found
    if base in SUBCOMMANDS:
        sub = _first_positional(words[1:])
        category = SUBCOMMANDS[base].get(sub)
        flag = FORMAT_SUBCOMMANDS.get((base, sub))
        if flag is not None and flag in words:
            category = LINT
        return CheckCommand(f"{base} {sub}", category, f"{base} {sub}", words) if category else None
    if base in BUILD_TOOLS:
        tool = BUILD_TOOLS[base]
        for word in _positionals(words[1:], BUILD_TOOL_FLAGS_WITH_VALUE):
            category = PHASES[tool].get(word.rpartition(":")[2])
            if category:
                return CheckCommand(f"{tool} {word}", category, f"{base} {word}", words)
        return None
    if base in MAKES:
        return _make(base, words)
    if base == "cmake":
        if "--build" in words:
            return CheckCommand("cmake --build", BUILD, "cmake --build", words)
        if CMAKE_NOT_BUILDING.isdisjoint(words):  # configuring is part of building
            return CheckCommand("cmake", BUILD, "cmake", words)
        return None
    if base == "just":
        recipe = _first_positional(words[1:])
        category = _script_category(recipe) if recipe else None
        return CheckCommand(f"just {recipe}", category, f"just {recipe}", words) if category else None
    if is_test_script(base):
        return CheckCommand(base, TEST, base, words)
    return None


def is_test_script(name: str) -> bool:
    """Whether a command name reads as a project's own test script (`./run_tests.sh`, `./test_parser`)."""
    return name.startswith(_TEST_SCRIPT_PREFIXES) or name in ("test.sh", "tests.sh", "runtests")


def _tool(base: str, words: list[str]) -> CheckCommand | None:
    """The check of a tool that is one by its name and options (also when a package manager runs it)."""
    if base in PLAIN:
        name, category = PLAIN[base]
        return CheckCommand(name, category, base, words)
    if base in FORMATTERS:
        flags = FORMATTERS[base]
        return CheckCommand(base, LINT, base, words) if any(w in flags for w in words) else None
    if base in COMPILERS:
        sources = sorted({shell_words.basename(w) for w in words[1:] if w.endswith(SOURCE_SUFFIXES)})
        return CheckCommand(base, BUILD, " ".join([base, *sources[:3]]), words)
    sub = _first_positional(words[1:])
    if base == "ruff":  # `ruff`, `ruff check`, `ruff format --check`; `ruff format` rewrites
        if sub == "format":
            return CheckCommand("ruff", LINT, "ruff format", words) if "--check" in words else None
        if sub in RUFF_NOT_CHECKING:
            return None
        return CheckCommand("ruff", LINT, "ruff check" if sub == "check" else "ruff", words)
    if base == "biome":
        if sub in ("check", "lint", "ci") or (sub == "format" and "--write" not in words):
            return CheckCommand("biome", LINT, "biome", words)
        return None
    wanted = CHECKING_SUBCOMMAND.get(base)
    if wanted is not None:
        name = "vite build" if base == "vite" else base
        return CheckCommand(name, BUILD if base == "vite" else TEST, name, words) if sub == wanted else None
    if base == "pre-commit":
        return CheckCommand(base, LINT, base, words) if sub in ("", "run") else None
    if base == "webpack":  # `webpack serve` is a dev server
        return CheckCommand(base, BUILD, base, words) if sub not in WEBPACK_NOT_BUILDING else None
    if base == "xcodebuild":
        return CheckCommand(base, TEST if "test" in words else BUILD, base, words)
    return None


def _package_script(pm: str, words: list[str]) -> CheckCommand | None:
    """`npm test`, `pnpm --filter web lint`, `yarn run build:prod`, `pnpm vitest run`, `bun test`."""
    at = _positional_indexes(words, 1, PM_FLAGS_WITH_VALUE)
    if not at:
        return None
    via_run = words[at[0]] in ("run", "run-script")
    if via_run or (pm == "yarn" and words[at[0]] == "workspace"):
        at = at[1:] if via_run else at[2:]
        if not at:
            return None
    script, words = words[at[0]], words[at[0] :]
    if not via_run:
        if script == "ci":  # `npm ci`, `pnpm ci`: a clean install
            return None
        found = _tool(_command(script), words)
        if found is not None:
            return found
    if script in ("t", "tst"):  # npm's aliases of `test`
        return CheckCommand(f"{pm} test", TEST, f"{pm} {script}", words)
    category = _script_category(script)
    return CheckCommand(f"{pm} {script}", category, f"{pm} {script}", words) if category else None


def _script_category(script: str) -> str | None:
    parts = script.replace("-", ":").replace("_", ":").split(":")
    return SCRIPT_WORDS.get(parts[0]) or SCRIPT_WORDS.get(parts[-1])


def _make(base: str, words: list[str]) -> CheckCommand | None:
    """make, gmake, ninja: the first target (none: the default one), minus targets that check nothing."""
    target = folder = ""
    rest = words[1:]
    i = 0
    while i < len(rest):
        word = rest[i]
        takes_value = word in ("-j", "-l") and i + 1 < len(rest) and rest[i + 1].isdigit()  # -j 8
        if takes_value or word in MAKE_FLAGS_WITH_VALUE:
            if word in ("-C", "--directory") and i + 1 < len(rest):
                folder = rest[i + 1]
            i += 2
            continue
        if not word.startswith("-") and "=" not in word:
            target = word
            break
        i += 1
    if target in NOT_BUILD_TARGETS:
        return None
    category = TEST if "test" in target or "check" in target else LINT if "lint" in target else BUILD
    name = f"{MAKES[base]} {target}".strip()
    key = " ".join(x for x in (base, f"-C {folder}" if folder else "", target) if x)
    return CheckCommand(name, category, key, words)


def _command(word: str) -> str:
    name = shell_words.basename(word)
    return name[:-4] if name.endswith(".exe") else name


def _is_python(name: str) -> bool:
    return name in _PYTHONS or (name.startswith("python3.") and name[8:].isdigit())


def _skip_options(words: list[str]) -> list[str]:
    """`words` from its first positional on (`--` ends the options)."""
    i = 0
    while i < len(words) and words[i].startswith("-"):
        if words[i] == "--":
            return words[i + 1 :]
        i += 2 if words[i] in RUNNER_FLAGS_WITH_VALUE else 1
    return words[i:]


def _unwrap(words: list[str]) -> list[str]:
    """Strip wrappers and runners: `uv run python -m pytest -x` -> [pytest, -x]."""
    for _ in range(6):
        words = words[shell_words.command_start(words) :]
        if not words:
            return words
        name = _command(words[0])
        if _is_python(name):
            rest = words[1:]
            while rest and rest[0].startswith("-") and rest[0] != "-m":
                rest = rest[2:] if rest[0] in RUNNER_FLAGS_WITH_VALUE else rest[1:]
            if len(rest) < 2 or rest[0] != "-m":
                return words
            words = rest[1:]
            continue
        subs = RUNNERS.get(name)
        if subs is None:
            return words
        if not subs:  # npx and friends: the next positional word
            words = _skip_options(words[1:])
        elif len(words) > 1 and words[1] in subs:
            words = _skip_options(words[2:])
        else:
            return words
    return words


def _positional_indexes(words: list[str], start: int, with_value: frozenset[str]) -> list[int]:
    """Indexes of the words from `start` on that are not options nor the values of `with_value` options."""
    out: list[int] = []
    skip = False
    for i in range(start, len(words)):
        word = words[i]
        if skip:
            skip = False
        elif word in with_value:
            skip = True
        elif not word.startswith(("-", "+")):
            out.append(i)
    return out


def _positionals(words: list[str], with_value: frozenset[str]) -> list[str]:
    return [words[i] for i in _positional_indexes(words, 0, with_value)]


def _first_positional(words: list[str]) -> str:
    """The first word that is not an option (`cargo +nightly test`: `test`), or ""."""
    return next((w for w in words if not w.startswith(("-", "+"))), "")
