"""Capturing into another layer (`bank capture --to personal|team:NAME`), through the same gates.

The personal bank is created on first use (as `bank init` would); a team bank is written in its
clone on a new branch (bank.remotes.on_branch), ready for a pull request in the team's
repository. Every draft goes through `pipeline.capture`, so the secrets, personal-data,
duplicate and format gates are the same in every layer (duplicates are looked for in the bank
written to). Lessons that reach a team bank by other routes are checked when pulled (`leaks`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from lessonbank.bank import remotes
from lessonbank.bank.store import MARKER, Bank
from lessonbank.capture import pipeline
from lessonbank.capture.draft import Draft
from lessonbank.capture.redaction import describe, redact
from lessonbank.errors import BankError, GateRefusal
from lessonbank.index import layers


@dataclass
class Captured:
    """What a capture into a layer did: each draft's outcome lines, the refusals, and for a team
    bank the branch written (empty when nothing changed) and the clone."""

    layer: str
    lines: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    branch: str = ""
    clone: Path | None = None
    slugs: list[str] = field(default_factory=list)


def parse(value: str) -> tuple[str, str]:
    """("personal", "") or ("team", NAME) for a --to value; BankError for anything else."""
    if value == layers.PERSONAL:
        return layers.PERSONAL, ""
    if value.startswith(layers.TEAM_PREFIX) and layers.valid_name(value[len(layers.TEAM_PREFIX) :]):
        return "team", value[len(layers.TEAM_PREFIX) :]
    raise BankError(f"--to takes `personal` or `team:NAME` (a name from `bank remote list`), not {value!r}")


def personal_bank(dry_run: bool = False) -> Bank:
    """The personal bank, set up on first use (BankError in a dry run when it does not exist yet)."""
    root = Path(layers.personal_root(str(remotes.data_dir())))
    if not (root / MARKER).is_file():
        if dry_run:
            raise BankError(f"there is no personal bank yet ({root}): `bank init --personal` sets it up")
        from lessonbank.bank import scaffold

        scaffold.init(root)
    return Bank.open(root)


def capture_to(value: str, drafts: list[Draft], dry_run: bool = False) -> Captured:
    """Capture the drafts into the layer `value` names."""
    kind, name = parse(value)
    if kind == layers.PERSONAL:
        done = Captured(layers.PERSONAL)
        _each(personal_bank(dry_run), drafts, dry_run, done)
        return done
    done = Captured(layers.TEAM_PREFIX + name)
    if dry_run:
        if name not in remotes.registry():
            raise BankError(f"no team bank {name!r}: `bank remote add {name} URL` first")
        _each(Bank.open(remotes.clone_path(name)), drafts, True, done)
        return done

    def write(bank: Bank) -> tuple[list[str], str]:
        changed = _each(bank, drafts, False, done)
        # The branch is named after the first slug written: drafts are scrubbed by then, so no
        # secret can reach a ref name.
        return changed, done.slugs[0] if done.slugs else "lesson"

    done.branch, done.clone = remotes.on_branch(name, write)
    return done


def _each(bank: Bank, drafts: list[Draft], dry_run: bool, done: Captured) -> list[str]:
    """Capture each draft into `bank`; return the paths changed, relative to its root."""
    changed: set[str] = set()
    for draft in drafts:
        try:
            outcome = pipeline.capture(bank, draft, dry_run=dry_run)
        except GateRefusal as err:
            done.refused.append(str(err))
            continue
        done.lines.extend(outcome.lines())
        if outcome.action in ("create", "update", "bump"):
            changed.update((bank.relative(outcome.path), "INDEX.md", "BANK.md"))
            done.slugs.append(outcome.slug)
    return sorted(changed)


def leaks(root: Path, paths: list[str]) -> list[str]:
    """Which of these lesson files (relative to the bank at `root`) hold what the secrets or
    personal-data gates would have redacted: lessons merged into a team bank never went through
    this user's gates, so `bank pull` names them (one line each: path: what)."""
    out = []
    for rel in paths:
        try:
            text = (root / rel).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        _, found = redact(text)
        if found:
            out.append(f"{rel}: {describe(found)}")
    return out
