"""The repository a lesson is captured in, as `bank.anchors` asks about it: tracked files, their text, a search.

Every capture route (typed, `#lesson` blocks, the Stop hook's pending blocks, the scan) goes
through `capture`, which derives the lesson's verify anchors here from what its words name. Git is
asked (`git ls-files`, `git grep -F`), never anything the repository itself names; outside a git
repository no anchor is derived. Each git call is bounded in time.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from lessonbank.bank import anchors
from lessonbank.capture.draft import Draft
from lessonbank.state import statedir

TIMEOUT = 10  # seconds for one git call
MAX_READ = 1 << 20


# What a folder's own .git/config could make git run (an fsmonitor command, hooks) is switched
# off, and no optional lock is taken: these calls only read.
HARDENED = ("-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null")


def _git(root: Path, *args: str) -> subprocess.CompletedProcess[bytes] | None:
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0"}
    try:
        return subprocess.run(["git", *HARDENED, *args], cwd=root, capture_output=True, timeout=TIMEOUT,
                              stdin=subprocess.DEVNULL, env=env)  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):
        return None


def tracked(root: Path) -> frozenset[str]:
    """The files git tracks under `root`, relative to it (empty outside a git repository)."""
    done = _git(root, "ls-files", "-z", "--", ".")
    if done is None or done.returncode != 0:
        return frozenset()
    return frozenset(p for p in done.stdout.decode("utf-8", "replace").split("\0") if p)


def read(root: Path, path: str) -> str | None:
    """A tracked file's text (its first MAX_READ bytes); None for a link (it could point out of the
    repository), anything but a regular file, or one that cannot be read."""
    return statedir.read_text(str(root / path), MAX_READ, links=False)


def contains(root: Path, literal: str) -> bool:
    """Whether a tracked file holds `literal` (git grep, fixed string)."""
    done = _git(root, "grep", "-q", "-I", "-F", "-e", literal, "--", ".")
    return done is not None and done.returncode == 0


def derive(root: Path, draft: Draft) -> dict[str, list[str]]:
    """The verify anchors of what the draft's words name that the repository holds now."""
    files = tracked(root)
    if not files:
        return {}
    text = "\n".join((draft.title, draft.when, draft.do))
    return anchors.derive(text, files, lambda p: read(root, p), lambda s: contains(root, s))


def with_anchors(root: Path, draft: Draft) -> Draft:
    """The draft with derived anchors added under the verify keys its author did not set."""
    found = {k: v for k, v in derive(root, draft).items() if k not in draft.verify}
    if found:
        draft.verify = {**draft.verify, **found}
    return draft
