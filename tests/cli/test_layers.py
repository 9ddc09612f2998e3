"""The personal and team layers through the CLI: remote add/list/remove, pull, capture --to, list --all."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from lessonbank.cli import main
from lessonbank.index import layers
from tests.conftest import git, run
from tests.hook_support import bash, context, lesson, slugs
from tests.hook_support import run as hook
from tests.team_support import cli, clone_of, merge_branch, publish, team_remote

CARGO = lesson("cargo-backtrace", tools=["Bash"], commands=[r"\bcargo\s+test\b"], priority=6)
NPM = lesson("npm-ci-not-install", tools=["Bash"], commands=[r"\bnpm\s+install\b"])


@pytest.fixture
def team(tmp_path: Path) -> tuple[Path, Path]:
    """A team bank `acme` (bare repository, colleague's clone) holding CARGO, registered with `bank remote add`."""
    bare, work = team_remote(tmp_path, "acme", [CARGO])
    added = cli("remote", "add", "acme", str(bare))
    assert added.exit_code == 0, added.output
    return bare, work


def head(path: Path) -> str:
    return git(path, "rev-parse", "HEAD").strip()


def test_remote_add_clones_registers_and_lists(tmp_path: Path, isolated_home: Path) -> None:
    bare, _ = team_remote(tmp_path, "acme", [CARGO])
    data = isolated_home / ".local" / "share" / "lessonbank"
    added = cli("remote", "add", "acme", str(bare))
    assert added.exit_code == 0
    assert added.output == (
        f"cloned {bare} (main) into {data}/teams/acme\n"
        "team:acme is a layer of every bank's hooks now; `bank pull` updates it\n"
    )
    assert json.loads((data / "remotes.json").read_text()) == {"teams": {"acme": {"branch": "main", "url": str(bare)}}}
    assert (data / "teams/acme/lessons/cargo-backtrace.md").is_file()
    assert (data / "teams/acme/.lessonbank/index.bin").is_file()
    assert git(data / "teams/acme", "status", "--porcelain") == ""  # its .lessonbank/ is excluded
    listed = cli("remote", "list")
    sha = head(data / "teams/acme")[:7]
    assert listed.output.splitlines()[1].split() == ["acme", str(bare), "main", "main", "at", sha, f"{data}/teams/acme"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["remote", "add", "Acme", "x"], "'Acme' is not a team bank name"),
        (["remote", "add", "-x", "x"], "No such option"),
        (["remote", "remove", "nope"], "no team bank 'nope': `bank remote list` shows them"),
        (["pull", "nope"], "no team bank 'nope': `bank remote list` shows them"),
        (["capture", "--to", "team:nope", "--when", "w w", "--do", "d d"], "no team bank 'nope'"),
        (["capture", "--to", "teams", "--when", "w w", "--do", "d d"], "--to takes `personal` or `team:NAME`"),
    ],
)
def test_bad_names_say_what_to_do(args: list[str], message: str) -> None:
    result = cli(*args)
    assert result.exit_code in (1, 2)
    assert message in result.output


def test_a_repository_without_a_bank_is_refused_and_not_kept(tmp_path: Path) -> None:
    bare = tmp_path / "plain.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    work = tmp_path / "plain"
    git(tmp_path, "clone", "-q", str(bare), str(work))
    (work / "README.md").write_text("x\n")
    git(work, "add", "README.md")
    git(work, "commit", "-q", "-m", "x")
    git(work, "push", "-q", "origin", "HEAD:main")
    result = cli("remote", "add", "plain", str(bare))
    assert result.exit_code == 1
    assert "holds no bank (bank.toml at its top): run `bank init` in that repository" in result.output
    assert not clone_of("plain").exists()
    assert cli("remote", "list").output.endswith("(none)\n")


def test_remote_add_records_a_folder_on_disk_by_its_absolute_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bare, _ = team_remote(tmp_path, "acme", [CARGO])
    monkeypatch.chdir(tmp_path)
    assert cli("remote", "add", "acme", "acme.git").exit_code == 0
    assert layers.read_registry(str(layers.data_dir()))["acme"]["url"] == str(bare)


def test_remote_add_twice_is_refused(team: tuple[Path, Path]) -> None:
    again = cli("remote", "add", "acme", str(team[0]))
    assert again.exit_code == 1
    assert f"team bank 'acme' is already registered ({team[0]})" in again.output


