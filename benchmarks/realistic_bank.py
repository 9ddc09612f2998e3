"""A bank of generated lessons shaped like real ones, what every benchmark here measures on.

About 50 tools, a few of which hold most lessons, and their subcommands and flags, so many lessons
share a tool name; seven kinds of command regex (plain, negative and positive lookaheads,
alternation, flags, environment assignments, arguments); `**/` and `{a,b}` globs with directory
literals and extensions; keywords and tags; short and long texts and bodies. Lessons 0-2 fit the
calls bench_hook times.
"""

from __future__ import annotations

import random
import re
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tooling"))

from lessonbank.bank import lesson, render  # noqa: E402
from lessonbank.bank.store import Bank  # noqa: E402
from lessonbank.install import claude  # noqa: E402

# Tools, their subcommands and flags: what real lessons are about (50 tools, many lessons per tool).
TOOLBOX = {
    "cargo": ("build test run check clippy fmt bench doc", "--release --workspace --locked --all-features --offline"),
    "npm": ("install run test ci publish audit exec", "--legacy-peer-deps --save-dev --workspaces --omit=dev"),
    "yarn": ("install add build test run dlx", "--frozen-lockfile --immutable --prod"),
    "pnpm": ("install add run test exec publish", "--frozen-lockfile --filter --recursive"),
    "pytest": ("tests unit integration e2e", "-x -k --lf -n --maxfail --cov -vv"),
    "python": ("-m setup.py manage.py -c", "-X -O -B -u"),
    "pip": ("install uninstall freeze download wheel", "--no-deps --user --upgrade --pre -e"),
    "uv": ("sync run pip lock add venv", "--frozen --locked --no-dev --python"),
    "poetry": ("install lock add run update build", "--no-root --sync --only"),
    "go": ("build test run vet mod generate", "-race -count -tags -mod=vendor -v"),
    "make": ("build test lint clean install release", "-j -B -C -k"),
    "docker": ("build run push pull compose exec", "--no-cache --platform --pull --rm -it"),
    "kubectl": ("apply delete get logs rollout exec", "-f -n --context --dry-run --force"),
    "helm": ("install upgrade template lint rollback", "--atomic --wait --set -f --dry-run"),
    "terraform": ("plan apply init destroy import fmt", "-auto-approve -target -var-file -upgrade -lock=false"),
    "git": ("push rebase commit merge reset stash clean", "--force --no-verify --hard -i --amend -fdx"),
    "gh": ("pr release workflow run issue api", "--draft --fill --web --repo"),
    "ruff": ("check format", "--fix --select --unsafe-fixes --diff"),
    "mypy": ("src tests", "--strict --ignore-missing-imports --install-types"),
    "eslint": ("src . lib", "--fix --cache --max-warnings --ext"),
    "tsc": ("-p --build --noEmit", "--watch --incremental --skipLibCheck"),
    "jest": ("src tests", "--watch --runInBand --ci --coverage -u"),
    "vitest": ("run bench", "--watch --coverage --reporter --threads"),
    "gradle": ("build test assemble clean publish", "--offline --refresh-dependencies --no-daemon --info"),
    "mvn": ("install test package deploy verify", "-DskipTests -U -o -pl -am"),
    "tox": ("-e run", "-p -r --recreate"),
    "alembic": ("upgrade downgrade revision stamp", "--autogenerate --sql head"),
    "rails": ("db:migrate console server generate test", "-e RAILS_ENV --sandbox"),
    "bundle": ("install exec update", "--deployment --path --jobs"),
    "rake": ("db:migrate test assets:precompile", "--trace -T"),
    "composer": ("install update require dump-autoload", "--no-dev -o --ignore-platform-reqs"),
    "dotnet": ("build test run publish restore", "-c --no-restore --framework"),
    "swift": ("build test run package", "-c --parallel --filter"),
    "flutter": ("build run test pub", "--release --debug --no-sound-null-safety"),
    "bazel": ("build test run query clean", "--config --jobs --test_output=errors"),
    "cmake": ("--build -S -B --install", "-G -DCMAKE_BUILD_TYPE -j"),
    "ansible-playbook": ("site.yml deploy.yml", "--check --diff -i --limit --tags"),
    "aws": ("s3 ec2 lambda cloudformation ecr", "--profile --region --dry-run --recursive"),
    "gcloud": ("deploy builds run functions auth", "--project --region --quiet"),
    "psql": ("-c -f -d", "-U -h --single-transaction"),
    "redis-cli": ("flushall keys monitor", "-h -p -n --scan"),
    "node": ("index.js server.js scripts", "--inspect --max-old-space-size --experimental-vm-modules"),
    "deno": ("run test task fmt", "--allow-all --unstable --watch"),
    "bun": ("install run test build", "--frozen-lockfile --watch --hot"),
    "rsync": ("-av -a -r", "--delete --dry-run --exclude"),
    "ssh": ("deploy bastion", "-i -L -o"),
    "curl": ("-X -d -H", "-k -L --fail -sS"),
    "sed": ("-i -e -n", "-E -r"),
    "jq": ("-r . -c", "--arg -e -s"),
    "pre-commit": ("run install autoupdate", "--all-files --hook-stage"),
}
ENVS = ("RUST_BACKTRACE", "NODE_OPTIONS", "DOCKER_BUILDKIT", "CI", "PYTHONPATH", "GOFLAGS", "RAILS_ENV", "TF_LOG")
WORDS = (
    "cache", "flaky", "timeout", "migration", "fixture", "lockfile", "deploy", "schema", "secret",
    "network", "retry", "snapshot", "coverage", "parallel", "seed", "vendor", "release", "build",
    "config", "database", "worker", "queue", "token", "locale", "encoding", "symlink", "docs",
    "memory", "proxy", "cert", "monorepo", "plugin", "codegen", "fixtures", "tenant", "billing",
)  # fmt: skip
EXTENSIONS = ("py", "ts", "tsx", "go", "rs", "sql", "yaml", "toml", "json", "md", "proto", "tf", "rb", "java")
DIRS = ("src", "app", "lib", "services", "packages", "migrations", "infra", "charts", "api", "web", "cmd", "internal")


