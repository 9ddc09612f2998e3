"""An episode distilled into a lesson, mechanically: the situation, the instruction, the cause's trigger. Pure.

From a candidate's evidence (failing and passing commands, the error, the agent's diagnosis and the
sentence that says what it changed, the user's words) it writes a `when` that names the situation
(the tool, the API, the symptom), a `do` that is an instruction, a short title, triggers on what
causes the mistake (the invocation, never a scratch file name; a negative lookahead when the fix is
a flag), and verify fields groom can check. An episode that yields no instruction is not proposed:
`distill` says why, and the scan counts it.
"""

from __future__ import annotations

import re
import shlex

from lessonbank.bank import names
from lessonbank.matching.words import STOP_WORDS
from lessonbank.scan import failures, outcomes, prose, recurring, shellfail
from lessonbank.scan.events import Candidate
from lessonbank.scan.outcomes import stable_error

_LINK = re.compile(r"\s*\(\[[^\]]*\]\([^)]*\)\)|\[([^\]]*)\]\([^)]*\)")
_PROJECT_FILE = re.compile(
    r"^(?:requirements[\w.-]*\.txt|package\.json|pyproject\.toml|Pipfile|Gemfile|go\.mod|Cargo\.toml|Makefile"
    r"|CMakeLists\.txt|environment\.ya?ml)$"
)
_NOOP_FLAG = re.compile(r"^(?:-j\d*|-v+|--verbose|-q|--quiet|-s|--reporter|--tb|--color|--no-color|-x|--bail)(?:=|$)")
_FILE_NAME = re.compile(r"^[\w./-]+\.(?:c|h|cc|cpp|hpp|cu|py|ts|tsx|js|jsx|tex|md|json|rs|go|java|txt)$")
_FLAG = re.compile(r"^--?[A-Za-z][\w-]*(?:=\S+)?$")
_CONFIG_FILES = {"CMakeLists.txt", "Makefile", "package.json", "tsconfig.json", "pyproject.toml", "setup.cfg",
                 "vitest.config.ts", "vite.config.ts", "jest.config.js", "Cargo.toml", "go.mod"}  # fmt: skip


def _words(command: str) -> list[str]:
    try:
        return shlex.split(command.replace("…", ""))
    except ValueError:
        return command.split()


def fix_flags(failing: str, passing: str) -> list[str]:
    """Flags the passing run added that the failing one lacked (`-interaction=nonstopmode`)."""
    before = {w.split("=", 1)[0] for w in _words(failing) if _FLAG.match(w)}
    return [w for w in dict.fromkeys(_words(passing)) if _FLAG.match(w) and w.split("=", 1)[0] not in before]


def command_trigger(name: str, without: list[str] | None = None) -> str:
    """The regex that matches the invocation making the mistake; without the fix's flag when it is one."""
    regex = outcomes.invocation_regex(name)
    if without:
        ahead = "|".join(re.escape(w.split("=", 1)[0]) for w in without[:2])
        return rf"^(?!.*(?:{ahead})){regex.removeprefix('^')}"
    return regex


def _code_keywords(names: list[str]) -> list[str]:
    """Bare identifiers for prompt keywords: `vi.clearAllMocks()` -> clearAllMocks."""
    out = []
    for name in names:
        ident = re.findall(r"[A-Za-z_][A-Za-z0-9_]{3,}", name)
        if ident and ident[-1].lower() not in out:
            out.append(ident[-1])
    return out[:4]


def _globs(edits: list[str]) -> list[str]:
    """Path triggers from edited files, in general form: `**/*.test.ts`, `**/CMakeLists.txt`."""
    out = []
    for path in edits:
        base = str(path).replace("\\", "/").rsplit("/", 1)[-1]
        parts = base.split(".")
        if base in _CONFIG_FILES:
            glob = f"**/{base}"
        elif len(parts) >= 3 and parts[-2] in ("test", "spec"):
            glob = f"**/*.{parts[-2]}.{parts[-1]}"
        else:
            continue
        if glob not in out:
            out.append(glob)
    return out[:3]


def _title(text: str, limit: int = 58) -> str:  # a slug (60 at most) says all of it
    text = re.sub(r"(?i)^(?:no|nope|wrong|stop|actually)\b[,.!:;]*\s*", "", " ".join(text.split()))
    text = re.split(r"(?<=[a-z0-9`)])(?:\.|:|;)\s+", text, maxsplit=1)[0].rstrip(".")
    text = text[:1].upper() + text[1:]
    text = re.split(r"(?<=\S)\s+(?:so|because|since|which|as)\s+", text, maxsplit=1)[0]
    return names.cut_words(text, limit).rstrip(" ,;:")


