"""The layout keeps its promises: imports flow one way, no circles, the hot path stays light."""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "tooling" / "lessonbank"

# Layers, bottom up. A module may import its own package and any package of a lower layer.
LAYER = {
    "errors": 0,
    "config": 1,
    "matching": 2,
    "state": 2,
    "index": 3,
    "bank": 4,
    "capture": 5,
    "install": 5,
    "hooks": 5,
    "scan": 6,
    "groom": 6,
    "trial": 6,
    "cli": 7,
    "__main__": 8,
}
# The standard-library packages, the floor under everything: the hooks stand on them alone.
STDLIB = {"matching", "state", "index"}
FLOOR = {"errors", "config"}
# Narrower than the layers: what each package may import besides itself.
ALLOWED = {
    "errors": set(),
    "config": {"errors"},
    "matching": FLOOR,
    "state": FLOOR,
    "index": FLOOR | {"matching", "state"},
    "bank": FLOOR | STDLIB,
    "capture": FLOOR | STDLIB | {"bank"},
    "install": FLOOR | STDLIB | {"bank"},
    "hooks": FLOOR | STDLIB,
    "scan": FLOOR | STDLIB | {"capture", "bank"},
    "groom": FLOOR | STDLIB | {"capture", "bank"},
    "trial": FLOOR | STDLIB | {"install", "bank"},
    "cli": set(LAYER) - {"cli", "__main__"},
    "__main__": {"cli"},
}
HEAVY = ("click", "jinja2", "yaml", "frontmatter", "markdown_it", "git")


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


@cache
def imports_of(name: str) -> tuple[tuple[str, int], ...]:
    """(imported module, line) for every import in the module, at any depth (function-level too)."""
    path = modules()[name]
    return imports_in(path.read_text(encoding="utf-8"), name, path.name == "__init__.py", set(modules()))


def imports_in(source: str, name: str, is_package: bool, known: set[str]) -> tuple[tuple[str, int], ...]:
    """The imports of one module's source, relative ones resolved against its name."""
    return tuple((module, line) for module, line, _ in resolved_imports(source, name, is_package, known))


