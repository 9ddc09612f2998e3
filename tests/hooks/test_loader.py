"""The hook process's loader: current bytecode caches load directly, anything else goes to importlib."""

from __future__ import annotations

import importlib.util
import json
import py_compile
import subprocess
import sys
from pathlib import Path

import pytest

from lessonbank.hooks import loader
from tests.hook_support import HOOK, PROBE, bash, lesson, make_bank


def finder() -> loader.Finder:
    return loader.Finder(sys.implementation.cache_tag, importlib.util.MAGIC_NUMBER)


def cached(
    source: Path, text: str, mode: py_compile.PycInvalidationMode = py_compile.PycInvalidationMode.TIMESTAMP
) -> None:
    source.write_text(text, encoding="utf-8")
    py_compile.compile(
        str(source), cfile=importlib.util.cache_from_source(str(source)), invalidation_mode=mode, doraise=True
    )


def test_a_module_with_a_current_cache_loads_from_it_as_importlib_would(tmp_path: Path) -> None:
    cached(tmp_path / "mod.py", "VALUE = 41 + 1\n")
    (tmp_path / "pkg").mkdir()
    cached(tmp_path / "pkg" / "__init__.py", "NAME = __name__\n")
    spec = finder().find_spec("lessonbank.mod", [str(tmp_path)])
    assert spec is not None and spec.origin == str(tmp_path / "mod.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.VALUE == 42
    assert (module.__file__, module.__cached__) == (
        str(tmp_path / "mod.py"),
        importlib.util.cache_from_source(str(tmp_path / "mod.py")),
    )
    assert module.__package__ == "lessonbank"
    package = finder().find_spec("lessonbank.pkg", [str(tmp_path)])
    assert package is not None and package.submodule_search_locations == [str(tmp_path / "pkg")]
    module = importlib.util.module_from_spec(package)
    package.loader.exec_module(module)
    assert (module.NAME, module.__path__, module.__package__) == (
        "lessonbank.pkg",
        [str(tmp_path / "pkg")],
        "lessonbank.pkg",
    )


@pytest.mark.parametrize("case", ["no cache", "edited since", "hash-based", "corrupt", "not ours", "missing"])
def test_anything_but_a_current_timestamp_cache_is_left_to_importlib(tmp_path: Path, case: str) -> None:
    source = tmp_path / "mod.py"
    name = "lessonbank.mod"
    if case == "no cache":
        source.write_text("VALUE = 1\n", encoding="utf-8")
    elif case == "edited since":
        cached(source, "VALUE = 1\n")
        source.write_text("VALUE = 22\n", encoding="utf-8")  # another size: the header no longer fits
    elif case == "hash-based":
        cached(source, "VALUE = 1\n", py_compile.PycInvalidationMode.CHECKED_HASH)
    elif case == "corrupt":
        cached(source, "VALUE = 1\n")
        pyc = Path(importlib.util.cache_from_source(str(source)))
        pyc.write_bytes(pyc.read_bytes()[:20])
    elif case == "not ours":
        cached(source, "VALUE = 1\n")
        name = "other.mod"
    assert finder().find_spec(name, [str(tmp_path)]) is None


def test_the_hook_process_loads_the_package_through_it(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    make_bank(root, [lesson("pytest-lesson", commands=[r"\bpytest\b"])])
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", _LOADERS + PROBE, HOOK[-1]],
        input=json.dumps(bash(root, "pytest -q")).encode(),
        capture_output=True,
        timeout=60,
    )
    assert b"pytest-lesson" in done.stdout
    line = next(x for x in done.stderr.decode().splitlines() if x.startswith("LOADERS "))
    loaders = dict(item.split("=") for item in line.split()[1:])
    # The package and the loader itself come the standard way; every module after them through it.
    assert (
        loaders.pop("lessonbank")
        == loaders.pop("lessonbank.hooks")
        == loaders.pop("lessonbank.hooks.loader")
        == "SourceFileLoader"
    )
    assert set(loaders.values()) == {"Finder"} and "lessonbank.hooks.pre_tool" in loaders


# Runs before PROBE: at the process's end, "LOADERS name=loader class ..." of the package's modules.
_LOADERS = """
import posix, sys
report = posix._exit
def loaders(code):
    names = sorted(m for m in sys.modules if m.startswith("lessonbank"))
    sys.stderr.write("LOADERS " + " ".join(n + "=" + type(sys.modules[n].__spec__.loader).__name__ for n in names) + "\\n")
    report(code)
posix._exit = loaders
"""
