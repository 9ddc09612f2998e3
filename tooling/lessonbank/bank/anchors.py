"""Verify anchors: what a lesson's words name that the repository can show still exists. Pure.

A lesson names files (`bench/run.sh`), scripts and targets (`npm run lint`, `make check`), config
keys (`tool.ruff.line-length`, `compilerOptions.strict`) and code (`vi.resetAllMocks()`,
`vsla_tensor_t`). `mentions` reads them from its words; `derive` keeps those the repository holds
now, as verify fields groom checks later: `verify.paths` for files, `verify.defines` for a script,
target or key defined in a file (`package.json:lint`, `Makefile:check`, `pyproject.toml:tool.ruff`),
`verify.match` for code. `defined` answers the `defines` question for one file's text. The caller
brings the repository: its tracked paths, a reader and a search for a literal.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Callable, Collection
from dataclasses import dataclass

MAX_EACH = 3  # anchors of one kind kept per lesson

_PATH = re.compile(r"(?<![\w@$:/.-])(?:\./)?((?:[\w.-]+/)+[\w.-]+|[\w-]+\.[A-Za-z][\w]{0,7})(?![\w/-])")
_SCRIPT = re.compile(r"\b(npm|pnpm|yarn|bun)\s+(?:-\S+\s+)*(?:run(?:-script)?\s+)?([\w:.-]+)|\bmake\s+(?:-\S+\s+)*([\w.-]+)")
_CODE = re.compile(r"`([^`\n]{2,80})`")
_IDENT = re.compile(r"^[A-Za-z_][\w]*(?:\.[A-Za-z_][\w]*)*(?:\(\))?$")
_KEY = re.compile(r"^[A-Za-z_][\w-]*(?:\.[A-Za-z_][\w-]*)+$")
# Package manager subcommands that are not scripts; `npm test` and `npm start` run scripts.
_BUILTIN = frozenset(("install", "i", "add", "remove", "rm", "uninstall", "ci", "exec", "dlx", "x", "update", "up",
                      "outdated", "list", "ls", "why", "init", "create", "publish", "pack", "link", "audit", "config",
                      "run", "version", "help", "login", "logout", "cache", "prune", "dedupe", "rebuild", "view"))  # fmt: skip
_EXTENSIONS = frozenset(("py", "ts", "tsx", "js", "jsx", "mjs", "cjs", "json", "toml", "yaml", "yml", "md", "c", "h",
                         "cc", "cpp", "hpp", "cu", "rs", "go", "java", "kt", "rb", "sh", "tex", "sql", "cfg", "ini",
                         "lock", "txt", "css", "scss", "html", "vue", "svelte", "swift", "cs", "php", "mk", "env"))  # fmt: skip
_CONFIG_FILES = ("pyproject.toml", "package.json", "tsconfig.json", "Cargo.toml", "setup.cfg", "deno.json")


@dataclass(frozen=True)
class Mention:
    """One thing a lesson names: a path, a script (with the tool that runs it), a config key or code."""

    kind: str  # path | script | key | code
    name: str
    runner: str = ""


def mentions(text: str) -> list[Mention]:
    """What the words name, in order, each once."""
    found: list[Mention] = []
    for match in _SCRIPT.finditer(text):
        runner, name = (match.group(1), match.group(2)) if match.group(1) else ("make", match.group(3))
        if name not in _BUILTIN and not name.startswith("-"):
            found.append(Mention("script", name, runner))
    for span in _CODE.findall(text):
        span = span.strip()
        if _KEY.match(span) and not span.endswith(tuple("." + e for e in _EXTENSIONS)):
            found.append(Mention("key", span))
        if _IDENT.match(span) and ("_" in span or "." in span or span.endswith("()") or re.search(r"[a-z][A-Z]", span)):
            found.append(Mention("code", span.removesuffix("()")))
    for match in _PATH.finditer(text):
        name = match.group(1).rstrip(".")
        if "/" in name or name.rsplit(".", 1)[-1] in _EXTENSIONS:
            found.append(Mention("path", name))
    return list(dict.fromkeys(found))


def _lookup(data: object, dotted: str) -> bool:
    for part in dotted.split("."):
        if not isinstance(data, dict) or part not in data:
            return False
        data = data[part]
    return True


def defined(file: str, text: str, name: str) -> bool:
    """Whether `file` (its text) defines `name`: a package.json script or key path, a Makefile target, a TOML key."""
    base = file.rsplit("/", 1)[-1]
    if base in ("Makefile", "makefile", "GNUmakefile") or base.endswith(".mk"):
        return re.search(rf"(?m)^(?:[\w.%/-]+\s+)*{re.escape(name)}(?:\s+[\w.%/-]+)*\s*::?(?!=)", text) is not None
    try:
        data = json.loads(text) if base.endswith(".json") else tomllib.loads(text) if base.endswith(".toml") else None
    except ValueError:
        return False
    if base == "package.json" and "." not in name:
        return isinstance(data, dict) and isinstance(data.get("scripts"), dict) and name in data["scripts"]
    return data is not None and _lookup(data, name)


def _resolve_path(name: str, tracked: Collection[str]) -> str:
    name = name.removeprefix("./").strip("/")
    if name in tracked or any(p.startswith(name + "/") for p in tracked):
        return name
    if "/" not in name:  # a bare file name: anchored when exactly one tracked file has it
        same = [p for p in tracked if p.rsplit("/", 1)[-1] == name]
        return same[0] if len(same) == 1 else ""
    return ""


def _script_files(runner: str, tracked: Collection[str]) -> list[str]:
    if runner == "make":
        return sorted(p for p in tracked if p.rsplit("/", 1)[-1] in ("Makefile", "makefile", "GNUmakefile"))
    return sorted((p for p in tracked if p.rsplit("/", 1)[-1] == "package.json"), key=lambda p: (p.count("/"), p))


def derive(
    text: str, tracked: Collection[str], read: Callable[[str], str | None], contains: Callable[[str], bool]
) -> dict[str, list[str]]:
    """The verify fields for what `text` names and the repository holds now ({} when it holds none of it)."""
    out: dict[str, list[str]] = {}

    def add(key: str, value: str) -> None:
        values = out.setdefault(key, [])
        if value not in values and len(values) < MAX_EACH:
            values.append(value)

    for mention in mentions(text):
        if mention.kind == "path":
            path = _resolve_path(mention.name, tracked)
            if path:
                add("paths", path)
        elif mention.kind == "script":
            for file in _script_files(mention.runner, tracked)[:20]:
                body = read(file)
                if body is not None and defined(file, body, mention.name):
                    add("defines", f"{file}:{mention.name}")
                    break
        elif mention.kind == "key":
            for file in [f for f in _CONFIG_FILES if f in tracked]:
                body = read(file)
                if body is not None and defined(file, body, mention.name):
                    add("defines", f"{file}:{mention.name}")
                    break
        elif mention.kind == "code" and contains(mention.name):
            add("match", re.escape(mention.name))
    return {k: v for k, v in out.items() if v}