def resolved_imports(source: str, name: str, is_package: bool, known: set[str]) -> Iterator[tuple[str, int, ast.alias | None]]:
    """(imported module, line, alias) for every import in the source, relative ones resolved against
    its name; the alias when it names a module (`import x.y`, or `from x import y` of the module x.y)."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno, alias
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_package else name.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            # `from lessonbank.matching import words` imports the module lessonbank.matching.words
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                yield (sub, node.lineno, alias) if sub in known else (target, node.lineno, None)


def internal_imports(name: str) -> set[str]:
    known = modules()
    return {target for target, _ in imports_of(name) if target in known and target != name}


def package_of(name: str) -> str:
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else "lessonbank"


def test_every_package_and_top_module_has_a_layer() -> None:
    packages = {package_of(n) for n in modules()} - {"lessonbank"}
    assert packages == set(LAYER)


def test_no_import_goes_to_a_package_it_may_not_use() -> None:
    bad = []
    for name in modules():
        own = package_of(name)
        if own == "lessonbank":
            continue
        for target in internal_imports(name):
            other = package_of(target)
            if other not in (own, "lessonbank") and other not in ALLOWED[own]:
                bad.append(f"{name} -> {target}")
    assert bad == []


def test_the_allowed_imports_only_point_down_the_layers() -> None:
    for own, allowed in ALLOWED.items():
        assert all(LAYER[other] < LAYER[own] or other == own for other in allowed), own


def test_there_is_no_import_circle() -> None:
    graph = {name: internal_imports(name) for name in modules()}
    # Package __init__ modules import nothing of the package, so an edge to one is an edge to a leaf.
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(node: str, trail: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycles.append([*trail[trail.index(nxt) :], nxt] if nxt in trail else [node, nxt])
            elif nxt not in state:
                visit(nxt, [*trail, nxt])
        state[node] = 2

    sys.setrecursionlimit(10_000)
    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    assert cycles == []


def test_the_walker_sees_imports_hidden_in_functions_and_relative_ones() -> None:
    # A circle hidden behind a function-level import must not pass unseen.
    source = "def f():\n    from lessonbank.matching import words\n    from . import store\n"
    known = {"lessonbank.matching.words", "lessonbank.bank.store", "lessonbank.bank.lesson"}
    found = imports_in(source, "lessonbank.bank.lesson", False, known)
    assert found == (("lessonbank.matching.words", 2), ("lessonbank.bank.store", 3))


# The hooks load these, and `config` and `errors` with them (and the package's own __init__).
@pytest.mark.parametrize("package", sorted(STDLIB | FLOOR | {"hooks", "lessonbank"}))
def test_the_hot_path_imports_only_the_standard_library(package: str) -> None:
    stdlib = set(sys.stdlib_module_names)
    for name in modules():
        if package_of(name) != package:
            continue
        for target, line in imports_of(name):
            top = target.split(".")[0]
            assert top in stdlib or top == "lessonbank", f"{name}:{line} imports {target}"


def test_only_the_cli_imports_click() -> None:
    for name in modules():
        if package_of(name) == "cli":
            continue
        tops = {target.split(".")[0] for target, _ in imports_of(name)}
        assert "click" not in tops, name


def test_only_bank_git_imports_gitpython() -> None:
    users = {name for name in modules() if any(t.split(".")[0] == "git" for t, _ in imports_of(name))}
    assert users <= {"lessonbank.bank.git"}


def test_every_package_says_what_it_owns_and_may_import() -> None:
    for init in sorted(PACKAGE.glob("*/__init__.py")):
        if init.parent.name in ("demo", "templates"):
            continue
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
        assert len(doc.split()) >= 20 and "import" in doc, init.parent.name


def _distance_one(a: str, b: str) -> bool:
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        return sum(x != y for x, y in zip(a, b, strict=True)) == 1
    short, long = sorted((a, b), key=len)
    return any(long[:i] + long[i + 1 :] == short for i in range(len(long)))


def test_no_two_modules_have_names_that_differ_by_one_letter() -> None:
    stems = sorted({p.stem for p in PACKAGE.rglob("*.py")} - {"__init__", "__main__"})
    close = [(a, b) for i, a in enumerate(stems) for b in stems[i + 1 :] if _distance_one(a, b)]
    assert close == []


def test_no_module_is_over_about_400_lines_without_a_stated_reason() -> None:
    # The rule is "~400 lines": past 420 (a 5% margin), a module carries a comment starting
    # "# Longer than 400 lines:" saying why.
    long = []
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if text.count("\n") > 420 and "# Longer than 400 lines:" not in text:
            long.append(f"{path.relative_to(PACKAGE)}: {text.count(chr(10))}")
    assert long == []


def test_no_test_or_benchmark_module_is_over_about_450_lines() -> None:
    # Tests and benchmarks are split by behaviour too; their rule is the house's ~450 lines.
    long = [
        f"{path.relative_to(ROOT)}: {count}"
        for top in ("tests", "benchmarks")
        for path in sorted((ROOT / top).rglob("*.py"))
        if (count := path.read_text(encoding="utf-8").count("\n")) > 450
    ]
    assert long == []


def test_the_hook_process_loads_no_heavy_module() -> None:
    import subprocess

    code = (
        "import sys; sys.path.insert(0, sys.argv[1]);"
        "import lessonbank.hooks.dispatch, lessonbank.hooks.pre_tool, lessonbank.hooks.prompt,"
        " lessonbank.hooks.post_tool, lessonbank.hooks.stop, lessonbank.hooks.session_start,"
        " lessonbank.hooks.guards, lessonbank.hooks.discover, lessonbank.hooks.agents.claude,"
        " lessonbank.hooks.agents.codex, lessonbank.hooks.agents.copilot, lessonbank.hooks.agents.cursor,"
        " lessonbank.hooks.agents.gemini, lessonbank.hooks.agents.qwen;"
        "print(' '.join(sorted(m for m in sys.modules if m.split('.')[0] in sys.argv[2:])))"
    )
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", code, str(PACKAGE.parent), *HEAVY],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ""


def test_the_hook_process_loads_none_of_the_index_packages_writers() -> None:
    """index/ holds the hooks' reader and the bank's writers and caches side by side: the hooks
    (and their fallback build) must still load none of the writers."""
    import subprocess

    writers = ("compiled_update", "compiled_patch", "derived", "derived_file", "derived_write", "lesson_cache", "listing")
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]);"
        "import lessonbank.hooks.dispatch, lessonbank.hooks.pre_tool, lessonbank.hooks.prompt,"
        " lessonbank.hooks.post_tool, lessonbank.hooks.stop, lessonbank.hooks.session_start,"
        " lessonbank.index.compiled_build;"
        "print(' '.join(sorted(m for m in sys.modules if m.startswith('lessonbank.index.'))))"
    )
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", code, str(PACKAGE.parent)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    loaded = {name.rpartition(".")[2] for name in done.stdout.split()}
    assert "compiled_read" in loaded and not loaded & set(writers)

ROOT = PACKAGE.parents[1]


def aliased_modules(source: str, name: str, is_package: bool, known: set[str]) -> list[str]:
    """`module as alias` for every module of the package the source imports under another name."""
    return [
        f"{line}: {module} as {alias.asname}"
        for module, line, alias in resolved_imports(source, name, is_package, known)
        if alias is not None and module in known and alias.asname not in (None, module.split(".")[-1])
    ]


TOPS = ("tooling", "tests", "benchmarks", "docs")


def outside_name(path: Path) -> str:
    """The module name of a test, benchmark or docs script as it is imported (`tests.groom.groom_support`;
    a benchmark by its bare name, as the benchmarks put their folder on sys.path)."""
    rel = path.relative_to(ROOT).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return parts[-1] if parts[0] == "benchmarks" else ".".join(parts)


def aliases_by_file() -> dict[str, list[str]]:
    """Each file of tooling/, tests/, benchmarks/ and docs/ that imports a module of ours (the
    package's, a test helper, a benchmark) under another name."""
    outside = [path for top in TOPS[1:] for path in sorted((ROOT / top).rglob("*.py"))]
    known = set(modules()) | {outside_name(path) for path in outside}
    found = {}
    for top in TOPS:
        for path in sorted((ROOT / top).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            inside = path.is_relative_to(PACKAGE)
            name = module_name(path) if inside else outside_name(path)
            hits = aliased_modules(path.read_text(encoding="utf-8"), name, path.name == "__init__.py", known)
            if hits:
                found[rel] = hits
    return found


def test_no_module_of_the_package_is_imported_under_another_name() -> None:
    # A module read under its own name everywhere is found by grep; an alias hides it.
    found = aliases_by_file()
    bad = [f"{rel}:{hit}" for rel in sorted(found) for hit in found[rel]]
    assert bad == []


def test_the_alias_walker_sees_both_forms_and_relative_ones() -> None:
    source = (
        "import lessonbank.state.statedir as state\n"
        "import lessonbank.state.statedir as statedir\n"
        "from lessonbank.bank import lesson as lesson_mod\n"
        "from . import render as generate\n"
        "from lessonbank.bank.lesson import parse as parse_lesson\n"
        "from lessonbank.bank import lesson\n"
    )
    known = {"lessonbank.state.statedir", "lessonbank.bank.lesson", "lessonbank.bank.render"}
    assert aliased_modules(source, "lessonbank.bank.store", False, known) == [
        "1: lessonbank.state.statedir as state",
        "3: lessonbank.bank.lesson as lesson_mod",
        "4: lessonbank.bank.render as generate",
    ]
