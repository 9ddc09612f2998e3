"""The secret gate: every credential format in the table is redacted, every look-alike stays,
and through each capture route nothing secret reaches lessons/, INDEX.md, BANK.md, the compiled index,
the scan's store or a file name. All values are generated fakes (tests/bank/secret_cases.py).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from lessonbank.bank import secret_library, secrets
from lessonbank.capture import gates
from lessonbank.capture.draft import Draft
from lessonbank.capture.redaction import redact
from tests.bank.secret_cases import LOOK_ALIKES, SECRETS, j, r
from tests.conftest import run

DEMO = (
    Path(__file__).resolve().parents[2]
    / "tooling"
    / "lessonbank"
    / "demo"
    / "transcripts"
    / "shop-session.jsonl"
)
BY_NAME = {name: (text, parts) for name, text, parts in SECRETS}
# Formats once found reaching git, plus others reported alongside them.
REPORTED = [
    "azure storage account key", "sendgrid key", "pypi token", "hugging face token", "databricks token",
    "twilio account sid", "twilio api key", "gcp service account key id", "django secret key",
    "authorization basic", "short password", "slack webhook", "digitalocean token", "docker hub token",
]  # fmt: skip


def pieces(parts: tuple[str, ...]) -> list[str]:
    """What of a secret must not survive: the whole, and its first and last ten characters."""
    out = []
    for part in parts:
        out += [part, part[:10], part[-10:]] if len(part) > 12 else [part]
    return out


def test_the_table_is_large_enough() -> None:
    assert len(SECRETS) >= 100 and len(LOOK_ALIKES) >= 50
    assert len({name for name, _, _ in SECRETS}) == len(SECRETS)
    assert set(REPORTED) <= set(BY_NAME)


@pytest.mark.parametrize(("name", "text", "parts"), SECRETS, ids=[c[0] for c in SECRETS])
def test_every_credential_format_is_redacted(name: str, text: str, parts: tuple[str, ...]) -> None:
    clean, found = redact(text)
    assert found, f"{name}: nothing found in {text!r}"
    for piece in pieces(parts):
        assert piece not in clean, f"{name}: {piece!r} survives in {clean!r}"
    assert "[REDACTED:" in clean
    assert redact(clean) == (clean, []), "redacting twice changes nothing"


@pytest.mark.parametrize(("name", "text"), LOOK_ALIKES, ids=[c[0] for c in LOOK_ALIKES])
def test_look_alikes_stay(name: str, text: str) -> None:
    # The secret gate alone: personal-data redaction has its own table (tests/capture/test_personal.py).
    assert secrets.find(text) == [], name
    assert secrets.redact_secrets(text) == (text, {})


def test_only_the_value_of_an_assignment_goes() -> None:
    text, _, _ = BY_NAME["env db password"][0].partition("=")
    clean, found = redact(BY_NAME["env db password"][0])
    assert clean == f"{text}=[REDACTED:secret assignment]"
    assert [f.kind for f in found] == ["secret assignment"]


def test_references_next_to_secrets_stay() -> None:
    token = j("dckr", "_pat_") + r(27)
    clean, _ = redact(
        f"docker login -p {token} && export API_KEY=$API_KEY pwd=$(pwd) password=${{DB_PASSWORD}}"
    )
    assert clean == (
        "docker login -p [REDACTED:docker hub token] && export API_KEY=$API_KEY pwd=$(pwd) password=${DB_PASSWORD}"
    )


def test_a_private_key_block_goes_whole() -> None:
    text, parts = BY_NAME["rsa private key"]
    clean, found = redact(text)
    assert clean == "the key file held\n[REDACTED:private key]\nand was committed"
    assert [f.kind for f in found] == ["private key"]


def test_scrub_draft_covers_every_field_and_keeps_triggers_valid() -> None:
    hf = j("h", "f_") + r(34, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
    pw = r(12)
    draft = Draft(
        title=f"Token {hf} leaked",
        when="deploying",
        do="use the vault",
        promote_to="rule:deploy",
        commands=[f"curl -u admin:{pw} https://ci"],
        paths=[f"secrets/{hf}/*.json"],
        keywords=[hf],
        tags=["tool:curl"],
        verify={"command": f"HF_TOKEN={hf} make check", "expect": ["ok", hf]},
        session=f"s-{hf}",
    )
    clean, found = gates.scrub_draft(draft)
    assert hf not in repr(clean) and pw not in repr(clean)
    assert clean.commands == [r"curl -u admin:\[REDACTED:user password\] https://ci"]
    assert clean.paths == ["secrets/REDACTED:hugging face token/*.json"]
    assert clean.title == "Token [REDACTED:hugging face token] leaked"
    assert {f.kind: f.count for f in found} == {"hugging face token": 6, "user password": 1}


# ---- through each capture route ---------------------------------------------------------------


def _bank_files(bank: Path) -> tuple[str, list[str]]:
    """All the bank's text (lessons, INDEX.md, BANK.md, the compiled index, the scan's store) and its file names."""
    files = [p for p in bank.rglob("*") if p.is_file() and ".git" not in p.relative_to(bank).parts]
    text = "\n".join(p.read_bytes().decode("utf-8", "replace") for p in files)
    return text, [str(p.relative_to(bank)) for p in files]


def assert_nothing_secret(bank: Path, names: list[str]) -> None:
    text, paths = _bank_files(bank)
    assert (bank / "INDEX.md").is_file() and (bank / "BANK.md").is_file()
    assert (bank / ".lessonbank" / "index.bin").is_file()
    assert list((bank / "lessons").glob("*.md"))
    for name in names:
        for piece in pieces(BY_NAME[name][1]):
            assert piece not in text, f"{name}: {piece!r} reached the bank"
            assert not any(piece in p for p in paths), f"{name}: {piece!r} in a file name"


def _secret_of(name: str) -> str:
    """The case's text on one line (for a flag, a JSON string or a block field)."""
    return " ".join(BY_NAME[name][0].split())


