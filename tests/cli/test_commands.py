"""The bank's own commands through click's CliRunner, with exact output, on real git repos."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest
from click.testing import CliRunner

from lessonbank.cli import main
from tests.conftest import git, run

PYTEST_LESSON = [
    "--when", "pytest runs in a non-interactive shell and waits for input",
    "--do", "run pytest with stdin from /dev/null so it never waits on a TTY",
    "--promote-to", "rule:testing",
    "--title", "pytest hangs waiting for a TTY",
    "--tags", "tool:pytest,severity:hang",
    "--trigger-command", r"\bpytest\b",
]  # fmt: skip
SLUG = "pytest-hangs-waiting-for-a-tty"


def test_init_scaffolds_and_is_idempotent(repo: Path) -> None:
    first = CliRunner().invoke(main, ["init", str(repo)])
    assert first.exit_code == 0
    assert first.output == (
        "create    bank.toml\ncreate    lessons/.gitkeep\ncreate    rules/.gitkeep\n"
        f"create    .gitignore\ncreate    INDEX.md\ncreate    BANK.md\nbank ready at {repo}\n"
    )
    (repo / "bank.toml").write_text("# mine\n", encoding="utf-8")
    second = CliRunner().invoke(main, ["init", str(repo)])
    assert second.output == (
        "exists    bank.toml\nexists    lessons/.gitkeep\nexists    rules/.gitkeep\n"
        f"unchanged .gitignore\nunchanged INDEX.md\nunchanged BANK.md\nbank ready at {repo}\n"
    )
    assert (repo / "bank.toml").read_text() == "# mine\n"
    assert ".lessonbank/" in (repo / ".gitignore").read_text().splitlines()


def test_no_bank_says_what_to_do(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["list"])
    assert result.exit_code == 1
    assert result.output == "Error: No bank here: run `bank init`, or pass --root\n"


def test_capture_creates_then_bumps_once_per_session(bank: Path) -> None:
    created = run(bank, "capture", *PYTEST_LESSON, "--session", "s1")
    assert created.output == f"created lessons/{SLUG}.md\n"
    again = run(
        bank, "capture", "--when", "pytest waits for input in a non-interactive shell",
        "--do", "give pytest stdin from /dev/null so it never waits for a TTY",
        "--promote-to", "rule:testing", "--session", "s2",
    )  # fmt: skip
    assert again.output == f"repeat of {SLUG} (lessons/{SLUG}.md): bumped seen 1 -> 2\n"
    same = run(bank, "capture", *PYTEST_LESSON, "--session", "s2")
    assert same.output == (
        f"repeat of {SLUG} (lessons/{SLUG}.md), already seen in session s2: seen stays 2\n"
    )
    shown = json.loads(run(bank, "show", SLUG, "--json").output)
    assert (shown["seen"], shown["sessions"]) == (2, ["s1", "s2"])
    assert f"[{SLUG}](lessons/{SLUG}.md)" in (bank / "INDEX.md").read_text()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--promote-to", ""],
            "Error: refused: promote-to is missing; use one of: rule:<name> (rules/<name>.md), skill:<name> (an Agent Skills folder), doc:<path inside the repo>\n",
        ),
        (
            ["--promote-to", "doc:../../etc/x.md"],
            "Error: refused: promote-to 'doc:../../etc/x.md': the doc path must stay inside the repository (relative, no '..'); use one of: rule:<name> (rules/<name>.md), skill:<name> (an Agent Skills folder), doc:<path inside the repo>\n",
        ),
        (
            ["--do", "I prefer tabs over spaces"],
            "Error: refused: 'I prefer' reads as a personal preference, not a project lesson; keep it in your own memory file (~/.claude/CLAUDE.md, or CLAUDE.local.md for this project)\n",
        ),
        (
            ["--trigger-command", "pytest("],
            "Error: refused: triggers.commands[1] 'pytest(' does not compile: missing ), unterminated subpattern at position 6\n",
        ),
    ],
)
def test_refusals_print_one_line_exit_1_and_write_nothing(bank: Path, args: list[str], message: str) -> None:
    flags = list(PYTEST_LESSON)
    for i in range(0, len(args), 2):
        if args[i] in flags and args[i] != "--trigger-command":
            flags[flags.index(args[i]) + 1] = args[i + 1]
        else:
            flags += args[i : i + 2]
    before = sorted(p.name for p in (bank / "lessons").iterdir())
    result = run(bank, "capture", *flags)
    assert result.exit_code == 1
    assert result.output == message
    assert sorted(p.name for p in (bank / "lessons").iterdir()) == before


def test_destination_already_holding_the_lesson_is_refused(bank: Path) -> None:
    (bank / "rules").mkdir(exist_ok=True)
    (bank / "rules" / "testing.md").write_text(
        "# Testing\n\npytest runs in a non-interactive shell and waits for input: run pytest with\n"
        "stdin from /dev/null so it never waits on a TTY.\n",
        encoding="utf-8",
    )
    result = run(bank, "capture", *PYTEST_LESSON)
    assert result.exit_code == 1
    assert result.output == "Error: refused: this lesson is already written in rules/testing.md\n"


def test_secrets_are_redacted_and_reported(bank: Path) -> None:
    token = "ghp_" + "x1" * 18
    result = run(
        bank, "capture", "--when", "deploying the staging stack from a laptop",
        "--do", f"read the token from the vault; never paste {token} into scripts",
        "--promote-to", "doc:docs/deploy.md",
    )  # fmt: skip
    assert result.output == (
        "created lessons/deploying-the-staging-stack-from-a-laptop.md\n"
        "redacted before writing: 1 github token\n"
    )
    text = (bank / "lessons" / "deploying-the-staging-stack-from-a-laptop.md").read_text()
    assert token not in text and "[REDACTED:github token]" in text
    assert token not in (bank / "INDEX.md").read_text() + (bank / "BANK.md").read_text()


def test_dry_run_writes_nothing(bank: Path) -> None:
    result = run(bank, "capture", *PYTEST_LESSON, "--dry-run")
    assert result.output == f"would create lessons/{SLUG}.md\n"
    assert not (bank / "lessons" / f"{SLUG}.md").exists()


def test_json_and_blocks_on_stdin(bank: Path) -> None:
    data = {
        "when": "jest keeps the process alive after the tests finish",
        "do": "pass --forceExit, or close the open handles it reports with --detectOpenHandles",
        "promote-to": "rule:testing",
        "triggers": {"tools": ["Bash"], "commands": ["\\bjest\\b(?!.*--forceExit)"]},
        "tags": "tool:jest",
    }
    result = run(bank, "capture", "--json", "--session", "j1", input=json.dumps(data))
    assert result.output == "created lessons/jest-keeps-the-process-alive-after-the-tests-finish.md\n"
    blocks = (
        "Done. #lesson\ntool: Bash\ntrigger: git stash\nmistake: git stash left the new untracked files behind\n"
        "fix: use git stash -u to include untracked files\ntags: tool:git\npromote-to: rule:git\n#/lesson\n"
        "#lesson\ntool: Bash\ntrigger: make\nmistake: x\nfix: y\n#/lesson\n"
    )
    result = run(bank, "capture", "--blocks", "--session", "b1", input=blocks)
    assert result.exit_code == 1
    assert result.output == (
        "created lessons/git-stash-left-the-new-untracked-files-behind.md\n"
        "Error: refused: promote-to is missing; use one of: rule:<name> (rules/<name>.md), "
        "skill:<name> (an Agent Skills folder), doc:<path inside the repo>\n"
    )
    shown = json.loads(run(bank, "show", "git-stash-left-the-new-untracked-files-behind", "--json").output)
    assert shown["triggers"]["commands"] == ["git stash"] and shown["source"] == "learned"
    bad = run(bank, "capture", "--json", input="{not json")
    assert (bad.exit_code, bad.output) == (
        1,
        "Error: stdin is not JSON: Expecting property name enclosed in double quotes at line 1\n",
    )


def test_add_derives_tags_and_keywords(bank: Path) -> None:
    result = run(
        bank,
        "add",
        "pytest hangs in CI on a TTY prompt => run it with stdin from /dev/null",
        "--promote-to",
        "rule:testing",
    )
    assert result.output == "created lessons/pytest-hangs-in-ci-on-a-tty-prompt.md\n"
    shown = json.loads(run(bank, "show", "pytest-hangs-in-ci-on-a-tty-prompt", "--json").output)
    assert shown["tags"] == ["tool:pytest", "severity:hang"]
    assert shown["triggers"]["commands"] == ["\\bpytest\\b"]
    assert shown["triggers"]["keywords"][:2] == ["pytest", "hang"]
    usage = run(bank, "add", "no arrow here", "--promote-to", "rule:x")
    assert usage.exit_code == 2 and 'write the lesson as "<situation> => <what to do>"' in usage.output


def test_list_show_forget_and_stats(bank: Path) -> None:
    run(bank, "capture", *PYTEST_LESSON, "--session", "s1")
    listed = run(bank, "list")
    assert listed.output == (
        "slug                            type    seen  prio  status  source  title\n"
        f"{SLUG}  gotcha  1     5     active  typed   pytest hangs waiting for a TTY\n"
    )
    assert run(bank, "list", "--tag", "jest").output.endswith("(none)\n")
    stats = json.loads(run(bank, "stats", "--json").output)
    assert stats["lessons"] == 1 and stats["tags"] == {"severity:hang": 1, "tool:pytest": 1}
    git(bank, "add", "-A")
    git(bank, "commit", "-qm", "the lesson")
    assert run(bank, "forget", SLUG).output == f"deleted lessons/{SLUG}.md\n"
    missing = run(bank, "show", SLUG)
    assert (missing.exit_code, missing.output) == (
        1,
        f"Error: No lesson '{SLUG}': `bank list` shows the slugs and ids\n",
    )


def test_index_check_names_the_stale_file(bank: Path) -> None:
    run(bank, "capture", *PYTEST_LESSON)
    assert run(bank, "index", "--check").output == "up to date: INDEX.md, BANK.md\n"
    index_before = (bank / "INDEX.md").read_bytes()
    path = bank / "lessons" / f"{SLUG}.md"
    path.write_text(path.read_text().replace("priority: 5", "priority: 9"), encoding="utf-8")
    stale = run(bank, "index", "--check")
    assert (stale.exit_code, stale.output) == (
        1,
        "Error: stale: INDEX.md, BANK.md (run `bank index` and commit the result)\n",
    )
    assert (bank / "INDEX.md").read_bytes() == index_before
    regen = run(bank, "index")
    assert regen.output.splitlines()[:2] == ["update    INDEX.md", "update    BANK.md"]
    assert run(bank, "index").output.splitlines()[:2] == ["unchanged INDEX.md", "unchanged BANK.md"]
    assert run(bank, "index", "--check").exit_code == 0


def test_generated_files_are_byte_identical_on_rerun(bank: Path) -> None:
    run(bank, "capture", *PYTEST_LESSON)
    run(bank, "add", "jest never exits => pass --forceExit", "--promote-to", "rule:testing")
    first = {n: (bank / n).read_bytes() for n in ("INDEX.md", "BANK.md")}
    (bank / "INDEX.md").unlink()
    (bank / "BANK.md").unlink()
    run(bank, "index")
    assert {n: (bank / n).read_bytes() for n in ("INDEX.md", "BANK.md")} == first
    assert b"2026" not in first["INDEX.md"]  # no dates or timestamps in the lookup table


def test_check_reports_every_problem_with_its_line(bank: Path) -> None:
    run(bank, "capture", *PYTEST_LESSON)
    lessons = bank / "lessons"
    (lessons / "broken-yaml.md").write_text("---\nid: [oops\n---\n", encoding="utf-8")
    (lessons / "no-front.md").write_text("just text\n", encoding="utf-8")
    good = (lessons / f"{SLUG}.md").read_text()
    (lessons / "bad-values.md").write_text(
        good.replace(f"slug: {SLUG}", "slug: bad-values").replace("priority: 5", "priority: 42")
        .replace("promote-to: rule:testing", "promote-to: wiki:x").replace("\\bpytest\\b", "pytest("),
        encoding="utf-8",
    )  # fmt: skip
    result = run(bank, "check")
    assert result.exit_code == 1
    lines = result.output.splitlines()
    # The parser's own wording differs between libyaml and pure-Python PyYAML.
    assert lines[4].startswith("lessons/broken-yaml.md:3: frontmatter is not valid YAML: ")
    lines[4] = "lessons/broken-yaml.md:3: frontmatter is not valid YAML: <the parser's reason>"
    assert lines == [
        "lessons/bad-values.md:2: duplicate id "
        + repr(good.split("id: ")[1].split("\n")[0])
        + f" (also in {SLUG}.md)",
        "lessons/bad-values.md:8: promote-to 'wiki:x' has an unknown kind; use one of: rule:<name> (rules/<name>.md), skill:<name> (an Agent Skills folder), doc:<path inside the repo>",
        "lessons/bad-values.md:11: triggers.commands[0] 'pytest(' does not compile: missing ), unterminated subpattern at position 6",
        "lessons/bad-values.md:17: priority 42 must be 1-10",
        "lessons/broken-yaml.md:3: frontmatter is not valid YAML: <the parser's reason>",
        "lessons/no-front.md:1: no frontmatter: the file must start with a '---' line",
        f"lessons/{SLUG}.md:2: duplicate id "
        + repr(good.split("id: ")[1].split("\n")[0])
        + " (also in bad-values.md)",
        "Error: 7 problem(s) in 4 lesson file(s)",
    ]
    shown = CliRunner().invoke(main, ["--root", str(bank), "show", "no-front"])
    assert (shown.exit_code, shown.output) == (
        1,
        "Error: lessons/no-front.md:1: no frontmatter: the file must start with a '---' line "
        "(fix the file; `bank check` lists every problem)\n",
    )
    # The other commands skip malformed files with a warning instead of crashing.
    listed = CliRunner().invoke(main, ["--root", str(bank), "list"])
    assert listed.exit_code == 0
    assert "warning: skipped lessons/no-front.md:1: no frontmatter" in listed.output


def test_config_prints_effective_values(bank: Path) -> None:
    (bank / "bank.toml").write_text("[recall]\nmax_lessons = 2\n", encoding="utf-8")
    data = json.loads(run(bank, "config", "--json").output)
    assert data["recall.max_lessons"] == 2 and data["groom.min_seen"] == 2
    (bank / "bank.toml").write_text("[recall]\nmax_lesons = 2\n", encoding="utf-8")
    bad = CliRunner().invoke(main, ["--root", str(bank), "config"])
    assert bad.exit_code == 1
    assert "unknown key recall.max_lesons" in bad.output


def test_a_hand_edited_file_survives_a_bump_through_capture(bank: Path) -> None:
    from tests.bank.test_lesson import HAND_EDITED

    path = bank / "lessons" / "stash-drops-untracked.md"
    path.write_text(HAND_EDITED, encoding="utf-8")
    result = run(
        bank, "capture", "--when", "stashing work with git stash before switching branches",
        "--do", "use git stash -u so untracked files are stashed too", "--promote-to", "rule:git",
        "--session", "sess-b",
    )  # fmt: skip
    assert result.output == (
        "repeat of stash-drops-untracked (lessons/stash-drops-untracked.md): bumped seen 1 -> 2\n"
    )
    after = path.read_text(encoding="utf-8").splitlines()
    before = HAND_EDITED.splitlines()
    assert [ln for ln in after if ln not in before] == [
        "seen: 2",
        "  - sess-b",
        f"updated: '{date.today().isoformat()}'",
    ]
    assert [ln for ln in before if ln not in after] == ["seen: 1", "updated: 2026-10-01"]


def test_files_the_tool_writes_read_the_same_with_python_frontmatter(bank: Path) -> None:
    """Other tools (editors, static-site generators) read lessons with python-frontmatter."""
    import frontmatter

    run(bank, "capture", *PYTEST_LESSON, "--session", "s1")
    text = (bank / "lessons" / f"{SLUG}.md").read_text(encoding="utf-8")
    post = frontmatter.loads(text)
    assert post["slug"] == SLUG and post["triggers"]["commands"] == [r"\bpytest\b"]
    assert post["promote-to"] == "rule:testing" and post["seen"] == 1


def test_every_command_is_in_the_lazy_table() -> None:
    """Each module's commands are exactly those the lazy table names for it."""
    import importlib

    from lessonbank.cli import COMMANDS

    for module in sorted(set(COMMANDS.values())):
        importlib.import_module(f"lessonbank.cli.{module}")
    assert sorted(main.commands) == sorted(COMMANDS)
    for name, module in COMMANDS.items():
        assert main.commands[name].callback.__module__ == f"lessonbank.cli.{module}"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            {"when": "a b c", "do": "x y z", "promote-to": "rule:x", "priority": "high"},
            "priority must be a number from 1 to 10",
        ),
        (
            {"when": "a b c", "do": "x y z", "promote-to": "rule:x", "priority": 11},
            "priority must be a number from 1 to 10",
        ),
        (
            {"when": "a b c", "do": "x y z", "promote-to": "rule:x", "confidence": "0.5"},
            "confidence must be a number from 0 to 1",
        ),
        (
            {"when": "a b c", "do": "x y z", "promote-to": "rule:x", "tags": 5},
            "tags must be a list of strings",
        ),
        ({"when": ["x"], "do": "x y z", "promote-to": "rule:x"}, "when must be a string"),
        ({"when": "a b c", "promote-to": "rule:x"}, "missing field 'do'"),
        (
            {"when": "a b c", "do": "x y z", "foo": 1},
            "unknown field 'foo'; known: when, do, promote-to, title, type, session, source, body, tools, commands, paths, keywords, tags, priority, confidence, verify",
        ),
        (
            {"when": "a b c", "do": "x y z", "promote-to": "rule:x", "promote_to": "rule:y"},
            "give promote-to once (not also promote_to)",
        ),
        (
            {"when": "a b c", "do": "x y z", "triggers": ["Bash"]},
            "triggers must be an object of tools, commands, paths, keywords",
        ),
        (
            {"when": "a b c", "do": "x y z", "triggers": {"tool": "Bash"}},
            "unknown trigger 'tool'; known: tools, commands, paths, keywords",
        ),
        (
            {"when": "a b c", "do": "x y z", "type": "bug"},
            "type must be one of gotcha, pattern, convention, command",
        ),
    ],
)
def test_json_of_the_wrong_shape_gets_one_line(bank: Path, data: dict, message: str) -> None:
    result = CliRunner().invoke(main, ["--root", str(bank), "capture", "--json"], input=json.dumps(data))
    assert (result.exit_code, result.output) == (1, f"Error: JSON lesson: {message}\n")
    assert not list((bank / "lessons").glob("*.md"))