def test_remote_remove_dry_run_then_remove(team: tuple[Path, Path]) -> None:
    path = clone_of("acme")
    dry = cli("remote", "remove", "acme", "--dry-run")
    assert dry.output == f"would remove team:acme and its clone {path}\n"
    assert path.is_dir()
    done = cli("remote", "remove", "acme")
    assert done.output == f"removed team:acme and its clone {path}\n"
    assert not path.exists()
    assert cli("remote", "list").output.endswith("(none)\n")


def test_remote_remove_refuses_a_clone_with_unpushed_work(team: tuple[Path, Path], bank: Path) -> None:
    captured = run(bank, "capture", "--to", "team:acme", "--when", "linting the shell scripts here",
                   "--do", "run shellcheck -x on every script before committing", "--promote-to", "rule:shell")  # fmt: skip
    assert captured.exit_code == 0, captured.output
    refused = cli("remote", "remove", "acme")
    assert refused.exit_code == 1
    assert "holds work that is not pushed: branches with commits not pushed (lessonbank/" in refused.output
    assert clone_of("acme").is_dir()
    assert cli("remote", "remove", "acme", "--force").exit_code == 0
    assert not clone_of("acme").exists()


def test_pull_fast_forwards_and_the_new_lesson_reaches_the_hook(team: tuple[Path, Path], bank: Path) -> None:
    _, work = team
    assert slugs(context(hook(bash(bank, "npm install", session_id="p1")))) == []
    publish(work, [NPM], "npm lesson")
    before = head(clone_of("acme"))
    pulled = cli("pull")
    assert pulled.exit_code == 0
    assert pulled.output == f"team:acme: updated {before[:7]}..{head(work)[:7]}\n"
    assert head(clone_of("acme")) == head(work)
    text = context(hook(bash(bank, "npm install", session_id="p2")))
    assert slugs(text) == ["npm-ci-not-install"]
    assert "- [npm-ci-not-install] (team:acme) npm ci not install." in text
    assert text.startswith("lessonbank: lessons learned in this project and in the banks it shares (each names its bank)")
    assert "  npm-ci-not-install (team:acme): 1 / 0 / " in run(bank, "ledger").output
    assert cli("pull").output == f"team:acme: up to date (main at {head(work)[:7]})\n"


def bank_pull(*names: str) -> object:
    return cli("pull", *names)


def test_pull_names_a_merged_lesson_holding_a_secret(team: tuple[Path, Path]) -> None:
    _, work = team
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    publish(work, [lesson("leaky", do=f"log in with {token}")], "merged without the gates")
    pulled = CliRunner().invoke(main, ["pull"])  # click 8.2+: stderr apart from stdout
    assert pulled.exit_code == 0
    assert pulled.stderr == (
        "team:acme: warning: lessons/leaky.md: 1 github token (the capture gates would have redacted it: "
        "fix it in the team repository)\n"
    )


def test_pull_reports_a_diverged_clone_and_leaves_it_as_it_is(team: tuple[Path, Path]) -> None:
    _, work = team
    clone = clone_of("acme")
    (clone / "notes.md").write_text("local\n")
    git(clone, "add", "notes.md")
    git(clone, "commit", "-q", "-m", "local commit")
    local = head(clone)
    publish(work, [NPM], "remote commit")
    pulled = cli("pull")
    assert pulled.exit_code == 1
    assert pulled.output == (
        f"team:acme: not updated: main in {clone} and origin/main have diverged (local commits origin does not "
        f"have); push them as a branch for a pull request, or drop them with `git -C {clone} reset --hard "
        "origin/main`, then `bank pull acme`\n"
        "Error: 1 team bank(s) not updated: acme\n"
    )
    assert head(clone) == local
    assert (clone / "notes.md").read_text() == "local\n"
    assert not (clone / "lessons/npm-ci-not-install.md").exists()


