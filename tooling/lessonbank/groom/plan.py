"""The plan of one groom: what it read, what it decided, and every file it would write, before a write.

`plan_groom` loads the lessons, snapshots git HEAD as lessons name paths (the bank's own files
left out, so a lesson cannot verify itself), asks `decide` about each lesson, resolves and renders
every destination through `promote`, and turns the outcomes into lesson edits and removals. A
lesson that cannot be promoted (a reused id, a bad destination, an unreadable file) becomes
needs-review with the reason instead of stopping the run; a broken template stops it. It also owns
the verify.command runner and the commit message that describes a plan. Nothing here writes:
`apply` carries the plan out. It imports `bank`, `decide`, `snapshot`, `promote` and `errors`.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import NamedTuple

from lessonbank.bank import frontmatter_edit, secrets
from lessonbank.bank.git import GitRepo
from lessonbank.bank.lesson import parse
from lessonbank.bank.names import DEST_NAME_RE
from lessonbank.bank.store import Bank, Loaded, write_atomic
from lessonbank.errors import BankError
from lessonbank.groom.decide import (
    DELETE,
    OUTCOMES,
    PROMOTE,
    REVIEW,
    CommandResult,
    Decision,
    decide,
    tool_skill_offers,
)
from lessonbank.groom.promote import (
    Target,
    TemplateError,
    environment,
    lesson_view,
    render_target,
    resolve_target,
)
from lessonbank.groom.snapshot import Snapshot


class Write(NamedTuple):
    """A file a groom would write: its path, its new text, and the action (create, update or unchanged)."""

    path: Path
    text: str
    action: str


@dataclass
class Plan:
    """Everything one groom would do, computed before anything is written."""

    decisions: list[Decision]
    writes: dict[str, Write] = field(default_factory=dict)  # rel -> the file written there
    edits: dict[str, tuple[Path, str]] = field(default_factory=dict)  # rel -> (lesson path, new text)
    removals: dict[str, Path] = field(default_factory=dict)  # rel -> lesson path
    targets: dict[str, str] = field(default_factory=dict)  # lesson id -> destination rel
    offers: list[tuple[str, list[str]]] = field(default_factory=list)
    head: str | None = None

    def count(self, outcome: str) -> int:
        """How many decisions have this outcome."""
        return sum(1 for d in self.decisions if d.outcome == outcome)

    def ordered(self) -> list[tuple[Decision, str]]:
        """(decision, destination) in the order `bank groom` prints them: by outcome, then slug."""
        rank = {outcome: i for i, outcome in enumerate(OUTCOMES)}
        ordered = sorted(self.decisions, key=lambda d: (rank[d.outcome], d.slug))
        return [(d, self.targets.get(d.lesson_id, d.destination)) for d in ordered]

    @property
    def changes(self) -> bool:
        """Whether applying the plan writes anything."""
        return bool(self.removals or self.edits or any(w.action != "unchanged" for w in self.writes.values()))


def command_runner(cwd: Path, timeout: float) -> Callable[[str], CommandResult]:
    """Run verify.command in a shell at `cwd`; its whole process group dies at the timeout."""

    def run(command: str) -> CommandResult:
        try:
            proc = subprocess.Popen(
                command, shell=True, cwd=cwd, stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
            )  # fmt: skip
        except OSError as exc:
            return CommandResult("error", str(exc))
        try:
            code = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            return CommandResult("timeout", f"timed out after {timeout:g}s")
        return CommandResult("pass" if code == 0 else "fail", f"exit {code}")

    return run


# The bank's own files quote lessons (their patterns included): a lesson must not verify itself.
_BANK_FILES = ("INDEX.md", "BANK.md", "CLAUDE.md", "AGENTS.md", "bank.toml")
_BANK_DIRS = ("lessons/", "rules/", "templates/", ".cursor/rules/")


def _prefix(bank: Bank, repo: GitRepo) -> str:
    top = repo.rel(bank.root)
    return "" if top in ("", ".") else top + "/"


def bank_paths(bank: Bank, repo: GitRepo) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(files, folder prefixes) the bank manages, as git names them."""
    prefix = _prefix(bank, repo)
    dirs = [prefix + d for d in _BANK_DIRS]
    # A skills folder outside the repository is refused when a lesson is promoted there.
    with contextlib.suppress(ValueError):
        dirs.append(repo.rel(bank.root / str(bank.config.get("groom.skills_dir"))) + "/")
    return tuple(prefix + name for name in _BANK_FILES), tuple(dirs)


