"""How far a candidate's command trigger can be trusted, read from the very sessions it was learned in. Pure.

The hooks match a command trigger against each simple command of a Bash call (`shell.trigger_texts`).
Here the same texts of the episode's commands are matched with `re`: a trigger is *checked* when it
fires on the failing command and stays quiet on the one that worked; its *false fires* are the
calls of those sessions that succeeded and that it would have fired on (each a lesson handed over
for nothing). Both go into the candidate's signals, and so into its confidence.
"""

from __future__ import annotations

import re
from functools import lru_cache

from lessonbank.matching import shell
from lessonbank.scan.events import Candidate

MAX_TEXTS = 4000  # successful calls looked at per candidate


@lru_cache(maxsize=512)
def _compiled(pattern: str) -> re.Pattern[str] | None:
    try:
        return re.compile(pattern)
    except re.error:
        return None


@lru_cache(maxsize=8192)
def _texts(command: str) -> tuple[str, ...]:
    return tuple(shell.trigger_texts(command[:8192]))


def fires(patterns: list[str], command: str) -> bool:
    """Whether any of the command triggers fires on the command, as the PreToolUse hook splits it."""
    compiled = [c for c in map(_compiled, patterns) if c is not None]
    return any(c.search(text) for c in compiled for text in _texts(command))


def check(cand: Candidate, succeeded: dict[str, list[str]]) -> None:
    """Set `trigger_checked` and `false_fires` in the candidate's signals from its evidence and sessions."""
    if not cand.commands:
        cand.signals.pop("trigger_checked", None)
        return
    failing = [str(e.get("failing") or e.get("command") or "") for e in cand.evidence]
    passing = [str(e["passing"]) for e in cand.evidence if e.get("passing") and not str(e["passing"]).startswith("(")]
    failing = [f for f in failing if f]
    if failing and all(fires(cand.commands, f) for f in failing) and not any(fires(cand.commands, p) for p in passing):
        cand.signals["trigger_checked"] = 1
    else:
        cand.signals.pop("trigger_checked", None)
    texts = [c for s in dict.fromkeys(cand.sessions) for c in succeeded.get(s, [])][:MAX_TEXTS]
    false = sum(1 for c in texts if fires(cand.commands, c))
    if false or "false_fires" in cand.signals:
        cand.signals["false_fires"] = max(false, cand.signals.get("false_fires", 0))
