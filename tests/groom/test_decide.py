"""Groom's judgement, pure: eligibility, verify checks, trigger checks, anchors, one-line reasons."""

from __future__ import annotations

import re
from typing import Any

import pytest

from lessonbank.bank.lesson import Lesson
from lessonbank.groom.decide import (
    DELETE,
    PROMOTE,
    REVIEW,
    SKIP,
    WAIT,
    CommandResult,
    anchors,
    decide,
    lesson_tools,
    tool_skill_offers,
)
from lessonbank.groom.snapshot import Snapshot

FILES = {
    "src/db.py": "import os\n\ndef connect(timeout=None):\n    return os.environ['DB']\n",
    "src/legacy.py": "def old_connect():\n    return utcnow()\n",
    "tests/test_db.py": "import pytest\n\ndef test_connect():\n    assert True\n",
    "docs/guide.md": "# Guide\n\nCall connect(timeout=5).\n",
    "package.json": '{"name": "x", "devDependencies": {"jest": "29"}}\n',
}
COMMIT = "a" * 40


def make(slug: str = "l", **kw: Any) -> Lesson:
    fields: dict[str, Any] = {
        "id": "01J" + slug.upper().replace("-", "")[:23].ljust(23, "0"),
        "slug": slug,
        "title": slug.replace("-", " ").capitalize(),
        "when": "calling connect",
        "do": "pass a timeout",
        "promote_to": "rule:testing",
        "seen": 2,
        "verified": {"by": "tester"},  # a person vouches: with nothing to check it is promoted, not held
    }
    fields.update(kw)
    return Lesson(**fields)


def one(lesson: Lesson, files: dict[str, str] | None = None, **kw: Any) -> tuple[str, str]:
    snap = Snapshot.from_files(FILES if files is None else files, changed=kw.pop("changed", None))
    (decision,) = decide([lesson], snap, **kw)
    return decision.outcome, decision.reason


@pytest.mark.parametrize(
    ("lesson", "expected"),
    [
        (make(seen=1), (WAIT, "seen in 1 session; groom waits for 2")),
        (make(seen=0), (WAIT, "seen in 0 sessions; groom waits for 2")),
        (make(status="disabled", seen=5), (SKIP, "status is disabled: left alone")),
        (
            make(seen=2),
            (PROMOTE, "seen in 2 sessions; nothing to check; vouched for by tester"),
        ),
        (
            make(seen=3, status="needs-review", verify={"paths": ["src/db.py"]}),
            (PROMOTE, "seen in 3 sessions; re-verified: verify.paths 1 of 1 tracked"),
        ),
    ],
)
def test_eligibility_governor(lesson: Lesson, expected: tuple[str, str]) -> None:
    assert one(lesson) == expected


def test_min_seen_is_configurable() -> None:
    assert one(make(seen=2), min_seen=3) == (WAIT, "seen in 2 sessions; groom waits for 3")
    assert one(make(seen=1), min_seen=1)[0] == PROMOTE


@pytest.mark.parametrize(
    ("verify", "expected"),
    [
        ({"paths": ["src/db.py", "tests"]}, (PROMOTE, "seen in 2 sessions; re-verified: verify.paths 2 of 2 tracked")),
        ({"paths": ["src/gone.py"]}, (DELETE, "verify.paths src/gone.py is no longer tracked")),
        ({"paths": "src"}, (PROMOTE, "seen in 2 sessions; re-verified: verify.paths 1 of 1 tracked")),
        ({"match": [r"def connect\("]}, (PROMOTE, r"seen in 2 sessions; re-verified: verify.match `def connect\(` found in src/db.py")),
        (
            {"match": [r"def connect\(", r"^import pytest$"]},
            (PROMOTE, r"seen in 2 sessions; re-verified: verify.match `def connect\(` found in src/db.py; "
             "verify.match `^import pytest$` found in tests/test_db.py"),
        ),
        (
            {"match": [r"def connect_all\("]},
            (DELETE, r"verify.match `def connect_all\(` no longer matches any tracked file"),
        ),
        (
            {"match": [r"connect\(timeout=5\)"], "glob": "src/**/*.py"},
            (DELETE, r"verify.match `connect\(timeout=5\)` no longer matches any tracked file under src/**/*.py"),
        ),
        ({"match": [r"connect\(timeout=5\)"], "glob": ["src/**", "docs/*.md"]}, (PROMOTE, None)),
        ({"match": [r"(?i)IMPORT PYTEST"]}, (PROMOTE, None)),
        ({"absent": [r"utcnow\(\)"]}, (PROMOTE, r"seen in 2 sessions; re-verified: verify.absent `utcnow\(\)` still found in src/legacy.py (the pitfall remains)")),
        (
            {"absent": [r"datetime\.utcnow", r"time\.clock\("]},
            (DELETE, r"the pitfall is gone: verify.absent `datetime\.utcnow`, `time\.clock\(` matches no tracked file"),
        ),
        ({"absent": [r"datetime\.utcnow", r"utcnow"]}, (PROMOTE, None)),
        ({"match": ["def ("]}, (REVIEW, None)),
        (
            {"paths": ["src/gone.py"], "match": [r"def connect_all\("]},
            (DELETE, "verify.paths src/gone.py is no longer tracked (and 1 more)"),
        ),
    ],
)
def test_verify_checks(verify: dict[str, Any], expected: tuple[str, str | None]) -> None:
    outcome, reason = one(make(verify=verify))
    assert outcome == expected[0]
    if expected[1] is not None:
        assert reason == expected[1]


