"""The docs keep their promises: the generated reference is current, the README is a short landing page."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
# [text](target) and [text](target "title"); images too. Reference-style links are not used.
LINK = re.compile(r"\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")


def generator() -> ModuleType:
    """docs/gen_reference.py, loaded as a module (it is a script, not part of the package)."""
    spec = importlib.util.spec_from_file_location("gen_reference", ROOT / "docs" / "gen_reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def pages() -> dict[Path, str]:
    return generator().pages()


def test_the_generator_writes_the_commands_and_the_settings(pages: dict[Path, str]) -> None:
    assert sorted(str(path) for path in pages) == ["docs/reference/commands.md", "docs/reference/settings.md"]


@pytest.mark.parametrize("name", ["docs/reference/commands.md", "docs/reference/settings.md"])
def test_the_generated_reference_is_current(pages: dict[Path, str], name: str) -> None:
    on_disk = (ROOT / name).read_bytes()
    assert on_disk == pages[Path(name)].encode("utf-8"), f"{name} is stale: run python docs/gen_reference.py"


def test_the_reference_names_every_command_and_every_setting(pages: dict[Path, str]) -> None:
    from lessonbank import config

    commands = pages[Path("docs/reference/commands.md")]
    for name in ("bank capture", "bank install claude", "bank remote add", "bank trial analyze"):
        assert f"## `{name}`" in commands or f"### `{name}`" in commands
    settings = pages[Path("docs/reference/settings.md")]
    for section, keys in config.DEFAULTS.items():
        for key in keys:
            assert f"`{section}.{key}`" in settings


def test_the_readme_is_a_landing_page_of_at_most_300_lines() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 300, f"README.md has {len(lines)} lines; move the detail into docs/"


def test_every_relative_link_in_the_readme_points_to_a_file_that_exists() -> None:
    targets = LINK.findall(README.read_text(encoding="utf-8"))
    assert targets, "the README links into the docs"
    missing = []
    for target in targets:
        if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
            continue  # a URL (https:, mailto:) or an anchor in the README itself
        path = target.split("#", 1)[0]
        if not (ROOT / path).exists():
            missing.append(target)
    assert missing == []


def test_the_readme_starts_with_the_two_commands_ci_runs() -> None:
    head = README.read_text(encoding="utf-8").splitlines()[:6]
    assert head[2] == "```sh"
    assert head[4] == "python3 -m pip install -e '.[test]' && python3 -m pytest -q       # run the tests"
