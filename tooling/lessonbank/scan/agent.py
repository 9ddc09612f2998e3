"""Distil a candidate with the agent the user already has: a headless command, a fixed prompt, one answer.

`bank review --distill` and `bank scan --distill` hand each pending candidate's evidence to the
command in `scan.distill_command` (default `claude -p`; `codex exec` and the like work the same way:
the prompt is the last argument), rendered from the `distill-prompt.md.j2` template (a bank's own
templates/ may override it). The answer is read by the same `#lesson` parser as the agent's own
blocks and redacted like everything else; "no lesson" is kept as the agent's verdict. Nothing is
accepted here: the candidate keeps waiting for review, and capture's gates still apply on accepting.
Without the command, the candidates keep their mechanical distillation, and the caller says so.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
import tomllib
from dataclasses import dataclass
from typing import Any

from lessonbank.bank.render import environment, render_template
from lessonbank.bank.store import Bank
from lessonbank.capture.draft import parse_lesson_blocks
from lessonbank.capture.redaction import redact
from lessonbank.config import DEFAULTS
from lessonbank.errors import BankError
from lessonbank.scan.events import Candidate
from lessonbank.state import userdirs

TEMPLATE = "distill-prompt.md.j2"
USER_CONFIG = "config.toml"
DEFAULT_COMMAND = DEFAULTS["scan"]["distill_command"].default
TIMEOUT = 300  # seconds one answer may take


@dataclass(frozen=True)
class Verdict:
    """What the agent answered for one candidate: a lesson (applied), no lesson, or a failure."""

    outcome: str  # lesson | no-lesson | failed
    detail: str = ""


def user_config() -> dict[str, Any]:
    """The user's own settings (`~/.config/lessonbank/config.toml`): outside every repository, so
    the one place, besides a flag, where running a command is consented to."""
    folder = userdirs.user_dir("XDG_CONFIG_HOME", ".config")
    if folder is None:
        return {}
    try:
        with open(folder + "/" + USER_CONFIG, "rb") as handle:
            data = tomllib.load(handle)
    except FileNotFoundError:
        return {}
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise BankError(f"{folder}/{USER_CONFIG}: {exc}") from None
    return data if isinstance(data, dict) else {}


def command(bank: Bank, given: str | None = None) -> tuple[list[str], str]:
    """(argv, where it came from) of the headless agent command; the prompt is appended.

    A command named by the repository's bank.toml is repository data: it runs only when the user
    names it too (`--distill-with`, or scan.distill_command in their own config.toml)."""
    if given:
        return shlex.split(given), "--distill-with"
    mine = (user_config().get("scan") or {}).get("distill_command")
    if isinstance(mine, str) and mine.strip():
        return shlex.split(mine), f"~/.config/lessonbank/{USER_CONFIG}"
    asked = str(bank.config.get("scan.distill_command"))
    if asked != DEFAULT_COMMAND:
        raise BankError(
            f"bank.toml asks --distill to run `{asked}`; a repository cannot choose a command for lessonbank "
            f"to run: pass --distill-with {shlex.quote(asked)} to run it, or set scan.distill_command "
            f"in ~/.config/lessonbank/{USER_CONFIG}"
        )
    return shlex.split(asked), "the default"


def available(argv: list[str]) -> bool:
    return bool(argv) and shutil.which(argv[0]) is not None


def prompt(bank: Bank, cand: Candidate) -> str:
    return render_template(environment(bank.templates_dir), TEMPLATE, {"cand": cand})


def apply(cand: Candidate, answer: str, by: str) -> Verdict:
    """Read the agent's answer onto the candidate: its one `#lesson` block, or its "no lesson"."""
    answer = redact(answer)[0]
    drafts = [d for d in parse_lesson_blocks(answer) if d.when.strip() and d.do.strip()]
    if not drafts:
        if "no lesson" in answer.lower():
            cand.notes = f"{by} found no lesson in this episode"
            cand.signals["no_lesson"] = 1
            return Verdict("no-lesson")
        return Verdict("failed", "the answer held no #lesson block")
    draft = drafts[0]
    cand.title, cand.when, cand.do = draft.title or cand.title, draft.when, draft.do
    for name in ("tools", "commands", "paths", "keywords", "tags"):
        if getattr(draft, name):
            setattr(cand, name, list(getattr(draft, name)))
    cand.promote_to = draft.promote_to or cand.promote_to
    cand.signals["distilled"] = 1
    cand.signals.pop("needs_words", None)
    cand.signals.pop("no_lesson", None)
    cand.notes = f"distilled by {by}"
    return Verdict("lesson")


def distill(bank: Bank, cand: Candidate, argv: list[str]) -> Verdict:
    """Ask the agent about one candidate and apply its answer."""
    try:
        proc = subprocess.run(
            [*argv, prompt(bank, cand)], cwd=bank.root, stdin=subprocess.DEVNULL,
            capture_output=True, text=True, timeout=TIMEOUT,
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Verdict("failed", str(exc).splitlines()[0][:200])
    if proc.returncode != 0:
        return Verdict("failed", f"exit {proc.returncode}: {(proc.stderr or proc.stdout).strip()[:200]}")
    return apply(cand, proc.stdout, f"`{' '.join(argv)}`")
