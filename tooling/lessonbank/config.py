"""Settings: one `bank.toml` at the bank root, every key with a documented default."""

from __future__ import annotations

import copy
import tomllib
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from lessonbank.errors import BankError


class Setting(NamedTuple):
    """A key of bank.toml: its default and its one-line meaning."""

    default: Any
    meaning: str


# Each key's Setting. `bank config` prints these with the effective values.
DEFAULTS: dict[str, dict[str, Setting]] = {
    "gates": {
        "duplicate_threshold": Setting(
            0.6,
            "Dice similarity of when+do words at or above which a capture is a repeat (bumps seen)",
        ),
        "destination_threshold": Setting(
            0.8,
            "share of a lesson's words found in one section of its destination that counts as already written",
        ),
    },
    "capture": {
        "default_priority": Setting(5, "priority of a captured lesson that names none"),
    },
    "recall": {
        "max_lessons": Setting(3, "lessons handed over per tool call at most"),
        "max_bytes": Setting(4096, "bytes of lesson text per tool call at most (the first always fits)"),
        "prompt_max_lessons": Setting(3, "lessons handed over per prompt at most"),
        "compact_priority": Setting(
            7,
            "after compaction, lessons at or above this priority may be handed over again",
        ),
    },
    "groom": {
        "min_seen": Setting(
            2,
            "the seen-twice governor: sessions a lesson must be seen in before groom considers it",
        ),
        "skills_dir": Setting(".claude/skills", "where skill:<name> destinations live"),
        "cursor": Setting(False, "also write .cursor/rules/<name>.mdc files in `bank rules`"),
        "command_timeout": Setting(60, "seconds a verify.command may run under --run-commands"),
        "tool_skill_threshold": Setting(
            5,
            "lessons sharing a tool: tag before groom offers one skill for that tool",
        ),
        "install": Setting(
            "",
            "what the groom workflow of `bank init --ci` pip-installs; lessonbank is not on PyPI, so "
            "give a git URL such as git+https://github.com/<you>/lessonbank@v0.1.0",
        ),
    },
    "scan": {
        "accept_above": Setting(
            1.01,
            "candidates at or above this confidence are accepted unattended (above 1 = never)",
        ),
        "base": Setting(0.4, "confidence every scanned candidate starts from"),
        "self_reported": Setting(0.5, "added when the agent wrote a #lesson block"),
        "fix_confirmed": Setting(0.2, "added when the same check passed after the failure"),
        "user_correction": Setting(0.1, "added for a user correction followed by a change of course"),
        "hang_or_timeout": Setting(0.05, "added when the failing check hung or timed out"),
        "per_session": Setting(0.1, "added per further session the lesson was met in (up to two)"),
        "per_project": Setting(0.05, "added per further project (up to two)"),
        "per_repeat": Setting(
            0.05,
            "added per further time the mistake came back within a session (up to two)",
        ),
        "written": Setting(
            0.05,
            "added when the lesson is a failure kind's general instruction, not an episode's own words",
        ),
        "trigger_checked": Setting(
            0.05,
            "added when the trigger fires on the failing command and not on the one that worked",
        ),
        "false_fire": Setting(
            0.1,
            "taken off per call that succeeded in those sessions and that the trigger fires on (up to three)",
        ),
        "narrower": Setting(
            0.1,
            "taken off when the fix was confirmed by running only the failing tests again",
        ),
        "priority_base": Setting(5, "priority every scanned candidate starts from"),
        "priority_hang": Setting(2, "priority added for a hang or timeout"),
        "priority_correction": Setting(1, "priority added for a user correction"),
        "priority_per_session": Setting(1, "priority added per further session (up to two)"),
        "priority_attempts": Setting(1, "priority added when three or more runs failed before the fix"),
        "every": Setting(
            "1d",
            "how often a session start runs a background `bank scan` (30m, 12h, 1d, 7d; 0 or \"off\": never)",
        ),
        "distill_command": Setting(
            "claude -p",
            "headless agent command `--distill` asks for one lesson (prompt appended)",
        ),
    },
}

