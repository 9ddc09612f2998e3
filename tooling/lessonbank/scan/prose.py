"""What the agent and the user said, read for lessons: the diagnosis, the fix, removals, instructions. Pure.

The scan keeps the agent's own sentences as they were written: the one that says why a check failed
(its diagnosis), the one that says what it changed (its fix), and whether what it did was to leave
the failing thing out. A user's message is a correction only when it rejects what the agent did and
says what to do instead.
"""

from __future__ import annotations

import re

from lessonbank.capture import blocks

_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z`*(\"'])|\n+\s*(?:[-*•]|\d+[.)])?\s*")
_CAUSE = (
    (3, re.compile(r"(?i)\broot cause\b|\bthe (?:real |actual )?(?:issue|problem|cause|culprit|bug) (?:is|was)\b")),
    (2, re.compile(r"(?i)\bbecause\b|\bcaused by\b|\bdue to\b|\bthis means\b|\bthe reason\b|\bis escaping\b")),
    (1, re.compile(r"(?i)\b(?:keeps|doesn'?t|does not|isn'?t|is not|not on|needs? to|must|expects?|leaks?"
                   r"|no longer|could ?n[o']t|can ?n[o']t)\b")),
)
_NOT_CAUSE = re.compile(r"(?i)^\W*(?:let me|now let'?s|let'?s|i'?ll|i will|great|perfect|good|excellent)\b")
_FIX_VERB = re.compile(
    r"(?i)^\W*(?:i(?:'ve| have)?\s+)?(switched|changed|replaced|added|removed|used|set|moved|fixed|updated"
    r"|wrapped|renamed|exported|installed|pointed|reset|declared|included|linked|passed|called|ran"
    r"|quoted|escaped|made)\b"
)
_REMOVAL = re.compile(
    r"(?i)\b(?:temporarily|for now)\s+(?:exclud|disabl|skip|remov|comment|stub|drop)\w*"
    r"|\b(?:exclud|disabl|skipp?|comment\w*\s+out|stub\w*\s+out|drop)\w*\b[^.\n]{0,60}"
    r"\b(?:from (?:the )?(?:build|compilation|cmake|makefile|suite|test run)|temporarily|for now)\b"
    r"|\b(?:mark|marked|marking) (?:it|them|the tests?) (?:as )?(?:skip|xfail)"
)
_IMPERATIVE = {
    "switched": "switch", "changed": "change", "replaced": "replace", "added": "add", "removed": "remove",
    "used": "use", "set": "set", "moved": "move", "fixed": "fix", "updated": "update", "wrapped": "wrap",
    "renamed": "rename", "exported": "export", "installed": "install", "pointed": "point", "reset": "reset",
    "declared": "declare", "included": "include", "linked": "link", "passed": "pass", "called": "call",
    "ran": "run", "quoted": "quote", "escaped": "escape", "made": "make",
}  # fmt: skip
_CODE = re.compile(r"`([^`\n]{2,80})`")
_QUOTED = re.compile(r"[‘'\"]([A-Za-z_][\w.:>-]{2,60})[’'\"]")


def sentences(text: str) -> list[str]:
    """The sentences and list items of a message, whitespace folded."""
    return [" ".join(s.split()).strip(" -*") for s in _SENTENCE.split(text) if s and s.strip(" -*\n")]


def cause_score(sentence: str) -> int:
    """How plainly a sentence says why something failed (0: not at all)."""
    if _NOT_CAUSE.match(sentence) or len(sentence) < 20:
        return 0
    return next((weight for weight, pattern in _CAUSE if pattern.search(sentence)), 0)


def diagnosis(text: str) -> tuple[int, str]:
    """The sentence of a message that best says why the check failed, with its score (0, "" if none)."""
    best = (0, "")
    for sentence in sentences(text):
        score = cause_score(sentence)
        if score > best[0]:
            best = (score, sentence[:400])
    return best


def fix_sentence(text: str) -> str:
    """The sentence of a message that says what the agent changed ("Switched X to Y so …"), or ""."""
    for sentence in sentences(text):
        if _FIX_VERB.match(sentence) and ("`" in sentence or " to " in sentence):
            return sentence[:400]
    return ""


def removal(text: str) -> str:
    """The words by which the agent says it leaves the failing thing out (exclude, skip, disable), or ""."""
    match = _REMOVAL.search(text)
    return match.group(0) if match else ""


def imperative(sentence: str) -> str:
    """A fix sentence as an instruction: "I switched `a` to `b` so …" -> "Switch `a` to `b` so …"."""
    match = _FIX_VERB.match(sentence)
    if not match:
        return sentence
    verb = _IMPERATIVE.get(match.group(1).lower(), match.group(1).lower())
    rest = sentence[match.end() :]
    return (verb[:1].upper() + verb[1:] + rest).rstrip(" .") + "."


def identifiers(text: str) -> list[str]:
    """Code named in a sentence: backticked spans, else quoted identifiers from compiler messages."""
    found = [c.strip() for c in _CODE.findall(text)] or _QUOTED.findall(text)
    return list(dict.fromkeys(found))


def strip_lead(sentence: str) -> str:
    """A diagnosis without its preamble: "I've identified the root cause: X" -> "X"."""
    text = re.sub(
        r"(?i)^\W*(?:i(?:'ve| have)? (?:found|identified|figured out)|found|so)?\s*(?:the\s+)?"
        r"(?:real |actual )?(?:root cause|issue|problem|cause|culprit|bug)(?: is| was)?(?: that)?\s*[:,-]?\s*",
        "",
        sentence.replace("’", "'"),
    )
    text = re.split(r"(?i)[.;] (?:i'?m|i am|i'?ll|let me|now)\b", text)[0]
    return text.rstrip(" .")


# ---- corrections --------------------------------------------------------------------------

CORRECTION = re.compile(
    r"(?ix)^\W*(?:no\b(?![,\s]+(?:problem|worries|thanks|rush|need|hurry))|nope\b|wrong\b|stop\b"
    r"|don'?t\b|do\s+not\b|never\b|not\s+that\b|that'?s\s+not\b"
    r"|thats\s+not\b|that\s+is\s+not\b|this\s+is\s+not\b|actually\b|instead\b|undo\b|revert\b"
    r"|why\s+did\s+you\b|why\s+are\s+you\b|i\s+said\b|i\s+told\s+you\b|you\s+didn'?t\b"
    r"|you\s+did\s+not\b|you\s+forgot\b|you\s+missed\b|you\s+broke\b|it'?s\s+not\b|its\s+not\b)"
    r"|\b(?:that'?s\s+wrong|is\s+wrong|hall?ucinat\w*|not\s+what\s+i\s+(?:asked|wanted|meant)"
    r"|you\s+should(?:\s+have|n'?t)|should\s+not\s+have|we\s+aren'?t\s+to|we\s+are\s+not\s+to"
    r"|(?:don'?t|do\s+not|never)\s+(?:use|run|commit|push|touch|edit|change|add|delete|remove))\b"
)
ACK = re.compile(
    r"(?i)\b(?:you'?re\s+(?:absolutely\s+)?right|you\s+are\s+(?:absolutely\s+)?right|my\s+mistake"
    r"|i\s+apologi[sz]e|apologies|sorry|good\s+catch|you'?re\s+correct|understood|got\s+it"
    r"|let\s+me\s+(?:fix|correct|redo|revert|undo)|i'?ll\s+(?:fix|correct|revert|undo))\b"
)
NOT_HUMAN = ("<command-", "<local-command", "<task-notification", "This session is being continued",
              "Caveat:", "<system-reminder>", "<user-prompt-submit-hook>", "[Request interrupted")  # fmt: skip


def is_correction(text: str) -> bool:
    """Whether a user message corrects the agent: short, human, rejecting what it did, saying what to do."""
    stripped = text.strip()
    if not stripped or len(stripped) > 600 or stripped.startswith(NOT_HUMAN) or stripped.count("\n") > 8:
        return False
    return bool(CORRECTION.search(stripped)) and bool(instruction(stripped))



_INSTRUCTION = re.compile(
    r"(?ix)(?:^|[.!?;,]\s+|\bbut\s+|\band\s+|\bso\s+|\n)"
    r"(?:please\s+)?(?:instead\b|use\b|run\b|always\b|never\b|don'?t\b|do\s+not\b|make\s+sure\b|keep\b"
    r"|put\b|call\b|sign\b|add\b|remove\b|rename\b|set\b|write\b|check\b|install\b|commit\b|push\b|only\b)"
    r"|\b(?:you\s+(?:should|must|need\s+to|have\s+to)|we\s+(?:have|need)\s+to|should\s+(?:be|use)"
    r"|instead\s+of|rather\s+than|we\s+aren'?t\s+to|we\s+are\s+not\s+to)\b"
)
_STATUS_ONLY = re.compile(r"(?i)^\W*(?:it'?s|its|it\s+is|that'?s|thats|this\s+is)\s+(?:not\s+)?\w+ing\b")


def instruction(text: str) -> str:
    """The part of a user's message that says what to do instead, or "" when it gives no instruction."""
    said: list[str] = []
    for sentence in sentences(text):
        clauses = re.split(r",\s+(?=we\b|you\b|use\b|instead\b|please\b)", sentence)
        said.extend(c for c in clauses if _INSTRUCTION.search(c) and not _STATUS_ONLY.match(c))
    return " ".join(c[:1].upper() + c[1:] for c in said)


def lesson_blocks(text: str) -> list[str]:
    """The raw `#lesson … #/lesson` blocks in an assistant message that say a situation and a fix."""
    return [
        raw
        for raw, fields in blocks.lesson_blocks(text)
        if (fields.get("mistake") or fields.get("when")) and (fields.get("fix") or fields.get("do"))
    ]


# What a standing instruction forbids, as the command it would show in: (its words, the program and
# subcommand, the options that make it the forbidden one). "never commit without signing" forbids
# `git commit --no-gpg-sign` and `git -c commit.gpgsign=false commit`, not every commit.
_FORBIDS = (
    (re.compile(r"(?i)\b(?:without|no|skip\w*|bypass\w*|disabl\w*)\s+(?:the\s+)?(?:gpg\s+|commit\s+)?sign"),
     "git commit", r"--no-gpg-sign\b|gpgsign[= ]+false\b"),
    (re.compile(r"(?i)\bforce[- ]?push|\bpush\s+(?:with\s+)?(?:--)?force|\bforce\b[^.]{0,20}\bpush"),
     "git push", r"--force\b|(?<![\w-])-f\b|--force-with-lease\b"),
    (re.compile(r"(?i)--no-verify|\b(?:skip\w*|bypass\w*|without)\s+(?:the\s+)?(?:pre-commit\s+|git\s+)?hooks?\b"),
     "git commit", r"--no-verify\b|(?<![\w-])-n\b"),
    (re.compile(r"(?i)\b(?:never|don'?t|do\s+not|stop)\s+(?:\w+\s+){0,2}amend"), "git commit", r"--amend\b"),
    (re.compile(r"(?i)\breset\s+--hard|\bhard\s+reset"), "git reset", r"--hard\b"),
)
_NEGATED_CODE = re.compile(r"(?i)\b(?:never|don'?t|do\s+not|avoid|stop|no)\s+(?:\w+\s+){0,2}?`([^`\n]{2,60})`")
# Programs named with their subcommand (`git push`, `gh pr`) in a trigger or an instruction.
SUBCOMMAND_TOOLS = ("git", "npm", "pnpm", "yarn", "bun", "cargo", "go", "docker", "kubectl", "pip", "uv", "gh")


def forbidden(said: str) -> tuple[str, str] | None:
    """(program and subcommand, the regex of the options that make the call the forbidden one, or "") of what
    a user's instruction forbids, or None when it names no command."""
    for pattern, head, options in _FORBIDS:
        if pattern.search(said):
            return head, options
    match = _NEGATED_CODE.search(said)
    if match is None:
        return None
    words = match.group(1).split()
    if not re.fullmatch(r"[a-z][\w.-]*", words[0]):
        return None  # `--force` alone, `X.y()`: no command to key on
    plain = [w for w in words[1:] if not w.startswith("-")]
    head = " ".join(words[:1] + plain[:1]) if words[0] in SUBCOMMAND_TOOLS and plain else words[0]
    options = "|".join(re.escape(w.split("=", 1)[0]) + r"\b" for w in words[1:] if w.startswith("-"))
    return head, options