def test_a_bad_regex_names_itself() -> None:
    outcome, reason = one(make(verify={"match": ["def ("]}))
    assert (outcome, reason.split(":")[0]) == (REVIEW, "verify.match `def (` does not compile")


def test_a_match_never_spans_two_files() -> None:
    # src/db.py ends with "['DB']\n" and src/legacy.py starts with "def old_connect"
    files = {"a.py": "tail_of_a", "b.py": "head_of_b"}
    assert one(make(verify={"match": [r"tail_of_a\s*\W*\s*head_of_b"]}), files)[0] == DELETE
    assert one(make(verify={"match": [r"(?s)a.*head"]}), files)[0] == DELETE
    assert one(make(verify={"match": [r"^head_of_b$"]}), files)[0] == PROMOTE


@pytest.mark.parametrize(
    ("lesson", "expected"),
    [
        (make(paths=["src/**/*.py"]), PROMOTE),
        (make(paths=["*.py"]), PROMOTE),
        (make(paths=["app/**/*.rb"]), REVIEW),
        (make(commands=[r"\bpytest\b"]), PROMOTE),
        (make(tags=["tool:pytest"]), PROMOTE),
        (make(tags=["tool:cargo"]), REVIEW),
        (make(commands=[r"cargo\s+test"]), REVIEW),
        (make(commands=[r"(?:yarn|npm)\s+test"]), PROMOTE),
        (make(commands=[r"npx\s+jest(?!.*--forceExit)"]), PROMOTE),
        (make(commands=[r"git\s+stash(?!.*-u)"], tags=["tool:git"]), PROMOTE),
    ],
)
def test_trigger_checks(lesson: Lesson, expected: str) -> None:
    assert one(lesson)[0] == expected


def test_trigger_reasons() -> None:
    assert one(make(paths=["app/**/*.rb"])) == (REVIEW, "trigger path `app/**/*.rb` matches no tracked file")
    assert one(make(commands=[r"cargo\s+(test|build)"])) == (
        REVIEW,
        "the lesson is about cargo; no tracked file shows this repository uses it",
    )
    no_tests = {k: v for k, v in FILES.items() if not k.startswith("tests/")}
    assert one(make(tags=["tool:pytest"]), no_tests)[0] == REVIEW
    # pytest configured in pyproject counts as using it, even before the first test file.
    configured = dict(no_tests, **{"pyproject.toml": "[tool.pytest.ini_options]\n"})
    assert one(make(tags=["tool:pytest"]), configured)[0] == PROMOTE
    # Without a "jest" dependency, package.json alone does not show jest.
    assert one(make(tags=["tool:jest"]), dict(FILES, **{"package.json": "{}"}))[0] == REVIEW


def test_anchors_changed_since_verification() -> None:
    lesson = make(verify={"paths": ["src/db.py"]}, verified={"at": "2026-11-01", "commit": COMMIT})
    assert one(lesson, changed={COMMIT: ["src/db.py", "README.md"]}) == (
        REVIEW,
        "src/db.py changed since the lesson was verified at aaaaaaa; check it still holds",
    )
    assert one(lesson, changed={COMMIT: ["README.md"]})[0] == PROMOTE
    assert one(lesson, changed={}) == (
        REVIEW,
        "verified.commit aaaaaaa is not in this repository; check the lesson again",
    )
    folder = make(verify={"paths": ["src"]}, verified={"commit": COMMIT})
    assert one(folder, changed={COMMIT: ["src/legacy.py"]})[0] == REVIEW
    literal_trigger = make(paths=["docs/guide.md"], verified={"commit": COMMIT})
    assert one(literal_trigger, changed={COMMIT: ["docs/guide.md"]})[0] == REVIEW
    # Stale beats unsure: the code moved on and the check failed.
    gone = make(verify={"paths": ["src/gone.py"]}, verified={"commit": COMMIT})
    assert one(gone, changed={COMMIT: ["src/gone.py"]})[0] == DELETE


