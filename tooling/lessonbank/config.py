"""Settings: one `bank.toml` at the bank root, every key with a documented default."""

from __future__ import annotations

import copy
import tomllib
from dataclasses import dataclass, field
from typing import Any

from lessonbank.errors import BankError

# Each key: (default, one-line meaning). `bank config` prints these with the effective values.
DEFAULTS: dict[str, dict[str, tuple[Any, str]]] = {
    "gates": {
        "duplicate_threshold": (
            0.6,
            "Dice similarity of when+do words at or above which a capture is a repeat (bumps seen)",
        ),
        "destination_threshold": (
            0.8,
            "share of a lesson's words found in one section of its destination that counts as already written",
        ),
    },
    "capture": {
        "default_priority": (5, "priority of a captured lesson that names none"),
    },
    "recall": {
        "max_lessons": (3, "lessons handed over per tool call at most"),
        "max_bytes": (4096, "bytes of lesson text per tool call at most (the first always fits)"),
        "prompt_max_lessons": (3, "lessons handed over per prompt at most"),
        "compact_priority": (
            7,
            "after compaction, lessons at or above this priority may be handed over again",
        ),
    },
    "groom": {
        "min_seen": (
            2,
            "the seen-twice governor: sessions a lesson must be seen in before groom considers it",
        ),
        "skills_dir": (".claude/skills", "where skill:<name> destinations live"),
        "cursor": (False, "also write .cursor/rules/<name>.mdc files in `bank rules`"),
        "command_timeout": (60, "seconds a verify.command may run under --run-commands"),
        "tool_skill_threshold": (
            5,
            "lessons sharing a tool: tag before groom offers one skill for that tool",
        ),
    },
    "scan": {
        "accept_above": (
            1.01,
            "candidates at or above this confidence are accepted unattended (above 1 = never)",
        ),
    },
    "trial": {
        "seed": (20261129, "seed for the trial's arm assignment"),
        "block_size": (2, "permuted block size: 2 keeps the arms within one turn of each other at all times"),
    },
}


@dataclass
class Config:
    """Effective settings: defaults overlaid by bank.toml."""

    values: dict[str, dict[str, Any]] = field(
        default_factory=lambda: {s: {k: v[0] for k, v in keys.items()} for s, keys in DEFAULTS.items()}
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
                out.append((f"{section}.{key}", self.values[section][key], DEFAULTS[section][key][1]))
        return out


def parse(text: str, source: str = "bank.toml") -> Config:
    """Parse bank.toml's text into a Config; unknown keys and wrong types are errors."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise BankError(f"{source}: not valid TOML: {exc}") from None
    config = Config()
    values = copy.deepcopy(config.values)
    for section, table in data.items():
        if section not in DEFAULTS or not isinstance(table, dict):
            raise BankError(f"{source}: unknown section [{section}]; known: {', '.join(sorted(DEFAULTS))}")
        for key, value in table.items():
            if key not in DEFAULTS[section]:
                known = ", ".join(sorted(DEFAULTS[section]))
                raise BankError(f"{source}: unknown key {section}.{key}; known in [{section}]: {known}")
            default = DEFAULTS[section][key][0]
            if isinstance(default, bool) != isinstance(value, bool) or (
                isinstance(default, (int, float))
                and not isinstance(value, (int, float))
                or isinstance(default, str)
                and not isinstance(value, str)
            ):
                raise BankError(
                    f"{source}: {section}.{key} must be a {type(default).__name__}, got {value!r}"
                )
            values[section][key] = value
    return Config(values)


DEFAULT_TOML = """\
# lessonbank settings. Every key is optional; `bank config` prints the effective values.

[gates]
# duplicate_threshold = 0.6

[recall]
# max_lessons = 3
# max_bytes = 4096

[groom]
# min_seen = 2
# skills_dir = ".claude/skills"
"""
