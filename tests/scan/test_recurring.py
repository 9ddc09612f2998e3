"""Recurring failures: the same error in two sessions is a candidate, its lesson read from the history.

Each kind the agents repeat has its two sessions here, scanned into a bank made with `bank init`
(`run_scan`, as `bank scan` runs it): the lesson says what failed, what worked instead, and its
trigger fires on the flawed command and stays quiet on the fixed one.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from lessonbank.bank import scaffold
from lessonbank.bank.store import Bank
from lessonbank.scan import calibrate, failures, recurring
from lessonbank.scan.candidates import Store, run_scan
from lessonbank.scan.events import Candidate
from tests.scan.test_learning import Claude, Codex

Session = Callable[[Claude], Claude]


def scanned(tmp_path: Path, session: Session, days: tuple[str, ...] = ("2026-01-01", "2026-01-02")) -> Store:
    """The store after scanning `session` written once per day, each a session of its own."""
    folder = tmp_path / "t"
    folder.mkdir()
    for n, day in enumerate(days, 1):
        session(Claude(f"s{n}", day=day).user("go on")).write(folder, f"s{n}.jsonl")
    root = tmp_path / "bank"
    root.mkdir()
    scaffold.init(root)
    store = Store(Bank.find(root=root)).load()
    run_scan(Bank.find(root=root), sorted(folder.glob("*.jsonl")), store, accept_above=1.01)
    return store


def only(store: Store) -> Candidate:
    [cand] = store.pending()
    return cand


def test_an_unknown_flag_seen_in_two_sessions_is_a_lesson_with_the_flag_that_worked(tmp_path: Path) -> None:
    def session(t: Claude) -> Claude:
        t.bash("gh pr view 12 --jsn title", "unknown flag: --jsn\n\nUsage:  gh pr view [<number>] [flags]", 1)
        return t.bash("gh pr view 12 --json title", '{"title": "x"}')

    cand = only(scanned(tmp_path, session))
    assert (cand.kind, cand.title) == ("recurring", "`gh` has no flag `--jsn`")
    assert cand.when == "running `gh` with `--jsn`: this version of `gh` has no such flag (`unknown flag: --jsn`)"
    assert cand.do == "Do not pass `--jsn` to `gh`: use `--json`, as in `gh pr view 12 --json title`."
    assert calibrate.fires(cand.commands, "cd /r && gh pr view 3 --jsn body")
    assert not calibrate.fires(cand.commands, "gh pr view 3 --json body")
    assert {"fix_confirmed", "written", "trigger_checked"} <= set(cand.signals)
    assert cand.confidence == 0.8  # two sessions, the way round seen, the trigger checked: accepted at 0.8


def test_one_session_is_watched_not_proposed(tmp_path: Path) -> None:
    def session(t: Claude) -> Claude:
        return t.bash("gh pr view 12 --jsn title", "unknown flag: --jsn", 1).bash("gh pr view 12 --json title", "{}")

    store = scanned(tmp_path, session, days=("2026-01-01",))
    assert store.pending() == []
    assert [c.status for c in store.candidates.values()] == ["watching"]


@pytest.mark.parametrize(
    ("failing", "error", "fixed", "title", "do", "fires", "quiet"),
    [
        pytest.param(
            "./bin/shop deploy-all", 'Error: unknown command "deploy-all" for "shop"\nRun \'shop --help\' for usage.',
            "./bin/shop deploy --all", "`shop` has no subcommand or argument `deploy-all`",
            "Do not pass `deploy-all` to `shop`: use `deploy`, as in `./bin/shop deploy --all`.",
            ["./bin/shop deploy-all --dry-run"], ["./bin/shop deploy --all"], id="unknown-subcommand-of-own-cli",
        ),
        pytest.param(
            "npm run lint", 'npm error Missing script: "lint"\nnpm error\nnpm error To see a list of scripts, run:',
            "npm run eslint", "There is no `lint` script for `npm` here",
            "Do not run `npm lint`: use `eslint` instead (as in `npm run eslint`).",
            ["npm run lint -- --fix", "npm lint"], ["npm run eslint", "npm run lint:css"], id="missing-package-script",
        ),
    ],
)  # fmt: skip
def test_a_name_the_tool_does_not_have(
    tmp_path: Path, failing: str, error: str, fixed: str, title: str, do: str, fires: list[str], quiet: list[str]
) -> None:
    def session(t: Claude) -> Claude:
        return t.bash(failing, error, 1).bash(fixed, "ok")

    cand = only(scanned(tmp_path, session))
    assert (cand.title, cand.do) == (title, do)
    assert all(calibrate.fires(cand.commands, c) for c in fires)
    assert not any(calibrate.fires(cand.commands, c) for c in quiet)


def test_local_state_in_the_way_and_the_command_that_cleared_it(tmp_path: Path) -> None:
    def session(t: Claude) -> Claude:
        t.bash('git commit -m "wip"', "fatal: Unable to create '/r/.git/index.lock': File exists.\n\n"
               "Another git process seems to be running in this repository", 128)  # fmt: skip
        return t.bash("rm -f .git/index.lock", "").bash('git commit -m "wip"', "[main 1a2b] wip")

    cand = only(scanned(tmp_path, session))
    assert cand.do == "Run `rm -f .git/index.lock`, then retry `git commit`."
    assert cand.when.startswith("running `git commit` when local state is in the way (`fatal: Unable to create")


def test_a_way_round_that_switches_a_check_off_is_never_the_lesson(tmp_path: Path) -> None:
    def session(t: Claude) -> Claude:
        t.bash('git commit -m "x"', "error: gpg failed to sign the data:\nfatal: failed to write commit object", 128)
        return t.bash('git commit --no-gpg-sign -m "x"', "[main 1a2b] x")

    cand = only(scanned(tmp_path, session))
    assert "--no-gpg-sign" not in cand.do and cand.signals.get("needs_words") == 1
    assert cand.confidence <= 0.3  # waits for a person (or `bank review --distill`), never accepted unattended


def test_sudo_without_a_terminal_in_two_sessions_is_handed_to_the_user(tmp_path: Path) -> None:
    def session(t: Claude) -> Claude:
        return t.bash("sudo apt install -y iw", "sudo: a terminal is required to read the password", 1)

    cand = only(scanned(tmp_path, session))
    assert cand.title == "Hand sudo commands to the user instead of running them"
    assert cand.confidence >= 0.8


def test_a_tool_that_is_not_installed_then_installed(tmp_path: Path) -> None:
    def session(t: Claude) -> Claude:
        t.bash("pipx install black", "/bin/bash: line 1: pipx: command not found", 127)
        return t.bash("pip install pipx", "Successfully installed pipx").bash("pipx install black", "installed black")

    cand = only(scanned(tmp_path, session))
    # Installing pipx with pip is no reason to use pip instead of pipx.
    assert (cand.title, cand.do) == (
        "pipx is not installed here",
        "Install it first with `pip install pipx` (a new environment does not have it), then run `pipx`.",
    )


def test_a_tool_replaced_by_its_successor_subcommand(tmp_path: Path) -> None:
    def session(t: Claude) -> Claude:
        t.bash("docker-compose up -d", "/bin/bash: line 1: docker-compose: command not found", 127)
        return t.bash("docker compose up -d", "Container web Started")

    cand = only(scanned(tmp_path, session))
    assert cand.title == "Use `docker compose`, not `docker-compose`"
    assert calibrate.fires(cand.commands, "docker-compose logs") and not calibrate.fires(cand.commands, "docker compose logs")


def test_a_path_that_is_not_where_the_agent_assumes(tmp_path: Path) -> None:
    def session(t: Claude) -> Claude:
        t.bash("./run_benchmarks.sh --quick", "/bin/bash: line 1: ./run_benchmarks.sh: No such file or directory", 127)
        return t.bash("./bench/run_benchmarks.sh --quick", "done")

    cand = only(scanned(tmp_path, session))
    assert cand.title == "`run_benchmarks.sh` is at `./bench/run_benchmarks.sh`, not `./run_benchmarks.sh`"
    assert calibrate.fires(cand.commands, "./run_benchmarks.sh")
    assert not calibrate.fires(cand.commands, "./bench/run_benchmarks.sh --quick")


def test_a_check_failing_the_same_way_in_two_sessions_waits_for_words(tmp_path: Path) -> None:
    def session(t: Claude) -> Claude:
        return t.bash("pytest -q", "FAILED tests/test_cart.py::test_total - assert 3 == 4\n1 failed", 1)

    cand = only(scanned(tmp_path, session))
    assert cand.signals.get("needs_words") == 1 and "write one, or run `bank review --distill`" in cand.do
    assert len(cand.evidence) == 2  # the evidence is kept for the person or the model that writes it


def test_a_failure_fixed_by_a_narrower_run_of_the_same_check_is_a_fix(tmp_path: Path) -> None:
    def session(t: Claude) -> Claude:
        t.bash("pytest -q", "FAILED tests/test_cart.py::test_total - assert 3 == 4\n1 failed", 1)
        t.say("The root cause is that `total()` adds the tax twice.").edit("/p/cart.py")
        return t.bash("pytest -q tests/test_cart.py", "5 passed").say("Removed the second `add_tax()` call.")

    cand = only(scanned(tmp_path, session, days=("2026-01-01",)))
    assert cand.kind == "fix" and cand.signals.get("narrower") == 1 and cand.signals.get("fix_confirmed") == 1


@pytest.mark.parametrize("code", ["Exit code: 2", "Process exited with code 2"])
def test_a_codex_exit_status_with_or_without_a_colon_is_read(tmp_path: Path, code: str) -> None:
    t = Codex()
    t.lines.append(t._rec("response_item", {"type": "function_call", "name": "shell", "call_id": "c1",
                                            "arguments": '{"command": ["bash", "-lc", "npm run lint"]}'}))  # fmt: skip
    t.lines.append(t._rec("response_item", {"type": "function_call_output", "call_id": "c1",
                                            "output": f"{code}\nWall time: 0.4 seconds\nOutput:\nnpm error Missing script: \"lint\""}))  # fmt: skip
    from lessonbank.scan import history

    [session] = history.read_sessions([t.write(tmp_path)])
    assert [(c.command, c.status) for c in session.calls] == [("npm run lint", "fail")]


def test_local_state_with_the_tools_own_hint(tmp_path: Path) -> None:
    def session(t: Claude) -> Claude:
        return t.bash("bd ready", "Error: Database out of sync with JSONL. Run 'bd sync --import-only' to fix.", 1)

    cand = only(scanned(tmp_path, session))
    assert cand.do == "Do what `bd` says: `bd sync --import-only`, then retry `bd ready`."
    assert cand.signals.get("fix_confirmed") == 1 and calibrate.fires(cand.commands, "bd ready --json")


@pytest.mark.parametrize(
    ("failing", "output", "later", "ended"),
    [
        # a later call of the same program that does not name the missing script; the failed one between is no fix action
        ("pnpm lint", " ERR_PNPM_NO_SCRIPT  Missing script: lint",
         [("ls", "ok"), ("pnpm run lint:fix", "fail"), ("pnpm eslint .", "ok")], [("missing-script", "pnpm eslint .", [])]),
        # the tool runs once it is installed: the install is what was run before it
        ("blocky --config x.yml", "bash: blocky: command not found",
         [("sudo apt-get install -y blocky", "ok"), ("which blocky", "ok"), ("blocky --config x.yml", "ok")],
         [("not-found", "blocky --config x.yml", ["sudo apt-get install -y blocky"])]),
        # no way round in the 8 calls after it: it ends with none
        ("git commit -m x", "fatal: Unable to create '/r/.git/index.lock': File exists.", [("ls", "ok")] * 9,
         [("local-state", "", [])]),
        # the same check passing later: that episode is the fixed check's, not a recurring failure's
        ("pytest -q", "FAILED tests/test_x.py::test_a - assert 1 == 2", [("pytest -q", "ok")], []),
    ],
)  # fmt: skip
def test_a_watched_failure_ends_at_its_way_round_or_after_eight_calls(
    failing: str, output: str, later: list[tuple[str, str]], ended: list[tuple[str, str, list[str]]]
) -> None:
    watch = recurring.Watch()
    assert watch.feed(failing, "fail", output, "t0") == []
    items = [item for command, status in later for item in watch.feed(command, status, "", "t1")] + watch.flush()
    assert [(item["kind"], item["passing"], item["commands"]) for item in items] == ended
    assert all(item["failing"] == failing and item["time"] == "t0" for item in items)


@pytest.mark.parametrize(
    ("output", "kind"),
    [
        ("error: unknown option --foo", "unknown-command"),
        ("error: İnvalid option --foo", "unknown-command"),  # under re.IGNORECASE `i` matches `İ` and `ı`
        ("npm ERR! Mıssing script: test", "missing-script"),
        ("cat: x: No such file or dİrectory", "path"),
        ("fatal: could not read Username: terminal prompts disabled", "other"),
    ],
)
def test_a_failed_output_is_classified_by_the_first_pattern_it_matches_in_any_letter_case(output: str, kind: str) -> None:
    found = failures.classify("tool --foo", output)
    assert found is not None and found.kind == kind
