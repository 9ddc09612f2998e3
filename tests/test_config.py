"""bank.toml: defaults, overrides, and one clear error for each kind of mistake."""

from __future__ import annotations

import pytest

from lessonbank import config
from lessonbank.errors import BankError


def test_defaults_and_an_override() -> None:
    parsed = config.parse("[recall]\nmax_lessons = 2\n[gates]\nduplicate_threshold = 0.75\n")
    assert parsed.get("recall.max_lessons") == 2
    assert parsed.get("gates.duplicate_threshold") == 0.75
    assert parsed.get("groom.min_seen") == 2


def test_every_default_is_valid() -> None:
    for section, keys in config.DEFAULTS.items():
        for key, (default, meaning) in keys.items():
            assert config._check_value(f"{section}.{key}", default, default) == "", key
            assert meaning and "\n" not in meaning


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ("[recall\n", "bank.toml: not valid TOML: "),
        (
            "[recal]\n",
            "bank.toml: unknown section [recal]; known: capture, gates, groom, recall, scan",
        ),
        ("[recall]\nmax_lesons = 2\n", "bank.toml: unknown key recall.max_lesons; known in [recall]: "),
        ("[recall]\nmax_lessons = 1.5\n", "bank.toml: recall.max_lessons must be a whole number, got 1.5"),
        ("[recall]\nmax_lessons = -1\n", "bank.toml: recall.max_lessons must be from 0 to 50, got -1"),
        ("[recall]\nmax_bytes = -5\n", "bank.toml: recall.max_bytes must be from 0 to 1e+06, got -5"),
        (
            "[gates]\nduplicate_threshold = -1\n",
            "bank.toml: gates.duplicate_threshold must be from 0.05 to 1, got -1",
        ),
        (
            "[gates]\nduplicate_threshold = 7\n",
            "bank.toml: gates.duplicate_threshold must be from 0.05 to 1, got 7",
        ),
        ("[scan]\naccept_above = -3\n", "bank.toml: scan.accept_above must be from 0 to 1.01, got -3"),
        (
            '[scan]\nevery = "1w"\n',
            'bank.toml: scan.every must be a period such as "30m", "12h", "1d" or "7d", or 0 / "off", got \'1w\'',
        ),
        (
            "[scan]\nevery = true\n",
            'bank.toml: scan.every must be a period such as "30m", "12h", "1d" or "7d", or 0 / "off", got True',
        ),
        ("[groom]\nmin_seen = 0\n", "bank.toml: groom.min_seen must be from 1 to 1e+06, got 0"),
        ("[groom]\ncursor = 1\n", "bank.toml: groom.cursor must be true or false, got 1"),
        ("[groom]\nskills_dir = 3\n", "bank.toml: groom.skills_dir must be a string, got 3"),
        ("[trial]\nseed = 1\n", "bank.toml: unknown section [trial]; known: "),
        ("recall = 3\n", "bank.toml: recall must be a table: write [recall] and its keys below it"),
    ],
)
def test_mistakes_get_one_clear_line(toml: str, message: str) -> None:
    with pytest.raises(BankError) as info:
        config.parse(toml)
    assert str(info.value).startswith(message)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    ("value", "seconds"),
    [("1d", 86400.0), ("12h", 43200.0), ("30m", 1800.0), ("90s", 90.0), ("90", 90.0), (3600, 3600.0),
     (" 2D ", 172800.0), ("off", None), ("0", None), (0, None), ("0h", None)],
)  # fmt: skip
def test_scan_every_periods(value: object, seconds: float | None) -> None:
    assert config.period_seconds(value) == seconds
    assert config.parse(f"[scan]\nevery = {value!r}\n".replace("'", '"')).get("scan.every") == value


@pytest.mark.parametrize("value", ["1w", "-1d", "nan", "inf", "d", True, 1e12])
def test_scan_every_refuses(value: object) -> None:
    with pytest.raises(ValueError):
        config.period_seconds(value)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"[recall]\n# caf\xe9\n", "bank.toml:2: not UTF-8 text (byte 0xe9); save it as UTF-8"),
        ("[recall]\n# caf\ufffd\n", "bank.toml:2: not UTF-8 text; save it as UTF-8"),
        (b"[recall]\nmax_lessons = -1\n", "bank.toml: recall.max_lessons must be from 0 to 50, got -1"),
    ],
)
def test_read_and_lenient_are_one_reader(data: bytes | str, message: str) -> None:
    with pytest.raises(BankError) as info:
        config.read(data)
    assert str(info.value) == message
    settings, problem = config.lenient(data)
    assert settings == config.Config()
    assert problem == f"{message}; the hooks use the default settings"


def test_read_takes_bytes_text_or_nothing() -> None:
    assert config.read(b"[recall]\nmax_lessons = 2\n").get("recall.max_lessons") == 2
    assert config.read("[recall]\nmax_lessons = 2\n").get("recall.max_lessons") == 2
    assert config.read(None) == config.Config()
    assert config.lenient("[recall]\nmax_lessons = 2\n")[1] == ""


def test_a_hostile_key_is_quoted_escaped_on_one_line() -> None:
    # A repository writes bank.toml: an error must not carry its newlines (and shell code) verbatim.
    with pytest.raises(BankError) as caught:
        config.parse('[scan]\n"x\\necho pwned >> ~/.bashrc" = 1\n')
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith("bank.toml: unknown key scan.'x\\necho pwned >> ~/.bashrc'; known in [scan]:")


def test_a_long_value_is_cut_in_the_error() -> None:
    with pytest.raises(BankError) as caught:
        config.parse('[scan]\nbase = "' + "A" * 500 + '"\n')
    assert len(str(caught.value)) < 120 and str(caught.value).endswith("…")