def test_anchors_are_named_files_only() -> None:
    lesson = make(paths=["src/**/*.py", "docs/guide.md"], verify={"paths": ["/src/db.py/"]})
    assert anchors(lesson) == ["docs/guide.md", "src/db.py"]


@pytest.mark.parametrize(
    ("result", "expected"),
    [
        (None, (PROMOTE, "seen in 2 sessions; no check ran: verify.command not run (pass --run-commands); vouched for by tester")),
        (CommandResult("pass", "exit 0"), (PROMOTE, "seen in 2 sessions; re-verified: verify.command `make check` passes (exit 0)")),
        (CommandResult("fail", "exit 1"), (DELETE, "verify.command `make check` failed (exit 1)")),
        (CommandResult("timeout", "timed out after 2s"), (REVIEW, "verify.command `make check` timeout (timed out after 2s)")),
    ],
)
def test_verify_command_runs_only_when_asked(result: CommandResult | None, expected: tuple[str, str]) -> None:
    ran: list[str] = []

    def runner(command: str) -> CommandResult:
        ran.append(command)
        assert result is not None
        return result

    lesson = make(verify={"command": "make check"})
    assert one(lesson, run_command=None if result is None else runner) == expected
    assert ran == ([] if result is None else ["make check"])


WAITS = ("nothing to check: it names no file, script, key or code the repository holds; it waits for a verify check "
         "or a person's `verified: {by: <name>}`")


@pytest.mark.parametrize(
    ("verify", "expected"),
    [
        ({}, (WAIT, WAITS)),
        (
            {"command": "make check"},
            (WAIT, "no check ran: verify.command not run (pass --run-commands): it names no file, script, key or code "
             "the repository holds; it waits for a verify check or a person's `verified: {by: <name>}`"),
        ),
        (
            {"match": [r"def connect\("], "paths": ["src/db.py"]},
            (PROMOTE, r"seen in 2 sessions; re-verified: verify.paths 1 of 1 tracked; "
             r"verify.match `def connect\(` found in src/db.py"),
        ),
        ({"match": [r"clearAllMocks"]}, (DELETE, "verify.match `clearAllMocks` no longer matches any tracked file")),
    ],
)
@pytest.mark.parametrize("source", ["scanned", "typed", "agent"])
def test_a_lesson_is_promoted_only_on_a_check_that_ran_whoever_wrote_it(
    verify: dict[str, Any], expected: tuple[str, str], source: str
) -> None:
    assert one(make(source=source, verify=verify, verified={})) == expected
    # A person who vouches for it lets it through with nothing to check.
    if not verify:
        assert one(make(source=source)) == (PROMOTE, "seen in 2 sessions; nothing to check; vouched for by tester")


def test_what_a_lesson_without_anchors_names_is_checked_as_it_is_now() -> None:
    files = {**FILES, "package.json": '{"scripts": {"test": "jest", "lint": "eslint ."}}', "Makefile": "check:\n\ttrue\n"}
    lesson = make(do="run `npm run e2e` then `make check` before pushing", verified={})
    assert one(lesson, files) == (REVIEW, "names `npm e2e`, but no package.json defines `e2e` now")
    fine = make(do="run `npm run lint` then `make check` before pushing; see src/db.py", verified={})
    assert one(fine, files) == (
        PROMOTE, "seen in 2 sessions; re-verified: `lint` still defined in package.json; `check` still defined in "
        "Makefile; names src/db.py, tracked",
    )  # fmt: skip
    # Naming what is absent is the lesson: "there is no `e2e` script" is not contradicted by its absence.
    assert one(make(do="there is no `npm run e2e` script here; use `npm test`", verified={}), files)[0] == PROMOTE