def head_snapshot(bank: Bank, repo: GitRepo) -> Snapshot:
    """HEAD as lessons name it (paths relative to the bank root, like the hooks); bank files unsearched."""
    prefix = _prefix(bank, repo)
    files, dirs = bank_paths(bank, repo)
    cut = len(prefix)

    def contents(paths: Sequence[str]) -> dict[str, str]:
        wanted = [prefix + p for p in paths if prefix + p not in files and not (prefix + p).startswith(dirs)]
        return {k[cut:]: v for k, v in repo.read_head(wanted).items()}

    seen: dict[str, frozenset[str] | None] = {}

    def changed_since(commit: str) -> frozenset[str] | None:
        if commit not in seen:
            changed = repo.changed_since(commit)
            seen[commit] = (
                None if changed is None else frozenset(c[cut:] for c in changed if c.startswith(prefix))
            )
        return seen[commit]

    tracked = [p[cut:] for p in repo.tracked() if p.startswith(prefix)]
    return Snapshot(tracked=tracked, contents=contents, changed_since=changed_since, head=repo.head())


def gather_text(text: str, tool: str) -> str:
    """A lesson file's text with promote-to pointed at the skill for `tool`."""
    return frontmatter_edit.set_scalar(text, "promote-to", f"skill:{tool}")


def plan_groom(
    bank: Bank,
    repo: GitRepo,
    min_seen: int | None = None,
    run_command: Callable[[str], CommandResult] | None = None,
    gather: str | None = None,
) -> Plan:
    """Decide every lesson, render every destination, and return the plan (nothing written)."""
    loaded = bank.load()
    texts = {(item.lesson.id, item.lesson.slug): item.text for item in loaded}
    if gather:
        if not DEST_NAME_RE.match(gather):
            raise BankError(f"--gather {gather!r}: a skill name is 1-64 of a-z, 0-9 and '-'")
        loaded = [_gathered(item, gather, texts) for item in loaded]
    lessons = [item.lesson for item in loaded]
    threshold = min_seen if min_seen is not None else int(bank.config.get("groom.min_seen"))
    snap = head_snapshot(bank, repo)
    if snap.head is None:
        # Against an empty tree every check fails: refuse rather than delete the whole bank.
        raise BankError("the repository has no commit yet; groom verifies lessons against committed code")
    decisions = decide(lessons, snap, threshold, run_command)
    ids: dict[str, int] = {}
    by_key: dict[tuple[str, str], Loaded] = {}
    for item in loaded:
        ids[item.lesson.id] = ids.get(item.lesson.id, 0) + 1
        by_key[(item.lesson.id, item.lesson.slug)] = item
    plan = Plan(decisions=[], head=snap.head)
    targets: dict[str, Target] = {}
    final: list[Decision] = []
    for decision in decisions:
        item = by_key[(decision.lesson_id, decision.slug)]
        if decision.outcome == PROMOTE:
            try:
                if ids[decision.lesson_id] > 1:
                    raise BankError(f"id {decision.lesson_id} is used by more than one lesson")
                target = resolve_target(bank, decision.destination)
                lesson_view(item.lesson)
                _no_secret(item.text)
            except BankError as exc:
                decision = _review(decision, f"cannot promote: {exc}")
            else:
                targets.setdefault(target.rel, target).lessons.append(item.lesson)
                plan.targets[decision.lesson_id] = target.rel
        final.append(decision)
    env = environment(bank)
    for rel in sorted(targets):
        target = targets[rel]
        try:
            try:
                existing = target.path.read_text(encoding="utf-8") if target.path.is_file() else None
            except (OSError, UnicodeDecodeError) as exc:
                raise BankError(
                    f"{target.rel} cannot be read as UTF-8 text ({exc.__class__.__name__})"
                ) from None
            text = render_target(env, target, existing)
        except BankError as exc:
            if isinstance(exc, TemplateError):
                raise
            failed = {x.id for x in target.lessons}
            final = [_review(d, f"cannot promote: {exc}") if d.lesson_id in failed else d for d in final]
            for ident in failed:
                plan.targets.pop(ident, None)
            continue
        action = write_atomic(target.path, text, dry_run=True)
        plan.writes[rel] = Write(target.path, text, action)
    plan.decisions = final
    for decision in final:
        item = by_key[(decision.lesson_id, decision.slug)]
        rel = bank.relative(item.path)
        if decision.outcome in (PROMOTE, DELETE):
            plan.removals[rel] = item.path
        elif decision.outcome == REVIEW:
            text = review_text(texts[(decision.lesson_id, decision.slug)], decision.reason)
            if text != item.text:
                plan.edits[rel] = (item.path, text)
        elif texts[(decision.lesson_id, decision.slug)] != item.text:
            plan.edits[rel] = (item.path, texts[(decision.lesson_id, decision.slug)])
    limit = int(bank.config.get("groom.tool_skill_threshold"))
    kept = [x for x in lessons if x.id not in plan.targets]
    plan.offers = tool_skill_offers(kept, limit)
    return plan