def test_json_accepts_a_lone_string_for_a_list(bank: Path) -> None:
    data = {"when": "deploying with helm to the staging cluster", "do": "pass --atomic so a failed upgrade rolls back",
            "promote-to": "rule:ops", "triggers": {"tools": "Bash", "commands": "\\bhelm\\s+upgrade\\b(?!.*--atomic)"},
            "priority": 7, "confidence": 1}  # fmt: skip
    result = run(bank, "capture", "--json", input=json.dumps(data))
    assert result.exit_code == 0, result.output
    shown = json.loads(run(bank, "show", "deploying-with-helm-to-the-staging-cluster", "--json").output)
    assert shown["triggers"]["tools"] == ["Bash"]
    assert shown["triggers"]["commands"] == ["\\bhelm\\s+upgrade\\b(?!.*--atomic)"]
    assert (shown["priority"], shown["confidence"]) == (7, 1.0)


HOSTILE_REASON = (
    "nested quantifier `(a+)+` can take exponential time: its inner `a+` can match the text of a "
    "whole pass; rewrite as `a+`"
)


def test_check_names_a_hostile_trigger_with_its_line_and_reason(bank: Path) -> None:
    run(bank, "capture", *PYTEST_LESSON)
    path = bank / "lessons" / f"{SLUG}.md"
    path.write_text(path.read_text().replace("\\bpytest\\b", "(a+)+$"), encoding="utf-8")
    result = run(bank, "check")
    assert result.exit_code == 1
    assert result.output == (
        f"lessons/{SLUG}.md:11: triggers.commands[0] '(a+)+$': {HOSTILE_REASON}\n"
        "Error: 1 problem(s) in 1 lesson file(s)\n"
    )
    run(bank, "index")
    assert "(a+)+$" not in (bank / ".lessonbank" / "index.bin").read_bytes().decode("latin-1")