@pytest.mark.parametrize(
    ("defines", "expected"),
    [
        (["package.json:lint"], (PROMOTE, "seen in 2 sessions; re-verified: verify.defines `lint` still defined in package.json")),
        (["package.json:e2e"], (DELETE, "verify.defines `e2e` is no longer defined in package.json")),
        (["Makefile:check"], (PROMOTE, "seen in 2 sessions; re-verified: verify.defines `check` still defined in Makefile")),
        (["pyproject.toml:tool.ruff"], (DELETE, "verify.defines pyproject.toml is no longer tracked (it defined `tool.ruff`)")),
    ],
)
def test_a_script_target_or_key_a_lesson_anchors_on(defines: list[str], expected: tuple[str, str]) -> None:
    files = {**FILES, "package.json": '{"scripts": {"lint": "eslint ."}}', "Makefile": "all check: build\n\ttrue\n"}
    assert one(make(verify={"defines": defines}), files) == expected


def test_invalid_destination_needs_review() -> None:
    outcome, reason = one(make(promote_to="doc:../outside.md"))
    assert outcome == REVIEW
    assert "must stay inside the repository" in reason


def test_decisions_are_sorted_and_carry_the_destination() -> None:
    snap = Snapshot.from_files(FILES)
    out = decide([make("zeta"), make("alpha", seen=1), make("mid", promote_to="skill:db")], snap)
    assert [(d.slug, d.outcome, d.destination) for d in out] == [
        ("alpha", WAIT, "rule:testing"),
        ("mid", PROMOTE, "skill:db"),
        ("zeta", PROMOTE, "rule:testing"),
    ]


@pytest.mark.parametrize(
    ("glob", "path", "hit"),
    [
        ("*.py", "a/b/c.py", True),
        ("*.py", "c.py", True),
        ("src/*.py", "src/a.py", True),
        ("src/*.py", "src/x/a.py", False),
        ("src/**/*.py", "src/a.py", True),
        ("src/**/*.py", "src/x/y/a.py", True),
        ("src/**", "src/x/y/a.py", True),
        ("tests/", "tests/a.py", True),
        ("./docs/*.md", "docs/x.md", True),
        ("test_?.py", "t/test_1.py", True),
        ("test_?.py", "t/test_12.py", False),
        ("test_[a-c].py", "test_b.py", True),
        ("test_[!a-c].py", "test_b.py", False),
        ("test_[!a-c].py", "test_d.py", True),
        ("docs/*.md", "src/docs/x.md", False),
        ("Makefile", "sub/Makefile", True),
        ("*.{js,ts}", "web/app.ts", True),
        ("*.{js,ts}", "web/app.py", False),
    ],
)
def test_trigger_globs_match_as_the_hooks_do(glob: str, path: str, hit: bool) -> None:
    # The same semantics as lessonbank.matching.globs, so groom flags exactly the globs the hooks never fire on.
    outcome, _ = one(make(paths=[glob]), {path: "", "other/file.txt": ""})
    assert (outcome == PROMOTE) is hit


@pytest.mark.parametrize(
    ("pattern", "text", "hit"),
    [
        (r"(?i)kelvin", "\u212aelvin scale", True),
        (r"(?i)stop", "\u017fTOP", True),
        (r"(?i)STOP", "stop", True),
        (r"connect\(", "reconnect(x)", True),
        (r"\bconnect\(", "reconnect(x)", False),
        (r"conn(?!ect)", "connect", False),
    ],
)
def test_literal_shortcut_agrees_with_the_regex(pattern: str, text: str, hit: bool) -> None:
    files = {"a.txt": "nothing here", "b.txt": text}
    assert (one(make(verify={"match": [pattern]}), files)[0] == PROMOTE) is hit
    assert bool(re.search(pattern, text, re.MULTILINE)) is hit


def test_lesson_tools() -> None:
    lesson = make(tags=["tool:Pytest", "lang:python"], commands=[r"python\s+-m\s+pytest", r"\bnpx\s+jest"])
    assert lesson_tools(lesson) == {"pytest", "python", "npx", "jest"}


def test_tool_skill_offers() -> None:
    lessons = [make(f"p{i}", tags=["tool:pytest"]) for i in range(5)]
    lessons += [make("done", tags=["tool:pytest"], promote_to="skill:pytest")]
    lessons += [make("off", tags=["tool:pytest"], status="disabled")]
    lessons += [make(f"g{i}", tags=["tool:git", "tool:Bad Name"]) for i in range(4)]
    assert tool_skill_offers(lessons, 5) == [("pytest", ["p0", "p1", "p2", "p3", "p4"])]
    assert tool_skill_offers(lessons, 4) == [("git", ["g0", "g1", "g2", "g3"]), ("pytest", ["p0", "p1", "p2", "p3", "p4"])]
