"""From transcript events to lesson candidates: self-reported blocks, fixed checks, user corrections. Pure."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from lessonbank.capture import blocks
from lessonbank.capture.draft import Draft
from lessonbank.capture.redaction import redact
from lessonbank.kernel import words
from lessonbank.scan import outcomes as mining

MAX_EDITS = 12
MAX_COMMANDS = 6
MAX_OPEN = 30


@dataclass(slots=True)
class Event:
    """One normalized thing that happened in a session: a user or assistant message, or a tool run."""

    kind: str  # user | assistant | tool
    time: str = ""
    text: str = ""  # the message, or the tool's output
    tool: str = ""  # tool name (tool events)
    command: str = ""  # the shell command (shell tool events)
    paths: tuple[str, ...] = ()  # files an edit touched
    status: str = "ok"  # ok | fail | denied | rejected | interrupted | invalid | unknown
    exit_code: int | None = None
    timed_out: bool = False


@dataclass(kw_only=True)
class Candidate(Draft):
    """A lesson the scan proposes: a draft plus the evidence behind it and its score.

    The score is the draft's own confidence and priority, so accepting a candidate captures it as
    it stands, with a session and the body `scan.candidates.body` writes.
    """

    key: str
    tier: int  # 1: self-reported #lesson block, 2: heuristic
    kind: str  # lesson | fix | unblocked | correction
    source: str = "scanned"
    block: str = ""  # the raw #lesson block (tier 1)
    notes: str = ""  # what the agent said about it (redacted)
    sessions: list[str] = field(default_factory=list)
    projects: list[str] = field(default_factory=list)
    signals: dict[str, int] = field(default_factory=dict)
    evidence: list[dict[str, Any]] = field(default_factory=list)
    confidence: float = 0.0
    priority: int = 5
    status: str = "pending"  # pending | accepted | rejected
    lesson: str = ""  # the slug it became
    captured: list[str] = field(default_factory=list)  # sessions already counted in the bank

    def to_dict(self) -> dict[str, Any]:
        """The candidate as one line of candidates.jsonl: every field but those in NOT_STORED."""
        data = asdict(self)
        for name in NOT_STORED:
            del data[name]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Candidate:
        known = {f.name for f in fields(cls)} - set(NOT_STORED)
        return cls(**{k: v for k, v in data.items() if k in known})


# Draft fields candidates.jsonl does not keep: a scan leaves them empty, or "scanned" (source);
# the body is written when a candidate is accepted.
NOT_STORED = ("title", "paths", "keywords", "session", "body", "verify", "source")


# ---- detection ---------------------------------------------------------------------------

_CORRECTION = re.compile(
    r"(?ix)^\W*(?:no\b(?![,\s]+(?:problem|worries|thanks|rush|need|hurry))|nope\b|wrong\b|stop\b"
    r"|don'?t\b|do\s+not\b|never\b|not\s+that\b|that'?s\s+not\b"
    r"|thats\s+not\b|that\s+is\s+not\b|this\s+is\s+not\b|actually\b|instead\b|undo\b|revert\b"
    r"|why\s+did\s+you\b|why\s+are\s+you\b|i\s+said\b|i\s+told\s+you\b|you\s+didn'?t\b"
    r"|you\s+did\s+not\b|you\s+forgot\b|you\s+missed\b|you\s+broke\b|it'?s\s+not\b|its\s+not\b)"
    r"|\b(?:that'?s\s+wrong|is\s+wrong|hall?ucinat\w*|not\s+what\s+i\s+(?:asked|wanted|meant)"
    r"|you\s+should(?:\s+have|n'?t)|should\s+not\s+have|we\s+aren'?t\s+to|we\s+are\s+not\s+to"
    r"|(?:don'?t|do\s+not|never)\s+(?:use|run|commit|push|touch|edit|change|add|delete|remove))\b"
)
_ACK = re.compile(
    r"(?i)\b(?:you'?re\s+(?:absolutely\s+)?right|you\s+are\s+(?:absolutely\s+)?right|my\s+mistake"
    r"|i\s+apologi[sz]e|apologies|sorry|good\s+catch|you'?re\s+correct|understood|got\s+it"
    r"|let\s+me\s+(?:fix|correct|redo|revert|undo)|i'?ll\s+(?:fix|correct|revert|undo))\b"
)
_NOT_HUMAN = ("<command-", "<local-command", "<task-notification", "This session is being continued",
              "Caveat:", "<system-reminder>", "<user-prompt-submit-hook>", "[Request interrupted")  # fmt: skip
_INTERRUPT = "[Request interrupted"
_CD_FAILED = re.compile(r"\bcd: [^:]+: No such file or directory")
_EDIT_TOOLS = {"Edit", "Write", "MultiEdit", "NotebookEdit", "apply_patch", "str_replace_based_edit_tool"}


def _short(text: str, limit: int) -> str:
    text = " ".join(text[: limit * 4].split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _clean(text: str) -> str:
    return redact(text)[0]


def _regex_for(key: str) -> str:
    """A trigger regex matching a check's key words in order, e.g. `\\bpnpm\\b.*\\btest\\b`."""
    return r".*".join(rf"\b{re.escape(w)}\b" if re.match(r"\w", w) else re.escape(w) for w in key.split())