def _pick(rng: random.Random, items: tuple | list, skew: float = 0.8):  # noqa: ANN202
    """An item, earlier ones likelier (Zipf-like: a few tools hold most lessons, as in real banks)."""
    weights = [1 / (k + 1) ** skew for k in range(len(items))]
    return rng.choices(items, weights)[0]


def _command_trigger(rng: random.Random, tools: list[str]) -> str:
    """One of seven kinds of command regex real lessons carry, about a tool and its subcommand."""
    tool = _pick(rng, tools)
    subs, flags = (part.split() for part in TOOLBOX[tool])
    sub, flag, word = rng.choice(subs), rng.choice(flags), rng.choice(WORDS)
    t, s, f = re.escape(tool), re.escape(sub), re.escape(flag)
    kind = rng.choices(range(7), (8, 17, 15, 15, 15, 15, 15))[0]
    if kind == 0:  # plain tool and subcommand
        return rf"\b{t}\s+{s}\b"
    if kind == 1:  # quiet once the fix (a flag) is in the command
        return rf"\b{t}\s+{s}\b(?!.*{f}).*\b{word}\b"
    if kind == 2:  # alternation of tools and subcommands, with a flag
        other = _pick(rng, tools)
        other_subs, _ = TOOLBOX[other]
        s2 = rng.choice(other_subs.split())
        return rf"\b(?:{t}|{re.escape(other)})\s+(?:{s}|{re.escape(s2)})\b.*\s{f}(?:\s|=|$)"
    if kind == 3:  # a flag anywhere after the tool
        return rf"\b{t}\b.*\s{f}\b"
    if kind == 4:  # an environment assignment the command runs with
        return rf"\b{t}\s+{s}\b.*\b{rng.choice(ENVS)}=\S+"
    if kind == 5:  # lookaheads: the tool first, a flag and a word anywhere
        return rf"^{t}\b(?=.*\s{f})(?=.*{word})"
    return rf"\b{t}\s+{s}\s+\S*{word}\S*\.(?:{rng.choice(EXTENSIONS)}|{rng.choice(EXTENSIONS)})\b"