def _split_fix(summary: str) -> tuple[list[str], list[str]]:
    """The code a fix sentence replaced and the code it put in ("Switched `a` to `b`")."""
    match = re.search(r"`([^`]+)`\s+(?:to|with|for|by)\s+`([^`]+)`", summary)
    return ([match.group(1)], [match.group(2)]) if match else ([], prose.identifiers(summary))


def distill(cand: Candidate) -> str:
    """Fill the candidate's lesson fields from its evidence; return why it is no lesson ("" when it is one)."""
    if cand.kind in ("fix", "unblocked"):
        why = _check_lesson(cand)
        ev = cand.evidence[0]
        shell_mistake = shellfail.classify("\n".join(ev.get("excerpt") or []), str(ev.get("failing", "")))
        return _for_words(cand) if why in _MODEL_COULD and shell_mistake is None else why
    if cand.kind == "correction":
        return _correction(cand)
    if cand.kind == "shell":
        return _shell(cand)
    if cand.kind == "recurring":
        return _recurring(cand)
    return ""


# A fixed check whose words did not say the lesson: a person or a model reading the evidence can.
_MODEL_COULD = ("no diagnosis or fix said", "the diagnosis says no fix", "no setup step found")


def _for_words(cand: Candidate) -> str:
    """Keep a fixed check whose lesson only a person or a model can write, with its evidence, for review."""
    ev = cand.evidence[0]
    shown = ev.get("check") or cand.key.split("|")[1]
    symptom = stable_error((ev.get("excerpt") or [""])[0]) or "an error"
    cand.title = f"`{shown}` failed, then passed: {symptom}"[:70]
    cand.when = f"`{shown}` fails with: {symptom}"
    cand.do = f"It was fixed in the session, but nothing said how {recurring.NEEDS_WORDS}."
    cand.commands = [command_trigger(str(shown))]
    cand.signals["needs_words"] = 1
    return ""


# Shell mistakes whose general lesson needs no way round from the history: the error says it all.
_GENERAL = ("sudo", "push-behind", "push-protection", "windows-switch", "shell-written-source", "cd-relative",
            "cmake-build-dir")  # fmt: skip


def _recurring(cand: Candidate) -> str:
    """A failure met again: the shell lesson of its kind, the kind's template from the history, or one for review."""
    ev = cand.evidence[0]
    failing, passing, line = str(ev.get("failing", "")), str(ev.get("passing", "")), (ev.get("excerpt") or [""])[0]
    slip = shellfail.classify(line, failing)
    if slip is not None and slip[0] in _GENERAL:
        ev.update(shell=slip[0], named=slip[1], passing=passing)
        _shell(cand)
        cand.signals.pop("fix_confirmed", None)
        if slip[0] == "sudo":  # nothing else can answer the password prompt: the fix is certain
            cand.signals["fix_confirmed"] = 1
        return ""
    if slip is not None and slip[0] == "not-found" and slip[1]:
        return _not_installed(cand, slip[1], failing, passing, [str(c) for c in ev.get("commands") or []])
    found = failures.Failure(str(ev.get("failure")), str(ev.get("program")), line, str(ev.get("signature")))
    written = recurring.lesson(found, failing, passing, [str(c) for c in ev.get("commands") or []], str(ev.get("hint", "")))
    if written is None:
        return "no template for this kind of failure"
    cand.title, cand.when, cand.do = written.title, written.when, written.do
    cand.commands, cand.keywords = written.commands, written.keywords
    cand.promote_to = "rule:conventions"
    cand.signals.update({"fix_confirmed": 1} if written.confirmed else {})
    cand.signals.update({"written": 1} if written.written else {"needs_words": 1})
    return ""


def _not_installed(cand: Candidate, named: str, failing: str, passing: str, installs: list[str]) -> str:
    """A tool not found in several sessions: install it first when the history shows how, else do not call it."""
    cand.key, cand.promote_to, cand.keywords = f"notfound|{named}", "rule:conventions", [named.lower()]
    cand.commands = [shellfail.tool_trigger(named)]
    cand.title = f"{named} is not installed here"
    cand.when = f"running `{named}` in this environment: `{named}: command not found`"
    setup = next((c for c in installs if shellfail.installs(c, named)), "")
    if passing and setup:
        cand.do = f"Install it first with `{setup}` (a new environment does not have it), then run `{named}`."
        cand.signals["fix_confirmed"] = 1
    else:
        cand.do = f"Do not call `{named}` here: it is not installed. Use another tool, or ask the user to install it."
    cand.signals["written"] = 1
    cand.verify = {"match": [rf"\b{re.escape(named)}\b"]}
    return ""