def lesson_blocks(text: str) -> list[str]:
    """The raw `#lesson … #/lesson` blocks in an assistant message that say a situation and a fix."""
    return [
        raw
        for raw, fields in blocks.lesson_blocks(text)
        if (fields.get("mistake") or fields.get("when")) and (fields.get("fix") or fields.get("do"))
    ]


def is_correction(text: str) -> bool:
    """Whether a user message reads as correcting the agent (short, human, a correcting phrase)."""
    stripped = text.strip()
    if not stripped or len(stripped) > 600 or stripped.startswith(_NOT_HUMAN) or stripped.count("\n") > 8:
        return False
    return bool(_CORRECTION.search(stripped))


class Detector:
    """Reads one session's events in order and yields candidates; its state survives between scans."""

    def __init__(self, file: str = "", state: dict[str, Any] | None = None) -> None:
        state = state or {}
        self.file = file
        self.session: str = state.get("session", "")
        self.project: str = state.get("project", "")
        self.open: dict[str, dict[str, Any]] = state.get("open", {})
        self.correction: dict[str, Any] | None = state.get("correction")
        self._action: str = state.get("last_action", "")
        self._running: str | None = None  # the last command run, put in words only when asked
        self.masked = 0  # runs whose exit status was hidden, this scan (not persisted)

    def state(self) -> dict[str, Any]:
        # What is kept between scans is redacted like the evidence (a command may carry a token).
        episodes = {
            key: {**ep, "note": _clean(ep["note"]), "commands": [_clean(c) for c in ep["commands"]]}
            for key, ep in self.open.items()
        }
        return {
            "session": self.session, "project": self.project, "open": episodes,
            "correction": self.correction, "last_action": _clean(self.last_action),
        }  # fmt: skip

    @property
    def last_action(self) -> str:
        """What the agent was doing last: the context of a correction."""
        return self._action if self._running is None else f"running `{_short(self._running, 80)}`"

    def wants_result(self, command: str) -> bool:
        """Whether a shell command's result can matter (decided when the call is made, before its output)."""
        if mining.check_of(command) is not None or self.correction is not None:
            return True
        return bool(self.open) and mining.is_fix_action(command)

    @property
    def wants_text(self) -> bool:
        """Whether assistant prose matters right now (a correction waits for a change of course)."""
        return self.correction is not None or bool(self.open)

    def feed(self, ev: Event) -> list[Candidate]:
        if ev.kind == "assistant":
            return self._assistant(ev)
        if ev.kind == "user":
            self._user(ev)
            return []
        return self._tool(ev)

    def _base(self, key: str, tier: int, kind: str) -> Candidate:
        return Candidate(
            key=key, tier=tier, kind=kind,
            sessions=[self.session] if self.session else [],
            projects=[self.project] if self.project else [],
        )  # fmt: skip

    def _evidence(self, time: str, **extra: Any) -> dict[str, Any]:
        item: dict[str, Any] = {"session": self.session, "time": time, "file": self.file}
        item.update(extra)
        return item

    # assistant prose: #lesson blocks, acknowledgements, the agent's diagnosis
    def _assistant(self, ev: Event) -> list[Candidate]:
        out = []
        if "#lesson" in ev.text:
            for block in lesson_blocks(ev.text):
                block = _clean(block)
                terms = " ".join(sorted(words.terms(block)))[:200]
                cand = self._base(f"lesson|{terms}", 1, "lesson")
                cand.block = block
                cand.signals = {"self_reported": 1}
                cand.evidence = [self._evidence(ev.time, excerpt=[_short(block, 300)])]
                out.append(cand)
        if self.correction is not None and _ACK.search(ev.text[:400]):
            out.extend(self._course_changed(ev.time, _short(ev.text, 160)))
        if self.open and ev.text.strip():
            note = _short(ev.text, 240)
            for ep in self.open.values():
                ep["note"] = note
        return out

    def _user(self, ev: Event) -> None:
        text = ev.text.strip()
        if text.startswith(_INTERRUPT) or not is_correction(text):
            self.correction = None  # an interrupt by itself teaches nothing
            return
        self.correction = {
            "time": ev.time,
            "text": _short(_clean(text), 300),
            "context": _clean(self.last_action),
        }

    def _course_changed(self, time: str, how: str) -> list[Candidate]:
        corr, self.correction = self.correction, None
        if corr is None:
            return []
        text = corr["text"]
        terms = " ".join(sorted(words.terms(text)))[:200]
        if not terms:
            return []
        cand = self._base(f"correction|{terms}", 2, "correction")
        context = corr.get("context") or "working on this project"
        cand.when = f"{context} (the user had to correct this)"
        cand.do = text
        cand.type = "convention"
        cand.promote_to = "rule:conventions"
        cand.tags = ["kind:correction"]
        cand.signals = {"user_correction": 1}
        cand.evidence = [self._evidence(corr["time"], correction=text, context=context, then=how)]
        return [cand]

    # tool runs: checks failing and passing, the edits and commands between them
    def _tool(self, ev: Event) -> list[Candidate]:
        if ev.status in ("denied", "rejected", "interrupted", "invalid"):
            # The harness or the person stopped this call: no mistake, and not a change of course.
            if ev.status in ("rejected", "interrupted"):
                self.correction = None
            return []
        out: list[Candidate] = []
        if self.correction is not None and ev.status != "unknown":
            out.extend(self._course_changed(ev.time, _short(ev.command or ", ".join(ev.paths), 160)))
        if ev.tool in _EDIT_TOOLS or (ev.paths and not ev.command):
            for ep in self.open.values():
                for path in ev.paths:
                    if path not in ep["edits"] and len(ep["edits"]) < MAX_EDITS:
                        ep["edits"].append(path)
            if ev.paths:
                self._action, self._running = (
                    f"editing {ev.paths[0].replace(chr(92), '/').rsplit('/', 1)[-1]}",
                    None,
                )
            return out
        if not ev.command:
            return out
        self._running = ev.command
        check = mining.check_of(ev.command)
        if check is not None and check.masked:
            self.masked += 1
        if check is None or check.masked or ev.status == "unknown":
            if self.open and check is None and ev.status == "ok" and mining.is_fix_action(ev.command):
                cmd = _short(mining.display(ev.command), 160)
                for ep in self.open.values():
                    if cmd not in ep["commands"] and len(ep["commands"]) < MAX_COMMANDS:
                        ep["commands"].append(cmd)
            return out
        if ev.status == "fail":
            out.extend(self._failed(check, ev))
        elif ev.status == "ok":
            episode = self.open.get(check.key)
            if episode is not None and mining.covers(check.targets, episode["first"]["targets"]):
                del self.open[check.key]
                out.extend(self._fixed(check, episode, ev))
        return out

    def _failed(self, check: mining.Check, ev: Event) -> list[Candidate]:
        ep = self.open.get(check.key)
        if ep is not None and not mining.is_startup_error(ep["first"]["line"]):
            ep["attempts"] += 1  # still failing: the first failure is the one that teaches
            ep["timed_out"] = ep["timed_out"] or ev.timed_out
            return []
        lines = [_clean(line) for line in mining.error_lines(ev.text)]
        if ev.timed_out and not any("timed out" in line.lower() for line in lines):
            lines.insert(0, "timed out")
        first = lines[0] if lines else f"exit code {ev.exit_code}"
        if _CD_FAILED.search(first):
            return []  # the shell never reached the check
        run = {
            "command": _short(_clean(mining.display(ev.command)), 200), "time": ev.time, "excerpt": lines,
            "sig": mining.signature(first), "line": first, "exit": ev.exit_code,
            "targets": list(check.targets),
        }  # fmt: skip
        out: list[Candidate] = []
        if ep is not None:  # it could not even start before; does it now get further?
            ep["attempts"] += 1
            ep["timed_out"] = ep["timed_out"] or ev.timed_out
            if mining.is_startup_error(first) or run["sig"] == ep["first"]["sig"]:
                return out
            if ep["edits"] or ep["commands"]:
                out.append(self._candidate(check, ep, run, "unblocked"))
        if len(self.open) >= MAX_OPEN and check.key not in self.open:
            self.open.pop(next(iter(self.open)))
        self.open[check.key] = {
            "first": run, "attempts": 1, "edits": [], "commands": [], "note": "",
            "timed_out": ev.timed_out, "category": check.category, "tool": check.tool,
        }  # fmt: skip
        return out

    def _fixed(self, check: mining.Check, ep: dict[str, Any], ev: Event) -> list[Candidate]:
        passing = {"command": _short(_clean(mining.display(ev.command)), 200), "time": ev.time}
        same = " ".join(passing["command"].split()) == " ".join(ep["first"]["command"].split())
        if not ep["edits"] and not ep["commands"] and same:
            return []  # passed again with nothing changed: flaky, or fixed outside the session
        return [self._candidate(check, ep, passing, "fix")]

    def _candidate(
        self, check: mining.Check, ep: dict[str, Any], after: dict[str, Any], kind: str
    ) -> Candidate:
        first = ep["first"]
        cand = self._base(f"{kind}|{check.key}|{first['sig']}", 2, kind)
        cand.when = f"`{check.key}` fails with: {first['line']}"
        did = []
        if ep["commands"]:
            did.append("ran " + "; ".join(f"`{_clean(c)}`" for c in ep["commands"][:2]))
        if ep["edits"]:
            names = sorted({p.replace("\\", "/").rsplit("/", 1)[-1] for p in ep["edits"]})
            did.append("changed " + ", ".join(names[:4]))
        after_cmd = after["command"]
        if kind == "fix":
            did.append(f"then `{after_cmd}` passed")
        else:
            did.append(f"then `{after_cmd}` got past that error")
        cand.do = "What fixed it: " + ", ".join(did) + "."
        cand.promote_to = check.destination
        cand.tools = ["Bash"]
        cand.commands = [_regex_for(check.key)]
        cand.tags = [f"tool:{check.tool}"] + (["severity:hang"] if ep["timed_out"] else [])
        cand.notes = _clean(ep.get("note", ""))
        cand.signals = {"attempts": ep["attempts"]}
        if kind == "fix":
            cand.signals["fix_confirmed"] = 1
        if ep["timed_out"]:
            cand.signals["hang_or_timeout"] = 1
        item = self._evidence(
            first["time"],
            failing=first["command"],
            excerpt=first["excerpt"],
            edits=ep["edits"][:MAX_EDITS],
            commands=[_clean(c) for c in ep["commands"]],
            attempts=ep["attempts"],
        )
        # a fix ends in a passing run; an unblocked check in a rerun that got further
        item.update({"passing": after_cmd, "passed_at": after["time"]} if kind == "fix" else
                    {"rerun": after_cmd, "rerun_at": after["time"]})  # fmt: skip
        cand.evidence = [item]
        return cand
