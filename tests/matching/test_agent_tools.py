"""The Copilot and Gemini tool tables: the views the scan and the installer take of them."""

from __future__ import annotations

from lessonbank.hooks.agents import copilot, gemini
from lessonbank.install import hookfiles
from lessonbank.matching import agent_tools
from lessonbank.scan import streams


def test_shell_and_edit_tools_are_read_off_the_tables() -> None:
    assert agent_tools.shell_tools() == {"bash", "run_shell_command"}
    assert agent_tools.edit_tools() == {
        "create": "path",
        "edit": "path",
        "str_replace_editor": "path",
        "write_file": "file_path",
        "replace": "file_path",
    }


def test_every_reader_uses_the_one_table() -> None:
    assert copilot.TOOLS is agent_tools.COPILOT
    assert gemini.TOOLS is agent_tools.GEMINI
    assert (agent_tools.shell_tools(), agent_tools.edit_tools()) == (streams.SHELL, streams.EDITS)
    assert (
        hookfiles.GEMINI_TOOLS
        == "run_shell_command|read_file|write_file|replace|glob|search_file_content|grep_search"
    )


def test_the_hook_files_the_installer_writes_are_the_ones_rules_look_for() -> None:
    assert (
        hookfiles.AGENTS["copilot"].path.as_posix()
        == agent_tools.COPILOT_HOOKS
        == ".github/hooks/lessonbank.json"
    )
    assert (
        hookfiles.AGENTS["gemini"].path.as_posix() == agent_tools.GEMINI_SETTINGS == ".gemini/settings.json"
    )