def test_every_capture_route_refuses_a_hostile_trigger_in_one_line(bank: Path) -> None:
    refused = f"Error: refused: triggers.commands[0] '(a+)+$': {HOSTILE_REASON}\n"
    flags = [a if a != "\\bpytest\\b" else "(a+)+$" for a in PYTEST_LESSON]
    assert (run(bank, "capture", *flags).output) == refused
    assert run(bank, "capture", *flags, "--dry-run").output == refused
    data = {"when": "jest keeps running", "do": "pass --forceExit", "promote-to": "rule:testing",
            "triggers": {"commands": ["(a+)+$"]}}  # fmt: skip
    assert run(bank, "capture", "--json", input=json.dumps(data)).output == refused
    block = "#lesson\ntool: Bash\ntrigger: (a+)+$\nmistake: x hangs\nfix: y\npromote-to: rule:x\n#/lesson\n"
    assert run(bank, "capture", "--blocks", input=block).output == refused
    glob = run(bank, "capture", "--when", "w x", "--do", "d y", "--promote-to", "rule:x",
               "--trigger-path", "{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}")  # fmt: skip
    assert glob.output == (
        "Error: refused: triggers.paths[0] '{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}': "
        "more than 64 brace alternatives; list fewer\n"
    )
    assert not list((bank / "lessons").glob("*.md"))