def _shell(cand: Candidate) -> str:
    ev = cand.evidence[0]
    kind, named = ev.get("shell", ""), ev.get("named", "")
    lesson_kind = shellfail.LESSON.get(kind, kind)
    title, when, do, trigger = shellfail.lesson(kind, named, ev["failing"], ev["passing"], ev.get("commands") or [])
    if lesson_kind == "cd-relative" and ev.get("excerpt"):
        when += f" (`{stable_error(ev['excerpt'][0])}`)"
    cand.title, cand.when, cand.do, cand.commands = title, when, do, [trigger]
    keywords = {"not-found": [named.lower()], "push-behind": ["push"], "push-protection": ["push", "secret"],
                "shell-written-source": ["printf", "echo", "heredoc"], "sudo": ["sudo"],
                "windows-switch": ["windows", "cmd"]}  # fmt: skip
    cand.keywords = keywords.get(kind, [])
    cand.key = f"notfound|{named}" if kind == "not-found" else f"shell|{kind}|{named}"
    cand.signals["written"] = 1
    if kind != "not-found":
        cand.key = f"shell|{lesson_kind}"  # the same lesson whatever folder or branch it met
    # what keeps the lesson relevant, where the evidence names it: the tool, or the sources it is about
    cand.verify = {
        "not-found": {"match": [rf"\b{re.escape(named)}\b"]} if named else {},
        "shell-written-source": {"glob": ["**/*.c", "**/*.h", "**/*.cu", "**/*.cpp"], "match": ["#include"]},
    }.get(kind, {})
    return ""


def _check_lesson(cand: Candidate) -> str:
    ev = cand.evidence[0]
    if ev.get("reported"):
        return "already in the agent's #lesson block"
    name = ev.get("check") or cand.key.split("|")[1]
    tool = ev.get("tool") or name.split()[0]
    runner = outcomes.check_of(ev.get("failing", ""))
    shown = runner.name if runner is not None else tool
    excerpt = ev.get("excerpt") or [""]
    symptom = stable_error(excerpt[0])
    after = ev.get("passing") or ev.get("rerun") or ""
    flags = fix_flags(ev.get("failing", ""), after)
    summary, diagnosis = ev.get("summary", ""), ev.get("diagnosis", "")
    commands = ev.get("commands") or []
    missing = re.search(r"(?:^|\s)([\w.+-]+): command not found|No module named '?([\w.]+)", excerpt[0])
    summary = _LINK.sub(lambda m: m.group(1) or "", summary)
    if summary and ("**" in summary or all(_FILE_NAME.match(n) for n in prose.identifiers(summary))):
        summary = ""  # a status line ("Fixed compilation issues"), or about the project's own files only
    if cand.kind == "unblocked" or missing:
        setup = commands[0] if commands else ""
        if missing and not setup:
            setup = next((w for w in _words(after) if "/" in w and w.endswith("/" + (missing.group(1) or ""))), "")
            setup = setup or next((w for w in after.split(" && ") if w.startswith("export PATH=")), "")
        if not setup:
            return "no setup step found"
        what = (missing.group(1) or missing.group(2)) if missing else tool
        folder = setup.rsplit("/", 1)[0] if setup.startswith("/") else ""
        if setup.startswith("export PATH="):
            folder = setup.removeprefix("export PATH=").split(":", 1)[0]
        cand.keywords = [what.lower()]
        cand.verify = {}
        if folder:
            cand.when = f"running `{what}`: it is not on PATH in this environment ({symptom})"
            cand.do = f"Call `{what}` as `{folder}/{what}`, or run `export PATH={folder}:$PATH` first."
            cand.title = f"{what} is not on PATH: use {folder}/{what}"
            cand.commands = [rf"^(?!.*{re.escape(folder)}).*\b{re.escape(what)}\b"]
            cand.verify = {"match": [rf"\b{re.escape(what)}\b"]}  # relevant while the project still uses the tool
            cand.key = f"notfound|{what}"
            return ""
        cand.when = f"running `{shown}` before `{what}` is installed ({symptom})"
        named = [w for w in _words(setup) if _PROJECT_FILE.match(w.rsplit("/", 1)[-1])]
        cand.verify = {"paths": named[:2]} if named else {}
        cand.do = f"Run `{setup}` first."
        cand.title = f"Install {what} before running {shown}"
        cand.commands = [command_trigger(shown)]
        cand.key = f"setup|{what}|{setup}"
        return ""
    flags = [f for f in flags if not _NOOP_FLAG.match(f)]
    if len(flags) > 2 or shown.split()[0] not in ev.get("failing", ""):
        flags = []  # a changed invocation, not one flag the fix added
    named = prose.identifiers(diagnosis)
    if not summary and named and all(_FILE_NAME.match(n) for n in named):
        return "about the project's own files"
    if not summary and not diagnosis and not flags:
        return "no diagnosis or fix said"
    old, new = _split_fix(summary)
    said = prose.identifiers(diagnosis)
    cause = re.split(r",\s+so\s+", prose.strip_lead(diagnosis))[0] if diagnosis else ""
    symptom = next((stable_error(x) for x in excerpt if re.search(r"\w+Error\b|error:", x)), symptom)
    if summary:
        do = prose.imperative(summary)
    elif flags:
        do = f"Run `{shown}` with `{' '.join(flags)}`."
    else:
        fix = re.search(r"(?i)\b(?:i'?m|i am|i'?ll|let me)\s+(\w+ing|\w+)\s+([^.]{8,160})", diagnosis)
        if not fix:
            return "the diagnosis says no fix"
        do = prose.imperative(f"{fix.group(1).removesuffix('ing')}ed {fix.group(2)}")
    cand.do = do
    cand.when = f"{cause} (`{shown}` fails: {symptom})" if cause else f"`{shown}` fails with: {symptom}"
    cand.title = _title(do)
    cand.commands = [command_trigger(shown, flags if not summary and flags else None)]
    cand.keywords = _code_keywords([*said, *new])
    cand.paths = _globs(ev.get("edits") or [])
    keep = [n for n in [*said, *new] if n not in old]
    pattern = [re.escape(re.sub(r"\(.*\)$", "", n)) for n in keep if re.fullmatch(r"[\w.]+(?:\(\))?", n)]
    cand.verify = {"match": pattern[:2]} if pattern else {}
    meaning = sorted(_code_keywords([*said, *old, *new])) or [re.sub(r"\W+", "-", symptom.lower())[:60]]
    cand.key = f"fix|{tool}|{','.join(meaning)}"
    return ""