def test_pull_reports_a_dirty_clone_and_leaves_it_as_it_is(team: tuple[Path, Path]) -> None:
    _, work = team
    clone = clone_of("acme")
    lesson_file = clone / "lessons/cargo-backtrace.md"
    edited = lesson_file.read_text() + "\nmy local note\n"
    lesson_file.write_text(edited)
    before = head(clone)
    publish(work, [NPM], "remote commit")
    pulled = cli("pull", "acme")
    assert pulled.exit_code == 1
    assert pulled.output.splitlines()[0] == (
        f"team:acme: not updated: {clone} has uncommitted changes (lessons/cargo-backtrace.md); "
        "commit or discard them there, then `bank pull acme`"
    )
    assert head(clone) == before
    assert lesson_file.read_text() == edited


def test_pull_reports_a_clone_left_on_another_branch(team: tuple[Path, Path]) -> None:
    clone = clone_of("acme")
    git(clone, "switch", "-q", "-c", "mine")
    pulled = cli("pull")
    assert pulled.exit_code == 1
    assert f"team:acme: not updated: {clone} is on mine, not main; `git -C {clone} switch main`" in pulled.output


def test_pull_without_team_banks_says_how_to_add_one() -> None:
    assert cli("pull").output == "no team banks: `bank remote add NAME URL` follows one\n"


def test_capture_to_a_team_commits_on_a_branch_and_leaves_main_alone(team: tuple[Path, Path], bank: Path) -> None:
    clone = clone_of("acme")
    main_before = head(clone)
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    result = run(bank, "capture", "--to", "team:acme", "--when", "linting the shell scripts here",
                 "--do", f"run shellcheck -x on every script (token {token} in CI)", "--promote-to", "rule:shell")  # fmt: skip
    assert result.exit_code == 0, result.output
    branch = "lessonbank/linting-the-shell-scripts-here"
    assert result.output.splitlines() == [
        "team:acme: created lessons/linting-the-shell-scripts-here.md",
        "team:acme: redacted before writing: 1 github token",
        f"committed on branch {branch} of {clone}",
        f"propose it: git -C {clone} push origin {branch}  (then open a pull request there)",
    ]
    assert head(clone) == main_before
    assert git(clone, "status", "--porcelain") == ""
    assert not (clone / "lessons/linting-the-shell-scripts-here.md").exists()
    shown = git(clone, "show", f"{branch}:lessons/linting-the-shell-scripts-here.md")
    assert token not in shown and "[REDACTED" in shown
    assert git(clone, "show", "--name-only", "--format=", branch).split() == [
        "BANK.md", "INDEX.md", "lessons/linting-the-shell-scripts-here.md",
    ]  # fmt: skip
    # Nothing reached the project's own bank.
    assert list((bank / "lessons").glob("*.md")) == []


def test_capture_to_a_team_refuses_a_duplicate_of_its_lessons_by_bumping(team: tuple[Path, Path], bank: Path) -> None:
    result = run(bank, "capture", "--to", "team:acme", "--when", CARGO.when, "--do", CARGO.do, "--session", "s9",
                 "--promote-to", "rule:testing")  # fmt: skip
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[0] == (
        "team:acme: repeat of cargo-backtrace (lessons/cargo-backtrace.md): bumped seen 1 -> 2"
    )
    assert result.output.splitlines()[1].startswith("committed on branch lessonbank/cargo-backtrace of ")


def test_capture_to_personal_sets_the_bank_up_and_the_hook_reads_it(bank: Path, isolated_home: Path) -> None:
    result = run(bank, "capture", "--to", "personal", "--when", "cargo test runs in any of my projects",
                 "--do", "export RUST_BACKTRACE=1 first", "--trigger-tool", "Bash",
                 "--trigger-command", r"\bcargo\s+test\b", "--promote-to", "rule:rust")  # fmt: skip
    assert result.exit_code == 0, result.output
    assert result.output == "personal: created lessons/cargo-test-runs-in-any-of-my-projects.md\n"
    personal = isolated_home / ".local/share/lessonbank/personal"
    assert (personal / "bank.toml").is_file()
    text = context(hook(bash(bank, "cargo test -q", session_id="s1")))
    assert slugs(text) == ["cargo-test-runs-in-any-of-my-projects"]
    rows = [json.loads(line) for line in (bank / ".lessonbank/ledger.jsonl").read_text().splitlines()]
    assert [(r["lesson"], r["layer"]) for r in rows] == [("cargo-test-runs-in-any-of-my-projects", "personal")]