# Allowed ranges, inclusive; a value outside them could silently lose lessons (a negative
# duplicate threshold makes every capture a "repeat"), so it is an error instead.
RANGES: dict[str, tuple[float, float]] = {
    "gates.duplicate_threshold": (0.05, 1.0),
    "gates.destination_threshold": (0.05, 1.0),
    "capture.default_priority": (1, 10),
    "recall.max_lessons": (0, 50),
    "recall.max_bytes": (0, 1_000_000),
    "recall.prompt_max_lessons": (0, 50),
    "recall.compact_priority": (1, 11),
    "groom.min_seen": (1, 1_000_000),
    "groom.command_timeout": (1, 86_400),
    "groom.tool_skill_threshold": (2, 1_000_000),
    "scan.accept_above": (0.0, 1.01),
    "scan.base": (0.0, 1.0),
    "scan.self_reported": (0.0, 1.0),
    "scan.fix_confirmed": (0.0, 1.0),
    "scan.user_correction": (0.0, 1.0),
    "scan.hang_or_timeout": (0.0, 1.0),
    "scan.per_session": (0.0, 1.0),
    "scan.per_project": (0.0, 1.0),
    "scan.per_repeat": (0.0, 1.0),
    "scan.written": (0.0, 1.0),
    "scan.trigger_checked": (0.0, 1.0),
    "scan.false_fire": (0.0, 1.0),
    "scan.narrower": (0.0, 1.0),
    "scan.priority_base": (1, 10),
    "scan.priority_hang": (0, 9),
    "scan.priority_correction": (0, 9),
    "scan.priority_per_session": (0, 9),
    "scan.priority_attempts": (0, 9),
}
_TYPE_NAMES = {bool: "true or false", int: "a whole number", float: "a number", str: "a string"}


_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def period_seconds(value: object) -> float | None:
    """A period such as 30m, 12h, 1d (or a number of seconds) in seconds; None for 0 or "off".

    ValueError for anything else.
    """
    if isinstance(value, bool):
        raise ValueError(value)
    if isinstance(value, (int, float)):
        number, unit = float(value), "s"
    else:
        text = str(value).strip().lower()
        if text in ("off", "0", ""):
            return None
        unit = text[-1] if text[-1] in _UNITS else "s"
        number = float(text[:-1] if unit == text[-1] else text)
    if not 0 <= number < 1e9:  # also refuses nan and inf
        raise ValueError(value)
    return number * _UNITS[unit] or None


def _check_value(dotted: str, default: Any, value: Any) -> str:
    """Why `value` cannot stand for `dotted`, or '' when it can."""
    if dotted == "scan.every":
        try:
            period_seconds(value)
        except (ValueError, OverflowError):
            return f'{dotted} must be a period such as "30m", "12h", "1d" or "7d", or 0 / "off", got {_cut(value)}'
        return ""
    kind = type(default)
    if kind is bool:
        ok = isinstance(value, bool)
    elif kind is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif kind is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    else:
        ok = isinstance(value, kind)
    if not ok:
        return f"{dotted} must be {_TYPE_NAMES.get(kind, kind.__name__)}, got {_cut(value)}"
    if kind in (int, float):
        low, high = RANGES.get(dotted, (0, float("inf")))
        if not low <= value <= high:
            return f"{dotted} must be from {low:g} to {high:g}, got {_cut(value)}"
    return ""


@dataclass
class Config:
    """Effective settings: defaults overlaid by bank.toml."""

    values: dict[str, dict[str, Any]] = field(
        default_factory=lambda: {s: {k: v.default for k, v in keys.items()} for s, keys in DEFAULTS.items()}
    )

    def get(self, dotted: str) -> Any:
        """The value of `section.key`; KeyError for an unknown key."""
        section, _, key = dotted.partition(".")
        return self.values[section][key]

    def items(self) -> list[tuple[str, Any, str]]:
        """(dotted key, value, meaning) for every known key, sorted."""
        out = []
        for section in sorted(DEFAULTS):
            for key in sorted(DEFAULTS[section]):
                out.append((f"{section}.{key}", self.values[section][key], DEFAULTS[section][key].meaning))
        return out