def _correction(cand: Candidate) -> str:
    ev = cand.evidence[0]
    said = ev.get("instruction") or ev.get("correction", "")
    if not said:
        return "no instruction"
    command = ev.get("command", "")
    check = outcomes.check_of(command) if command else None
    words = _words(outcomes.display(command))[:2] if command else []
    words = words if words and re.fullmatch(r"[\w.-]+", words[0]) else []
    head = " ".join(words[:2]) if words and words[0] in prose.SUBCOMMAND_TOOLS else (words[0] if words else "")
    if check is not None:
        head = check.name
    if head and not any(w.lower() in said.lower() for w in head.split()[-1:]):
        head = ""  # the user spoke of something else than the call they interrupted: no trigger on it
    forbids = prose.forbidden(said)
    if forbids is not None:  # the trigger is the command the user forbade, not every use of the tool
        head, options = forbids
        regex = outcomes.invocation_regex(head)
        cand.commands = [rf"^(?=.*(?:{options})){regex.removeprefix('^')}" if options else regex]
        cand.when = f"running `{head}`{' with ' + _shown(options) if options else ''} (the user forbade this)"
        cand.key = f"correction|{head}|{' '.join(sorted(set(said.lower().split())))[:120]}"
    elif head:
        cand.when = f"running `{head}` (the user corrected this)"
        cand.commands = [outcomes.invocation_regex(head)]
        cand.key = f"correction|{head}|{' '.join(sorted(set(said.lower().split())))[:120]}"
    elif str(ev.get("context", "")).startswith("editing ") and ev["context"][8:].strip() in said:
        name = ev["context"].removeprefix("editing ").strip()
        cand.when = f"editing `{name}` (the user corrected this)"
        cand.paths = [f"**/{name}"]
        cand.key = f"correction|{name}|{' '.join(sorted(set(said.lower().split())))[:120]}"
    else:
        cand.when = "working on this project (a standing instruction from the user)"
    said = re.sub(r"([.!?]\s+)([a-z])", lambda m: m.group(1) + m.group(2).upper(), said)  # as sentences
    cand.do = said[:1].upper() + said[1:]
    cand.title = _title(cand.do)
    # the project's own name is in every prompt there: no keyword
    home = " ".join(re.split(r"[/\\._-]+", " ".join(cand.projects).lower()))
    words = [w for w in re.findall(r"[a-z][\w-]{3,}", said.lower()) if w not in _COMMON and w not in home.split()]
    cand.keywords = list(dict.fromkeys(words))[:3]
    return ""


def _shown(options: str) -> str:
    """`--no-gpg-sign\\b|gpgsign[= ]+false\\b` as a reader sees it: `--no-gpg-sign` or `gpgsign=false`."""
    names = [re.sub(r"\\b|\(\?<!\[\\w-\]\)|\\", "", o).replace("[= ]+", "=") for o in options.split("|")]
    return " or ".join(f"`{n}`" for n in names[:3])


_COMMON = STOP_WORDS | frozenset(
    "instead never always dont don't aren't isn't aren isn update status bit whole ourselves properly "
    "scratch roll have implement implements implemented".split()
)
