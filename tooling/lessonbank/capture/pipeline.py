"""Capture: a draft goes through the gates, then into lessons/ or onto a banked lesson's seen count."""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass, field, replace
from datetime import date
from pathlib import Path
from typing import Any

from lessonbank.bank import frontmatter_edit
from lessonbank.bank.lesson import render, validate
from lessonbank.bank.names import Destination
from lessonbank.bank.store import Bank, write_atomic
from lessonbank.capture import gates, repository
from lessonbank.capture.draft import Draft, parse_lesson_blocks, to_lesson
from lessonbank.capture.redaction import Redaction, describe
from lessonbank.errors import BankError, GateRefusal
from lessonbank.index import derived
from lessonbank.state import statedir, userdirs


@dataclass
class Outcome:
    """What capture did: create, bump or unchanged, and to which lesson."""

    action: str
    slug: str
    path: Path
    message: str
    redactions: list[Redaction] = field(default_factory=list)

    def lines(self) -> list[str]:
        out = [self.message]
        if self.redactions:
            out.append(f"redacted before writing: {describe(self.redactions)}")
        return out


def _today() -> str:
    return date.today().isoformat()


def capture(bank: Bank, draft: Draft, dry_run: bool = False) -> Outcome:
    """Put a draft through the gates and save it (or bump the lesson it repeats). Raises GateRefusal."""
    # Secrets are scrubbed first, so that no refusal message can echo one; gate 4 reports them.
    draft, redactions = gates.scrub_draft(draft)
    if not draft.when.strip() or not draft.do.strip():
        raise GateRefusal("fields", "refused: a lesson needs both a situation (--when) and what to do (--do)")
    dest = gates.destination(draft.promote_to)
    # A dry run writes no lesson or generated file, so it needs no lock (and works on a read-only
    # checkout); like `bank list`, it may still refresh the derived cache under .lessonbank/.
    with contextlib.nullcontext() if dry_run else bank.lock():
        # Each banked lesson's slug and words come from the derived cache: only files changed
        # since it was written are parsed, and only the repeated lesson's file is read in full.
        # The same cache then goes to `regenerate`, which looks again only at the file written.
        from lessonbank.bank.render import open_cache

        cache = open_cache(bank)
        try:
            return _gate_and_write(bank, draft, dest, redactions, cache, dry_run)
        finally:
            cache.save()  # a no-op once `regenerate` saved or let go of it


def _gate_and_write(
    bank: Bank, draft: Draft, dest: Destination, redactions: list[Redaction], cache: derived.Derived, dry_run: bool
) -> Outcome:
    """The gates that read the bank, then the lesson written (or the one it repeats bumped)."""
    banked = [(rec[derived.SLUG], rec[derived.TERMS]) for rec in cache.small.values() if rec[derived.SLUG] is not None]
    dup = gates.find_duplicate(draft, banked, bank.config.get("gates.duplicate_threshold"))
    if dup is not None:  # the first file by name of that slug (none sorted when there is no repeat)
        name = min(name for name, rec in cache.small.items() if rec[derived.SLUG] == dup)
        return _bump(bank, bank.read(bank.lessons_dir / name), draft.session, dry_run, cache)
    dest_path = bank.destination_path(dest)
    if dest_path.is_file():
        written = dest_path.read_text(encoding="utf-8", errors="replace")
        if gates.already_written(draft, written, bank.config.get("gates.destination_threshold")):
            raise GateRefusal("duplicate", f"refused: this lesson is already written in {bank.relative(dest_path)}")
    gates.preference(draft)
    draft = repository.with_anchors(bank.root, replace(draft))  # what it names that groom can check again
    taken = {slug for slug, _ in banked}
    lesson = to_lesson(draft, taken, _today(), bank.config.get("capture.default_priority"))
    problems = validate(lesson)
    if problems:
        raise GateRefusal("format", f"refused: {problems[0][1]}")
    path = bank.lessons_dir / f"{lesson.slug}.md"
    action = write_atomic(path, render(lesson), dry_run=dry_run)
    if not dry_run:
        from lessonbank.bank.render import regenerate

        regenerate(bank, cache=cache, written=[path.name])
    verb = "would create" if dry_run else "created"
    return Outcome(action, lesson.slug, path, f"{verb} {bank.relative(path)}", redactions)


# A bump re-reads the file before writing: a hand edit made since it was read is bumped again,
# not overwritten; after this many edits in between, the capture refuses instead.
BUMP_TRIES = 3


def _bump(bank: Bank, item: Any, session: str | None, dry_run: bool, cache: derived.Derived) -> Outcome:
    lesson = item.lesson
    read = item.text
    for _ in range(BUMP_TRIES):
        text, counted = frontmatter_edit.bump_text(read, session, _today())
        now = item.path.read_text(encoding="utf-8") if not dry_run else read
        if now == read:
            break
        read = now  # edited since it was read: bump what is there now
    else:
        raise BankError(f"{bank.relative(item.path)} kept changing while capture bumped its seen count: run it again")
    rel = bank.relative(item.path)
    if not counted:
        where = f"in session {session}" if session else "once without a session (give --session)"
        return Outcome(
            "unchanged", lesson.slug, item.path,
            f"repeat of {lesson.slug} ({rel}), already seen {where}: seen stays {lesson.seen}",
        )  # fmt: skip
    if not dry_run:
        write_atomic(item.path, text)
        from lessonbank.bank.render import regenerate

        regenerate(bank, cache=cache, written=[item.path.name])
    verb = "would bump" if dry_run else "bumped"
    return Outcome(
        "bump", lesson.slug, item.path,
        f"repeat of {lesson.slug} ({rel}): {verb} seen {lesson.seen} -> {lesson.seen + 1}",
    )  # fmt: skip


def pending_files(bank: Bank) -> list[Path]:
    """Where the Stop hook keeps blocks it could not save: the bank's state folder, and the
    user's state folder when the bank's could not be written (userdirs.user_pending)."""
    user = userdirs.user_pending(str(bank.root))
    return [bank.state_dir / statedir.PENDING_LESSONS] + ([Path(user)] if user else [])


def _taking(path: Path) -> Path:
    return path.with_name(path.name + ".taking")


def take_pending(bank: Bank) -> list[Draft]:
    """The `#lesson` blocks the Stop hook could not save, as drafts; the pending files are taken away.

    Each file is renamed before it is read, so a hook appending meanwhile starts a new one.
    """
    drafts: list[Draft] = []
    for path in pending_files(bank):
        taken = _taking(path)
        if path.exists():
            if taken.exists():
                # A run that failed half-way left blocks behind: keep them, add the new ones.
                with open(taken, "a", encoding="utf-8") as out:
                    out.write(path.read_text(encoding="utf-8", errors="replace"))
                path.unlink()
            else:
                os.replace(path, taken)
        if not taken.exists():
            continue
        for line in taken.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                entry = json.loads(line)
            except json.JSONDecodeError:
                continue
            if not isinstance(entry, dict) or not isinstance(entry.get("message"), str):
                continue
            for draft in parse_lesson_blocks(entry["message"]):
                draft.session = str(entry.get("session") or "") or None
                drafts.append(draft)
    return drafts


def drop_taken(bank: Bank) -> None:
    """Forget the pending blocks once every one went through the gates."""
    for path in pending_files(bank):
        _taking(path).unlink(missing_ok=True)