def _cut(value: Any) -> str:
    """A value from bank.toml as an error quotes it: escaped (repr) and cut to a line."""
    shown = repr(value)
    return shown if len(shown) <= 60 else shown[:59] + "…"


def _shown(name: str) -> str:
    """A name from bank.toml as an error may quote it: a repository wrote it, so anything but a
    plain key (control characters, a newline and shell code after it) is shown escaped and cut."""
    if name and len(name) <= 40 and all(c.isascii() and (c.isalnum() or c in "_-") for c in name):
        return name
    return repr(name[:40]) + ("…" if len(name) > 40 else "")


def parse(text: str, source: str = "bank.toml") -> Config:
    """Parse bank.toml's text into a Config; unknown keys, wrong types and values out of range are errors."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise BankError(f"{source}: not valid TOML: {exc}") from None
    config = Config()
    values = copy.deepcopy(config.values)
    for section, table in data.items():
        if section in DEFAULTS and not isinstance(table, dict):
            raise BankError(f"{source}: {section} must be a table: write [{section}] and its keys below it")
        if section not in DEFAULTS:
            raise BankError(f"{source}: unknown section [{_shown(section)}]; known: {', '.join(sorted(DEFAULTS))}")
        for key, value in table.items():
            if key not in DEFAULTS[section]:
                known = ", ".join(sorted(DEFAULTS[section]))
                raise BankError(f"{source}: unknown key {section}.{_shown(key)}; known in [{section}]: {known}")
            problem = _check_value(f"{section}.{key}", DEFAULTS[section][key].default, value)
            if problem:
                raise BankError(f"{source}: {problem}")
            values[section][key] = value
    return Config(values)


def read(data: bytes | str | None, source: str = "bank.toml") -> Config:
    """The one reader of bank.toml, for the CLI and the hooks alike: bytes must be UTF-8; text
    holding U+FFFD came from bytes that were not (the hooks decode with replacement)."""
    if data is None:
        return Config()
    if isinstance(data, bytes):
        raw = data
        try:
            data = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = raw[: exc.start].count(b"\n") + 1
            raise BankError(f"{source}:{line}: not UTF-8 text (byte {raw[exc.start]:#04x}); save it as UTF-8") from None
    elif "\ufffd" in data:
        line = data[: data.index("\ufffd")].count("\n") + 1
        raise BankError(f"{source}:{line}: not UTF-8 text; save it as UTF-8")
    return parse(data, source)


def lenient(data: bytes | str | None, source: str = "bank.toml") -> tuple[Config, str]:
    """`read`, but a broken file gives the defaults and the one-line problem (the hooks fail open)."""
    try:
        return read(data, source), ""
    except BankError as exc:
        return Config(), f"{exc}; the hooks use the default settings"


# What `bank init` writes into bank.toml: these keys, commented out at their defaults.
_INIT_KEYS = {
    "gates": ("duplicate_threshold",),
    "recall": ("max_lessons", "max_bytes"),
    "groom": ("min_seen", "skills_dir"),
}


def toml_value(value: Any) -> str:
    """A setting's value as bank.toml writes it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        import json  # here: every command loads this module, and `bank list` writes no TOML

        return json.dumps(value, ensure_ascii=False)  # a TOML basic string is a JSON string
    return repr(value)


def default_toml() -> str:
    """What `bank init` writes as bank.toml: the `_INIT_KEYS`, commented out at their defaults."""
    return "# lessonbank settings. Every key is optional; `bank config` prints the effective values.\n" + "".join(
        f"\n[{section}]\n" + "".join(f"# {key} = {toml_value(DEFAULTS[section][key].default)}\n" for key in keys)
        for section, keys in _INIT_KEYS.items()
    )