def test_capture_to_personal_dry_run_before_it_exists_says_how_to_make_it(bank: Path) -> None:
    result = run(bank, "capture", "--to", "personal", "--when", "w w w", "--do", "d d d", "--dry-run")
    assert result.exit_code == 1
    assert "there is no personal bank yet" in result.output
    assert "`bank init --personal` sets it up" in result.output


def test_init_personal(isolated_home: Path) -> None:
    result = cli("init", "--personal")
    personal = isolated_home / ".local/share/lessonbank/personal"
    assert result.exit_code == 0
    assert result.output.splitlines()[-1] == f"bank ready at {personal}"
    assert cli("init", "--personal", "elsewhere").exit_code == 2


def test_list_all_shows_every_layer(team: tuple[Path, Path], bank: Path) -> None:
    assert run(bank, "capture", "--when", "running the docs build", "--do", "use make docs, not sphinx-build",
               "--promote-to", "rule:docs").exit_code == 0  # fmt: skip
    assert run(bank, "capture", "--to", "personal", "--when", "my editor leaves swap files",
               "--do", "ignore *.swp globally", "--promote-to", "rule:editor").exit_code == 0  # fmt: skip
    listed = run(bank, "list", "--all")
    rows = [line.split()[:2] for line in listed.output.splitlines()[1:]]
    assert rows == [
        ["project", "running-the-docs-build"],
        ["personal", "my-editor-leaves-swap-files"],
        ["team:acme", "cargo-backtrace"],
    ]
    as_json = json.loads(run(bank, "list", "--all", "--json").output)
    assert [(x["layer"], x["slug"]) for x in as_json] == [tuple(r) for r in rows]
    tagged = run(bank, "list", "--all", "--source", "scanned").output
    assert tagged.splitlines()[1:] == ["(none)"]


def test_a_project_lesson_wins_over_a_team_lesson_with_the_same_slug_or_meaning(tmp_path: Path, bank: Path) -> None:
    same_words = lesson("cargo-backtrace-team", title="cargo backtrace", when=CARGO.when, do=CARGO.do,
                        tools=["Bash"], commands=[r"\bcargo\b"], priority=9)  # fmt: skip
    bare, _ = team_remote(tmp_path, "acme", [CARGO, same_words])
    assert cli("remote", "add", "acme", str(bare)).exit_code == 0
    (bank / "lessons").mkdir(exist_ok=True)
    from lessonbank.bank.lesson import render

    mine = lesson("cargo-backtrace", tools=["Bash"], commands=[r"\bcargo\b"], priority=1, do="remember cargo-backtrace")
    (bank / "lessons/cargo-backtrace.md").write_text(render(mine))
    assert run(bank, "index").exit_code == 0
    text = context(hook(bash(bank, "cargo test", session_id="w1")))
    # The team's priority-9 twin came first, but the project's own lesson takes its place.
    assert slugs(text) == ["cargo-backtrace"]
    assert "(team:acme)" not in text
    rows = [json.loads(line) for line in (bank / ".lessonbank/ledger.jsonl").read_text().splitlines()]
    assert [(r["lesson"], r["layer"]) for r in rows] == [("cargo-backtrace", "project")]


def test_a_team_lesson_then_a_pushed_capture_merged_reaches_the_hook(team: tuple[Path, Path], bank: Path) -> None:
    _, work = team
    captured = run(bank, "capture", "--to", "team:acme", "--when", "running npm install in our repos",
                   "--do", "use npm ci so the lockfile is respected", "--trigger-tool", "Bash",
                   "--trigger-command", r"\bnpm\s+install\b", "--promote-to", "rule:node")  # fmt: skip
    branch = captured.output.splitlines()[1].split()[3]
    git(clone_of("acme"), "push", "-q", "origin", branch)
    assert slugs(context(hook(bash(bank, "npm install", session_id="m1")))) == []
    merge_branch(work, branch)
    assert cli("pull").exit_code == 0
    assert slugs(context(hook(bash(bank, "npm install", session_id="m2")))) == ["running-npm-install-in-our-repos"]


def test_the_layers_of_the_data_folder(team: tuple[Path, Path], isolated_home: Path) -> None:
    data = str(isolated_home / ".local/share/lessonbank")
    assert layers.other_layers(data) == [("team:acme", f"{data}/teams/acme")]