def _no_secret(text: str) -> None:
    """Refuse (BankError) to promote a lesson holding a secret: rules/, AGENTS.md and the commit
    would carry it to every clone, and git history keeps it after a fix."""
    found = secrets.find(text)
    if found:
        line = text.count("\n", 0, found[0].start) + 1
        raise BankError(f"it holds a secret ({found[0].kind}, line {line}): remove it from the lesson first")


def _gathered(item: Loaded, tool: str, texts: dict[tuple[str, str], str]) -> Loaded:
    if f"tool:{tool}" not in item.lesson.tags or item.lesson.status == "disabled":
        return item
    text = gather_text(item.text, tool)
    texts[(item.lesson.id, item.lesson.slug)] = text
    return Loaded(item.path, item.text, parse(text))


def _review(decision: Decision, reason: str) -> Decision:
    return Decision(
        decision.lesson_id, decision.slug, REVIEW, " ".join(reason.split()),
        decision.destination, (reason,),
    )  # fmt: skip


def review_text(text: str, reason: str, today: str | None = None) -> str:
    """A lesson's text with status needs-review and the reason, touching only those lines."""
    new = frontmatter_edit.set_scalar(text, "status", "needs-review")
    new = frontmatter_edit.set_scalar(new, "review-reason", reason)
    if new != text:
        new = frontmatter_edit.set_scalar(new, "updated", today or date.today().isoformat())
    return new


def commit_message(plan: Plan) -> str:
    """The groom commit: a count line, then each promotion, deletion and review with its reason."""
    promoted = [d for d in plan.decisions if d.outcome == PROMOTE]
    deleted = [d for d in plan.decisions if d.outcome == DELETE]
    review = [d for d in plan.decisions if d.outcome == REVIEW]
    lines = [f"bank groom: promote {len(promoted)}, delete {len(deleted)}, review {len(review)}", ""]
    if promoted:
        lines.append("Promoted:")
        lines += [f"- {d.slug} -> {plan.targets[d.lesson_id]}: {d.reason}" for d in promoted]
    if deleted:
        lines += ([""] if len(lines) > 2 else []) + ["Deleted as stale:"]
        lines += [f"- {d.slug}: {d.reason}" for d in deleted]
    if review:
        lines += ([""] if len(lines) > 2 else []) + ["Marked needs-review:"]
        lines += [f"- {d.slug}: {d.reason}" for d in review]
    # A reason may quote a command or its output: no secret goes into git history through it.
    return secrets.redact_secrets("\n".join(lines).rstrip("\n") + "\n")[0]