ALL_TEXTS = "\n\n".join(text for _, text, _ in SECRETS)


def test_capture_flags_write_no_secret(bank: Path) -> None:
    result = run(
        bank, "capture", "--promote-to", "doc:docs/deploy.md",
        "--title", f"Deploy with {_secret_of('hugging face token')}",
        "--when", "deploying the shop: " + "; ".join(_secret_of(n) for n in REPORTED[:7]),
        "--do", "keep credentials in the vault, never in scripts: " + "; ".join(_secret_of(n) for n in REPORTED[7:]),
        "--keywords", _secret_of("pypi token").split()[-1], "--tags", "tool:docker",
        "--trigger-command", _secret_of("curl user password"), "--trigger-path", "deploy/*.env",
        "--body", ALL_TEXTS,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "redacted before writing:" in result.output
    assert_nothing_secret(bank, [name for name, _, _ in SECRETS])


def test_capture_json_writes_no_secret_not_even_in_the_file_name(bank: Path) -> None:
    lesson = {
        "title": f"{_secret_of('sendgrid key')} and {_secret_of('digitalocean token')}",
        "when": "publishing a release: " + "; ".join(_secret_of(n) for n in REPORTED),
        "do": "read every credential from the environment, as in API_KEY=$API_KEY",
        "promote-to": "rule:release",
        "body": ALL_TEXTS,
        "triggers": {
            "commands": [_secret_of("docker hub token")],
            "keywords": [_secret_of("databricks token")],
        },
        "tags": ["tool:docker"],
        "verify": {"command": _secret_of("pgpassword")},
    }
    result = run(bank, "capture", "--json", input=json.dumps(lesson))
    assert result.exit_code == 0, result.output
    assert_nothing_secret(bank, [name for name, _, _ in SECRETS])
    text, _ = _bank_files(bank)
    assert "API_KEY=$API_KEY" in text


def test_capture_blocks_write_no_secret(bank: Path) -> None:
    block = "\n".join([
        "#lesson",
        f"title: {_secret_of('twilio api key')}",
        "tool: Bash",
        f"trigger: {_secret_of('docker hub token')}",
        "mistake: the deploy failed with " + "; ".join(_secret_of(n) for n in REPORTED),
        "fix: export the credentials from the vault instead (password=${DB_PASSWORD})",
        "promote-to: rule:deploy",
        "#/lesson",
    ])  # fmt: skip
    result = run(bank, "capture", "--blocks", input=f"Done.\n{block}\n")
    assert result.exit_code == 0, result.output
    assert_nothing_secret(bank, REPORTED + ["twilio api key", "docker hub token"])
    text, _ = _bank_files(bank)
    assert "password=${DB_PASSWORD}" in text


def test_scan_accept_writes_no_secret(bank: Path, tmp_path: Path) -> None:
    # The demo transcript, its command and the agent's #lesson block now carrying secrets (JSON-safe ones).
    safe = [n for n in REPORTED if not any(c in BY_NAME[n][0] for c in "\"'\\\n")]
    assert len(safe) >= 10
    said = " ".join(_secret_of(n) for n in safe)
    raw = DEMO.read_text(encoding="utf-8")
    raw = raw.replace("hunter2secret@localhost/shop pytest -q", f"{r(5)}@localhost/shop {said} pytest -q")
    raw = raw.replace("\\nfix: set pythonpath", f"\\nfix: never paste {said}; set pythonpath")
    assert raw.count(said) >= 3
    transcript = tmp_path / "session.jsonl"
    transcript.write_text(raw, encoding="utf-8")
    result = run(bank, "scan", "--path", str(transcript), "--accept-above", "0.5")
    assert result.exit_code == 0, result.output
    assert "created lessons/" in result.output or "accepted" in result.output
    assert_nothing_secret(bank, safe)


# ---- cost ---------------------------------------------------------------------------------------


def test_the_gate_stays_out_of_the_hooks_and_loads_on_first_redaction() -> None:
    code = (
        "import sys, time; sys.path.insert(0, sys.argv[1]);"
        "import lessonbank.hooks.dispatch, lessonbank.hooks.pre_tool, lessonbank.hooks.stop;"
        "assert 'detect_secrets' not in sys.modules and 'lessonbank.bank.secrets' not in sys.modules;"
        "import lessonbank.capture.redaction as r; assert 'detect_secrets' not in sys.modules;"
        "r.redact('x'); assert 'detect_secrets' in sys.modules"
    )
    tooling = Path(secrets.__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", code, str(tooling)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr


def test_the_library_table_is_kept_in_the_user_cache_and_read_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first run works the detect-secrets table out and keeps it (under XDG_CACHE_HOME); the
    next reads it without importing a plugin and finds the same secrets; a table kept for another
    detect-secrets (another key) or a broken file is worked out again."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    text = "token AKIAABCDEFGHIJKLMNOPQ and xoxb-1234567890-abcdefghij in a log"
    secret_library.table.cache_clear()
    worked_out = secret_library.table()
    found = secrets.find(text)
    kept = tmp_path / "cache" / "lessonbank" / secret_library.LIBRARY_CACHE
    assert kept.is_file() and {f.kind for f in found} == {"aws access key", "slack token"}
    secret_library.table.cache_clear()
    with monkeypatch.context() as m:
        m.setattr(secret_library, "_requests_deferred", lambda: pytest.fail("the plugins were imported"))
        assert secret_library.table() == worked_out
        assert secrets.find(text) == found
    calls: list[int] = []
    real = secret_library._requests_deferred
    monkeypatch.setattr(secret_library, "_requests_deferred", lambda: calls.append(1) or real())
    for spoil in (lambda: monkeypatch.setattr(secret_library, "_LIBRARY_FORMAT", -1), lambda: kept.write_bytes(b"junk")):
        spoil()
        secret_library.table.cache_clear()
        assert secret_library.table() == worked_out
    assert calls == [1, 1]
    secret_library.table.cache_clear()


def _first_letters(pattern: str) -> set[str]:
    """The letters a match of `pattern` (a group of words, some behind a look-behind) can begin with."""
    from re import _constants, _parser

    def firsts(sub: object) -> set[str]:
        for op, av in sub:  # type: ignore[attr-defined]
            if op is _constants.LITERAL:
                return {chr(av).lower()}
            if op is _constants.BRANCH:
                return set().union(*(firsts(branch) for branch in av[1]))
            if op is _constants.SUBPATTERN:
                return firsts(av[3])
            if op is not _constants.ASSERT_NOT:  # a look-behind takes no character; anything else is unexpected
                raise AssertionError(f"cannot tell the first letters past {op}")
        raise AssertionError("an empty word")

    return firsts(_parser.parse(pattern))


def test_the_secret_assignment_look_ahead_names_every_first_letter_of_the_secret_names() -> None:
    assert _first_letters(secrets._SECRET_NAME) == set(secrets._SECRET_FIRST)


def test_the_secret_assignment_look_ahead_finds_what_the_pattern_without_it_finds() -> None:
    import random
    import re

    pattern = dict((kind, p) for kind, p in secrets._OWN)["secret assignment"]
    without = re.compile(pattern.replace(f"(?=[{secrets._SECRET_FIRST}])", "", 1), re.S)
    assert without.pattern != pattern
    words = ["password", "passwd", "passphrase", "pwd", "secret", "token", "api_key", "apikey", "access-key-id",
             "signing_key", "license.key", "credentials", "pass", "pw", "auth", "pat", "dsn", "compass", "oauth",
             "ſecret", "Token", "KEY", "x", "DB_", "_", "-", "."]  # fmt: skip
    glue = [": ", "=", " = ", ":=", "=>", '"]: "', " ", "\n", "'", "`", ",", ";"]
    rng = random.Random(20)
    at = [kind for kind, _ in secrets._OWN].index("secret assignment")
    matched = 0
    for _ in range(3000):
        text = "".join(rng.choice(words) + rng.choice(glue) + rng.choice(["", "s3cr3tValue9", "${X}", "abc"]) for _ in range(6))
        found = [(m.span(), m.group("kw"), m.group("v")) for m in secrets._own_pattern(at).finditer(text)]
        assert found == [(m.span(), m.group("kw"), m.group("v")) for m in without.finditer(text)], text
        matched += bool(found)
    assert matched > 1000  # texts that hold an assignment, not only ones that hold none


def _texts_with_secrets() -> list[str]:
    corpus = Path(__file__).resolve().parents[3] / "shared" / "corpus" / "lessons"
    kept = [p.read_text(encoding="utf-8", errors="replace") for p in sorted(corpus.glob("*"))[:40] if p.is_file()]
    return [text for _, text, _ in SECRETS] + [text for _, text in LOOK_ALIKES] + kept


def test_a_library_pattern_matches_no_text_without_its_run() -> None:
    import re

    runs = [e for e in secret_library.table() if e.run]
    assert any(e.kind == "ibm cloud key" for e in runs)  # the one whose literals are not written out
    matched = 0
    for text in _texts_with_secrets():
        longest = max(map(len, text.split()), default=0)
        for e in runs:
            if re.search(e.pattern, text, e.flags):
                matched += 1
                assert re.search(e.run, text, e.flags) and e.word <= longest, (e.kind, text)
    assert matched >= 10


def test_the_runs_leave_out_no_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    texts = _texts_with_secrets()
    found = [secrets.find(text) for text in texts]
    assert sum(map(bool, found)) > 50
    unfiltered = [e._replace(run="", word=0) for e in secret_library.table()]
    monkeypatch.setattr(secret_library, "table", lambda: unfiltered)
    assert [secrets.find(text) for text in texts] == found
