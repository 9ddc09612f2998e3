"""From transcript events to lesson candidates: self-reported blocks, fixed checks, user corrections. Pure."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from lessonbank.capture.redaction import redact
from lessonbank.matching import words
from lessonbank.scan import outcomes, prose, recurring, shellfail
from lessonbank.scan.events import Candidate, Event
from lessonbank.scan.prose import ACK, CORRECTION, NOT_HUMAN, is_correction, lesson_blocks

MAX_EDITS = 12
MAX_COMMANDS = 6
MAX_OPEN = 30
MAX_TURN_FILES = 40


# ---- detection ---------------------------------------------------------------------------

_INTERRUPT = "[Request interrupted"
_CD_FAILED = re.compile(r"\bcd: [^:]+: No such file or directory")


# `pip install -r requirements-dev.txt`, `uv pip install -r …`, `pip install -e .[dev]` names no file.
_INSTALLS_FROM = re.compile(r"\binstall\b[^|;&]*?(?:-r|--requirement|-c|--constraint)[ =]+['\"]?([^\s'\"]+)")


def _short(text: str, limit: int) -> str:
    text = " ".join(text[: limit * 4].split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


@lru_cache(maxsize=2048)
def _clean(text: str) -> str:
    """Secrets and personal data out (the same paths, projects and commands come back often)."""
    return redact(text)[0]


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
        self.turn_files: list[str] = state.get("turn_files", [])  # names edited or written this turn
        self.masked = 0  # runs whose exit status was hidden, this scan (not persisted)
        self.dropped: dict[str, int] = {}  # episodes that teach nothing, by why (this scan)
        self.recent: list[Candidate] = []  # fixes of this turn, waiting for the agent to say what it did
        self.slip: dict[str, Any] | None = state.get("slip")  # a recurring shell error, waiting for a way round
        # failures of any teachable kind, waiting the same way; each scan ends them (`flush`), so
        # none is kept between scans
        self.watch = recurring.Watch()
        self.succeeded: list[str] = []  # shell calls that succeeded, this scan: what a trigger must stay quiet on

    def state(self) -> dict[str, Any]:
        # What is kept between scans is redacted like the evidence (a command may carry a token).
        episodes = {
            key: {**ep, "note": _clean(ep["note"]), "commands": [_clean(c) for c in ep["commands"]]}
            for key, ep in self.open.items()
        }
        return {
            "session": self.session, "project": self.project, "open": episodes,
            "correction": self.correction, "last_action": _clean(self.last_action),
            "turn_files": self.turn_files,
            "slip": self.slip and {**self.slip, "command": _clean(self.slip["command"]),
                                   "between": [_clean(c) for c in self.slip["between"]]},
        }  # fmt: skip

    @property
    def last_action(self) -> str:
        """What the agent was doing last: the context of a correction."""
        return self._action if self._running is None else f"running `{_short(self._running, 80)}`"

    def wants_result(self, command: str) -> bool:
        """Whether a shell command's result can matter (decided when the call is made, before its output)."""
        # Every result can matter: any failed command may be a recurring shell mistake (shellfail).
        return bool(command)

    @property
    def wants_text(self) -> bool:
        """Whether assistant prose matters right now (a correction waits for a change of course)."""
        return self.correction is not None or bool(self.open) or bool(self.recent) or self.slip is not None

    def drop(self, why: str) -> None:
        self.dropped[why] = self.dropped.get(why, 0) + 1

    def _touched(self, names: list[str]) -> None:
        for name in names:
            base = name.replace("\\", "/").rsplit("/", 1)[-1]
            if base and base not in self.turn_files:
                self.turn_files.append(base)
        del self.turn_files[:-MAX_TURN_FILES]

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
            projects=[_clean(self.project)] if self.project else [],
        )  # fmt: skip

    def _evidence(self, time: str, **extra: Any) -> dict[str, Any]:
        item: dict[str, Any] = {"session": self.session, "time": time, "file": _clean(self.file)}
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
                for fixed in self.recent:  # the fix this turn made, in the agent's own words
                    fixed.evidence[0]["reported"] = True
        if self.correction is not None and ACK.search(ev.text[:400]):
            out.extend(self._course_changed(ev.time, _short(ev.text, 160)))
        if self.open and ev.text.strip():
            note = _short(ev.text, 240)
            score, cause = prose.diagnosis(ev.text)
            left_out = prose.removal(ev.text)
            for ep in self.open.values():
                ep["note"] = note
                if score and score >= ep.get("cause_score", 0):
                    ep["cause_score"], ep["diagnosis"] = score, _clean(cause)
                if left_out:
                    ep["removal"] = left_out
        if self.slip is not None and self.slip["kind"] == "sudo" and shellfail.hands_over(ev.text):
            out.append(self._slip_candidate(self.slip, "(the agent handed the command to the user)"))
            self.slip = None
        if self.recent and ev.text.strip():
            said = prose.fix_sentence(ev.text)
            for cand in self.recent if said else []:
                cand.evidence[0].setdefault("summary", _clean(said))
            if said:
                self.recent = []
        return out

    def _user(self, ev: Event) -> None:
        text = ev.text.strip()
        if not text.startswith(NOT_HUMAN):
            self.turn_files, self.recent, self.slip = [], [], None  # a new turn
        if text.startswith(_INTERRUPT) or not is_correction(text):
            if not text.startswith(NOT_HUMAN) and len(text) <= 600 and CORRECTION.search(text):
                self.drop("not a correction (no instruction)")  # a status report, a one-off fact
            self.correction = None  # an interrupt by itself teaches nothing
            return
        self.correction = {
            "time": ev.time,
            "text": _short(_clean(text), 300),
            "instruction": _short(_clean(prose.instruction(text)), 300),
            "context": _clean(self.last_action),
            "command": _clean(self._running or ""),
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
        cand.evidence = [self._evidence(corr["time"], correction=text, context=context, then=_clean(how))]
        if corr.get("command"):
            cand.evidence[0]["command"] = _short(corr["command"], 300)
        if corr.get("instruction"):
            cand.evidence[0]["instruction"] = corr["instruction"]
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
        if ev.paths and not ev.command:  # an edit: every stream gives one its paths and no command
            self._touched(list(ev.paths))
            for ep in self.open.values():
                for path in map(_clean, ev.paths):
                    if path not in ep["edits"] and len(ep["edits"]) < MAX_EDITS:
                        ep["edits"].append(path)
            self._action, self._running = f"editing {ev.paths[0].replace(chr(92), '/').rsplit('/', 1)[-1]}", None
            return out
        if not ev.command:
            return out
        self._running = ev.command
        check = outcomes.check_of(ev.command)
        if check is not None and check.masked:
            self.masked += 1
        written = outcomes.written_files(ev.command)
        out.extend(self._shell(check, ev))
        if ev.status == "ok" and not outcomes.status_masked(ev.command) and len(self.succeeded) < 4000:
            self.succeeded.append(ev.command)
        if ev.status in ("ok", "fail"):
            out.extend(self._recurring(item) for item in self.watch.feed(ev.command, ev.status, ev.text, ev.time))
        if check is None or check.masked or ev.status == "unknown":
            if self.open and check is None and ev.status == "ok" and outcomes.is_fix_action(ev.command):
                cmd = _short(outcomes.display(ev.command), 160)
                for ep in self.open.values():
                    if cmd not in ep["commands"] and len(ep["commands"]) < MAX_COMMANDS:
                        ep["commands"].append(cmd)
            return out
        if ev.status == "fail":
            out.extend(self._failed(check, ev, written))
        elif ev.status == "ok":
            episode = self.open.get(check.key)
            if episode is not None and self._confirms(check, episode):
                del self.open[check.key]
                out.extend(self._fixed(check, episode, ev))
        self._touched(written)
        return out

    def _shell(self, check: outcomes.Check | None, ev: Event) -> list[Candidate]:
        """A recurring shell error, then a different approach that worked: a plain shell mistake."""
        if ev.status == "fail":
            found = shellfail.classify(ev.text, ev.command)
            kind, named = found or (None, "")  # (kind, what it names)
            if found is not None and not (check is not None and kind == "not-found"):
                line = _clean(next((x for x in outcomes.error_lines(ev.text, 3) if named in x), named))
                self.slip = {"kind": kind, "named": named, "command": ev.command, "time": ev.time,
                             "line": line, "left": shellfail.LOOKAHEAD, "between": [], "first": True}  # fmt: skip
                return []
        slip = self.slip
        if slip is None or ev.status not in ("ok", "fail"):
            return []
        command = ev.command  # redacted when it becomes evidence or state
        if ev.status == "ok" and slip["first"] and shellfail.is_typo(slip["command"], command, slip["named"]):
            self.slip = None
            self.drop("typo fixed on the next call")
            return []
        slip["first"] = False
        confirms = ev.status == "ok" and not outcomes.status_masked(ev.command)
        if confirms and shellfail.different_approach(slip["kind"], slip["named"], slip["command"], command):
            self.slip = None
            return [self._slip_candidate(slip, command)]
        slip["between"].append(command[:800])
        slip["left"] -= 1
        if slip["left"] <= 0:
            self.slip = None
        return []

    def _recurring(self, item: dict[str, Any]) -> Candidate:
        cand = self._base(f"recur|{item['signature']}", 2, "recurring")
        return recurring.candidate(item, cand, self._evidence(str(item["time"])), _clean)

    def flush(self) -> list[Candidate]:
        """The failures still waiting for a way round at the end of what this scan read, as candidates."""
        return [self._recurring(item) for item in self.watch.flush()]

    def _slip_candidate(self, slip: dict[str, Any], passing: str) -> Candidate:
        cand = self._base(f"shell|{slip['kind']}|{slip['named']}", 2, "shell")
        cand.promote_to, cand.tools, cand.tags = "rule:conventions", ["Bash"], ["kind:shell"]
        cand.signals = {"fix_confirmed": 1}
        cand.evidence = [self._evidence(
            slip["time"], failing=_short(_clean(slip["command"]), 300), passing=_short(_clean(passing), 300),
            excerpt=[slip["line"]], commands=[_clean(c) for c in slip["between"][-4:]], shell=slip["kind"],
            named=slip["named"],
        )]  # fmt: skip
        return cand

    def _confirms(self, check: outcomes.Check, ep: dict[str, Any]) -> bool:
        """Whether a passing run checked at least what failed: every check of it, on every target."""
        first = ep["first"]
        if not set(first.get("keys", ())).issubset(check.keys or (check.key,)):
            return False  # `cmake ..` alone does not confirm a failing `cmake .. && make`
        if outcomes.covers(check.targets, first["targets"]):
            return True
        ep["narrower"] = outcomes.names_failing(check.targets, first["excerpt"])  # only what failed, run again
        return ep["narrower"]

    def _failed(self, check: outcomes.Check, ev: Event, written: list[str]) -> list[Candidate]:
        ep = self.open.get(check.key)
        if ep is not None and not outcomes.is_startup_error(ep["first"]["line"]):
            ep["attempts"] += 1  # still failing: the first failure is the one that teaches
            ep["timed_out"] = ep["timed_out"] or ev.timed_out
            return []
        found = outcomes.error_lines(ev.text)
        lines = _clean("\n".join(found)).split("\n") if found else []  # one redaction pass, not one a line
        if ev.timed_out and not any("timed out" in line.lower() for line in lines):
            lines.insert(0, "timed out")
        first = lines[0] if lines else f"exit code {ev.exit_code}"
        if _CD_FAILED.search(first):
            return []  # the shell never reached the check
        if ep is None and self._in_progress(ev.text, first, written):
            self.drop("work in progress")
            return []
        run = {
            "command": _short(_clean(outcomes.display(ev.command)), 200), "time": ev.time, "excerpt": lines,
            "sig": outcomes.signature(first), "line": first, "exit": ev.exit_code,
            "targets": list(check.targets), "keys": list(check.keys),
        }  # fmt: skip
        out: list[Candidate] = []
        if ep is not None:  # it could not even start before; does it now get further?
            ep["attempts"] += 1
            ep["timed_out"] = ep["timed_out"] or ev.timed_out
            if outcomes.is_startup_error(first) or run["sig"] == ep["first"]["sig"]:
                return out
            if self._own_setup(ep):
                self.drop("work in progress")
            elif ep["edits"] or ep["commands"]:
                out.append(self._candidate(check, ep, run, "unblocked"))
        if len(self.open) >= MAX_OPEN and check.key not in self.open:
            self.open.pop(next(iter(self.open)))
        self.open[check.key] = {
            "first": run, "attempts": 1, "edits": [], "commands": [], "note": "",
            "timed_out": ev.timed_out, "category": check.category, "tool": check.tool,
        }  # fmt: skip
        return out

    def _in_progress(self, output: str, first: str, written: list[str]) -> bool:
        """Errors in what the agent was writing this turn: its own work in progress, no lesson."""
        mine = [*self.turn_files, *(w.rsplit("/", 1)[-1] for w in written)]
        if not mine:
            return False
        said = "\n".join(outcomes.error_lines(output, 6))  # the errors, not the files that passed around them
        return any(name in said for name in mine) or bool(outcomes.COMPILE_ERROR.search(first))

    def _own_setup(self, ep: dict[str, Any]) -> bool:
        """The way round was installing from a dependency file the agent wrote this turn: setting up its
        own work (a test suite it just added), not a mistake that comes back."""
        return any(
            m.group(1).replace("\\", "/").rsplit("/", 1)[-1] in self.turn_files
            for c in ep["commands"] for m in _INSTALLS_FROM.finditer(c)
        )  # fmt: skip

    def _fixed(self, check: outcomes.Check, ep: dict[str, Any], ev: Event) -> list[Candidate]:
        passing = {"command": _short(_clean(outcomes.display(ev.command)), 200), "time": ev.time}
        same = " ".join(passing["command"].split()) == " ".join(ep["first"]["command"].split())
        if not ep["edits"] and not ep["commands"] and same:
            return []  # passed again with nothing changed: flaky, or fixed outside the session
        if check.skips or ep.get("removal"):
            self.drop("removed or skipped")  # leaving the failing thing out is not a fix
            return []
        if self._own_setup(ep):
            self.drop("work in progress")
            return []
        cand = self._candidate(check, ep, passing, "fix")
        self.recent.append(cand)
        return [cand]

    def _candidate(
        self, check: outcomes.Check, ep: dict[str, Any], after: dict[str, Any], kind: str
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
        cand.commands = [outcomes.key_regex(check.key)]
        cand.tags = [f"tool:{check.tool}"] + (["severity:hang"] if ep["timed_out"] else [])
        cand.notes = _clean(ep.get("note", ""))
        cand.signals = {"attempts": ep["attempts"]}
        if kind == "fix":
            cand.signals.update({"fix_confirmed": 1, "narrower": 1} if ep.get("narrower") else {"fix_confirmed": 1})
        if ep["timed_out"]:
            cand.signals["hang_or_timeout"] = 1
        item = self._evidence(
            first["time"],
            failing=first["command"],
            excerpt=first["excerpt"],
            edits=ep["edits"][:MAX_EDITS],
            commands=[_clean(c) for c in ep["commands"]],
            attempts=ep["attempts"],
            check=check.key,
            tool=check.tool,
        )
        if ep.get("diagnosis"):
            item["diagnosis"] = ep["diagnosis"]
        # a fix ends in a passing run; an unblocked check in a rerun that got further
        item.update({"passing": after_cmd, "passed_at": after["time"]} if kind == "fix" else
                    {"rerun": after_cmd, "rerun_at": after["time"]})  # fmt: skip
        cand.evidence = [item]
        return cand