def _path_trigger(rng: random.Random) -> str:
    """A path glob of the shapes real lessons carry: `**/`, `{a,b}`, directory literals, extensions."""
    ext, ext2 = rng.sample(EXTENSIONS, 2)
    folder, other = rng.sample(DIRS, 2)
    word = rng.choice(WORDS)
    kind = rng.randrange(6)
    if kind == 0:
        return f"{folder}/**/*.{ext}"
    if kind == 1:
        return f"{folder}/**/{word}/*.{{{ext},{ext2}}}"
    if kind == 2:
        return f"**/{word}/**/*.{ext}"
    if kind == 3:
        return f"{{{folder},{other}}}/**/{word}*.{ext}"
    if kind == 4:
        return f"**/{word}_*.{ext}"
    return f"{folder}/{word}/**"


# The lessons the matching calls meet (they stand among the others, numbered 0-2).
FITTING = (
    ([r"\bcargo\s+test\b(?!.*--test-threads).*\bRUST_BACKTRACE=\S+"], []),
    ([], ["src/**/billing/**/*.{py,pyi}"]),
    ([], []),  # the prompt's: keywords only
)


def synthetic(n: int, seed: int = 7) -> list[lesson.Lesson]:
    """n lessons shaped like a real bank's: about 50 tools (a few hold most lessons) and their
    subcommands, seven kinds of command regex, `**/` and `{a,b}` globs, keywords and tags, short
    and long texts and bodies. Lessons 0-2 fit the matching calls."""
    rng = random.Random(seed)
    tools = list(TOOLBOX)
    lessons = []
    for i in range(n):
        tool = _pick(rng, tools)
        word, other = rng.sample(WORDS, 2)
        commands: list[str] = []
        paths: list[str] = []
        keywords = [tool, word]
        if i < len(FITTING):
            commands, paths = (list(x) for x in FITTING[i])
            keywords = ["billing", "worker", "timeout"] if i == 2 else keywords
        else:
            shape = rng.random()
            if shape < 0.6:
                commands = [_command_trigger(rng, tools) for _ in range(rng.choice((1, 1, 1, 2)))]
            elif shape < 0.85:
                paths = [_path_trigger(rng) for _ in range(rng.choice((1, 1, 2)))]
            elif shape < 0.95:
                commands, paths = [_command_trigger(rng, tools)], [_path_trigger(rng)]
            # else: keywords only (recalled by prompts)
        detail = " ".join(rng.choice(WORDS) for _ in range(rng.choice((3, 8, 20, 40))))
        body = "\n".join(f"- {rng.choice(WORDS)} {detail}" for _ in range(rng.choice((0, 0, 1, 5, 30))))
        lessons.append(
            lesson.Lesson(
                id=f"01BENCH{i:019d}",
                slug=f"{tool}-{word}-{other}-{i}",
                title=f"{tool} {word} needs care ({i})",
                when=f"running {tool} with the {word} {other} setup ({detail})",
                do=f"set the {word} option before running {tool}; see docs/{other}.md",
                promote_to=f"rule:{tool}",
                tools=(["Bash"] if commands else []) + (["Edit", "Write"] if paths and rng.random() < 0.5 else []),
                commands=commands,
                paths=paths,
                keywords=keywords,
                tags=[f"tool:{tool}", f"area:{word}"],
                priority=rng.randint(1, 10),
                confidence=round(rng.random(), 2),
                created="2026-11-29",
                updated="2026-11-29",
                body=body,
            )
        )
    return lessons


def make_bank(root: Path, n: int) -> tuple[Bank, float]:
    """A bank of n lessons with its INDEX.md, compiled index and installed hooks; build seconds."""
    root.mkdir(parents=True)
    (root / "bank.toml").write_text("", encoding="utf-8")
    (root / "lessons").mkdir()
    for one in synthetic(n):
        (root / "lessons" / f"{one.slug}.md").write_text(lesson.render(one), encoding="utf-8")
    bank = Bank.open(root)
    started = time.perf_counter()
    render.regenerate(bank)
    built = time.perf_counter() - started
    claude.install(root)
    return bank, built

