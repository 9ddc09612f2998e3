"""`bank rules`: one source (rules/*.md) reaching every agent in its own form: CLAUDE.md and
.claude/rules/, AGENTS.md, GEMINI.md, Copilot's instructions, Cursor.

A rule is scoped when every lesson section in it says where it applies (its `**Applies to:**`
line, written from the lesson's `triggers.paths`): the union of those globs (`rule_globs`). Claude Code imports each unscoped rule from a managed block of
CLAUDE.md (`@rules/<name>.md`) and reads a scoped one from `.claude/rules/<name>.md`, whose `paths:`
frontmatter loads it only for a matching file. AGENTS.md cannot import files, and agents reading it
do not follow links, so its block holds a copy of every rule file; GEMINI.md (or Gemini's
`context.fileName`) gets the same copy where the project uses Gemini. Copilot's
.github/copilot-instructions.md gets the copies of the unscoped rules and
`.github/instructions/<name>.instructions.md` (`applyTo`) the scoped ones, where the project uses
Copilot. Cursor gets one `.cursor/rules/<name>.mdc` per rule file when asked (`globs` and
`alwaysApply: false` when scoped). A generated file that no rule wants any more (its rule gone, or
no longer scoped) is deleted; nothing outside a managed block or our own files is ever changed. It
imports `bank.store`, `markers`, `matching.agent_tools` (the hook files that say a project uses
Copilot or Gemini) and `errors`; `apply` also runs it after every groom.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

from lessonbank.bank.store import Bank, remove, write_atomic
from lessonbank.errors import BankError
from lessonbank.groom.markers import MARK_RE, break_markers, sections, shift_headings
from lessonbank.matching import agent_tools

BLOCK_BEGIN = "<!-- lessonbank:rules:begin -->"
BLOCK_END = "<!-- lessonbank:rules:end -->"
_BLOCK_RE = re.compile(r"<!--\s*lessonbank\s*:\s*rules\s*:\s*(begin|end)\s*-->", re.IGNORECASE)
_MDC_MARK = "<!-- lessonbank:rules generated from {rel} by `bank rules`; edit that file instead. -->"
CLAUDE_RULES = ".claude/rules"
COPILOT_RULES = ".github/instructions"
_IMPORTS_AGENTS = re.compile(r"^\s*@(?:\./)?AGENTS\.md\s*$", re.MULTILINE)


def _read(bank: Bank, path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise BankError(
            f"{bank.relative(path)} cannot be read as UTF-8 text ({exc.__class__.__name__})"
        ) from None


def rule_files(bank: Bank) -> list[Path]:
    """rules/*.md, sorted by name."""
    folder = bank.root / "rules"
    return sorted(p for p in folder.glob("*.md") if p.is_file()) if folder.is_dir() else []


def replace_block(text: str | None, inner: str, where: str) -> str:
    """`text` with its managed block's inside set to `inner`; the block is appended when missing."""
    block = f"{BLOCK_BEGIN}\n{inner.rstrip(chr(10))}\n{BLOCK_END}\n"
    if text is None or not text.strip():
        return block
    marks = list(_BLOCK_RE.finditer(text))
    kinds = [m.group(1).lower() for m in marks]
    if not marks:
        return text.rstrip("\n") + "\n\n" + block
    if kinds != ["begin", "end"]:
        raise BankError(f"{where}: the lessonbank rules block markers are broken; fix them by hand")
    start = text.rfind("\n", 0, marks[0].start()) + 1
    nl = text.find("\n", marks[1].end())
    end = len(text) if nl < 0 else nl + 1
    return text[:start] + block + text[end:]


def strip_sections(text: str) -> str:
    """A rule file's text without the per-lesson marker lines, for copies shown to agents."""
    lines = [ln for ln in text.splitlines() if not MARK_RE.fullmatch(ln.strip())]
    return "\n".join(lines).strip("\n")


NO_RULES = "<!-- No rules yet: `bank groom` promotes lessons seen in two sessions. -->"


def claude_block(rels: list[str], imports_agents: bool, scoped: str = "") -> str:
    """The inside of CLAUDE.md's block: one import line per unscoped rule file (`scoped`: where the others are)."""
    head = "<!-- Managed by `bank rules` from rules/*.md: edit those files, not this block. -->"
    if imports_agents:
        return head + "\n<!-- The rules reach Claude through @AGENTS.md, which holds a copy of them. -->"
    lines = [head]
    if scoped:
        lines.append(f"<!-- Rules scoped to paths are in {scoped}/: Claude loads each for a matching file. -->")
    elif not rels:
        lines.append(NO_RULES)
    return "\n".join(lines + [f"@{rel}" for rel in rels])


def agents_block(bank: Bank, files: list[Path], why: str = "AGENTS.md cannot import files", scoped: str = "") -> str:
    """The inside of AGENTS.md's block (and GEMINI.md's, Copilot's): each rule file copied,
    headings pushed down one level (`scoped`: where the rules scoped to paths are instead)."""
    head = f"<!-- Managed by `bank rules`: a copy of rules/*.md ({why}). Edit those files, not this block. -->"
    parts = [head]
    if scoped:
        parts.append(f"<!-- Rules scoped to paths are in {scoped}/. -->")
    elif not files:
        parts.append(NO_RULES)
    for path in files:
        body = break_markers(shift_headings(strip_sections(_read(bank, path)), 1))
        parts.append(f"<!-- from {bank.relative(path)} -->\n{body}")
    return "\n\n".join(parts)


def mdc_text(bank: Bank, path: Path, globs: list[str] | None = None) -> str:
    """A Cursor rule (.mdc) holding a copy of one rule file: for the files `globs` match, else every request."""
    description = f"Project rules ({path.stem}) promoted by lessonbank from lessons seen in two sessions"
    scope = f"globs: {','.join(globs)}\nalwaysApply: false" if globs else "globs:\nalwaysApply: true"
    return f"---\ndescription: {description}\n{scope}\n---\n\n{generated_body(bank, path)}"


def generated_body(bank: Bank, path: Path) -> str:
    """What a file generated from one rule file holds below its frontmatter: our mark, then the rule's text."""
    return f"{_MDC_MARK.format(rel=bank.relative(path))}\n\n{strip_sections(_read(bank, path))}\n"


def claude_rule_text(bank: Bank, path: Path, globs: list[str]) -> str:
    """`.claude/rules/<name>.md`: the rule, loaded by Claude Code for the files its `paths:` match."""
    listed = "".join(f"  - {json.dumps(glob)}\n" for glob in globs)
    return f"---\npaths:\n{listed}---\n\n{generated_body(bank, path)}"


def copilot_rule_text(bank: Bank, path: Path, globs: list[str]) -> str:
    """`.github/instructions/<name>.instructions.md`: the rule, applied by Copilot to the files `applyTo` matches."""
    return f"---\napplyTo: {json.dumps(','.join(globs))}\n---\n\n{generated_body(bank, path)}"


def expand_braces(glob: str) -> list[str]:
    """A glob's `{a,b}` alternatives spelled out (`src/{a,b}.py` -> `src/a.py`, `src/b.py`): agents
    that list globs with commas cannot tell those commas apart."""
    start = glob.find("{")
    end = glob.find("}", start)
    if start < 0 or end < 0 or "{" in glob[start + 1 : end]:
        return [glob]
    head, tail = glob[:start], glob[end + 1 :]
    return [out for part in glob[start + 1 : end].split(",") for out in expand_braces(head + part + tail)]


def agent_glob(glob: str) -> str:
    """A lesson's path glob as the agents read theirs: one without `/` matches the file name at any
    depth for lessonbank, so it gets a `**/` in front."""
    return glob if "/" in glob else "**/" + glob


APPLIES_TO = "**Applies to:**"
_GLOB_RE = re.compile(r"`([^`]+)`")


def section_globs(section: str) -> list[str]:
    """The globs of a section's `**Applies to:**` line (each in backticks; rule.md.j2 writes it from
    the lesson's `triggers.paths`), or [] when it has none."""
    for line in section.splitlines():
        if line.startswith(APPLIES_TO):
            return _GLOB_RE.findall(line[len(APPLIES_TO) :])
    return []


def rule_globs(bank: Bank, path: Path) -> list[str]:
    """A rule file's globs as the agents read them, sorted, when every lesson section in it has an
    `**Applies to:**` line; [] (always loaded) otherwise: no section, one without it, or broken markers."""
    text = _read(bank, path)
    try:
        spans = list(sections(text, bank.relative(path)).values())
    except BankError:
        return []
    found = [section_globs(text[start:end]) for start, end in spans]
    if not found or not all(found):
        return []
    return sorted({agent_glob(g) for globs in found for glob in globs for g in expand_braces(glob)})


def sync(bank: Bank, cursor: bool | None = None, dry_run: bool = False) -> list[tuple[str, str]]:
    """Bring CLAUDE.md, .claude/rules, AGENTS.md and the other agents' files in line with rules/*.md."""
    files = rule_files(bank)
    globs = {path: rule_globs(bank, path) for path in files}
    unscoped = [p for p in files if not globs[p]]
    scoped = {p: globs[p] for p in files if globs[p]}
    use_cursor = bool(bank.config.get("groom.cursor")) if cursor is None else cursor
    results: list[tuple[str, str]] = []
    claude = bank.inside("CLAUDE.md")
    agents = bank.inside("AGENTS.md")
    agents_old = _read(bank, agents) if agents.is_file() else None
    if files or agents_old is not None and _BLOCK_RE.search(agents_old):
        text = replace_block(agents_old, agents_block(bank, files), "AGENTS.md")
        results.append(("AGENTS.md", write_atomic(agents, text, dry_run=dry_run)))
    claude_scoped: dict[Path, list[str]] = {}
    if claude != agents:
        claude_old = _read(bank, claude) if claude.is_file() else None
        if files or claude_old is not None and _BLOCK_RE.search(claude_old):
            outside = _BLOCK_RE.sub("", claude_old or "")
            imports_agents = bool(_IMPORTS_AGENTS.search(outside))
            claude_scoped = {} if imports_agents else scoped
            rels = [bank.relative(p) for p in (files if imports_agents else unscoped)]
            block = claude_block(rels, imports_agents, CLAUDE_RULES if claude_scoped else "")
            text = replace_block(claude_old, block, "CLAUDE.md")
            results.append(("CLAUDE.md", write_atomic(claude, text, dry_run=dry_run)))
    results += _sync_generated(bank, CLAUDE_RULES, ".md", claude_scoped, claude_rule_text, dry_run)
    copilot_scoped: dict[Path, list[str]] = {}
    for name, why in copy_targets(bank):
        target = bank.inside(name)
        if target in (claude, agents):
            continue
        old = _read(bank, target) if target.is_file() else None
        if files or old is not None and _BLOCK_RE.search(old):
            copied, where = files, ""
            if name == COPILOT_INSTRUCTIONS:
                copied, copilot_scoped, where = unscoped, scoped, COPILOT_RULES if scoped else ""
            text = replace_block(old, agents_block(bank, copied, why, where), name)
            results.append((name, write_atomic(target, text, dry_run=dry_run)))
    results += _sync_generated(bank, COPILOT_RULES, ".instructions.md", copilot_scoped, copilot_rule_text, dry_run)
    if use_cursor:
        results += _sync_cursor(bank, files, globs, dry_run)
    return results


def _sync_generated(
    bank: Bank,
    folder_rel: str,
    suffix: str,
    wanted_globs: dict[Path, list[str]],
    render: Callable[[Bank, Path, list[str]], str],
    dry_run: bool,
) -> list[tuple[str, str]]:
    """Write `<folder>/<rule name><suffix>` for each scoped rule (`render(bank, path, globs)`), and
    delete the ones this command wrote for rules that are gone or no longer scoped; leave all others."""
    results: list[tuple[str, str]] = []
    wanted = {p.stem + suffix: p for p in wanted_globs}
    for name in sorted(wanted):
        rel = f"{folder_rel}/{name}"
        text = render(bank, wanted[name], wanted_globs[wanted[name]])
        results.append((rel, write_atomic(bank.inside(rel), text, dry_run=dry_run)))
    folder = bank.inside(folder_rel)
    if folder.is_dir():
        mark = _MDC_MARK.partition("{rel}")[0]
        for path in sorted(folder.glob("*" + suffix)):
            text = path.read_text(encoding="utf-8", errors="replace") if path.is_file() else ""
            if path.name not in wanted and mark in text:
                results.append((f"{folder_rel}/{path.name}", remove(path, dry_run)))
    return results


COPILOT_INSTRUCTIONS = ".github/copilot-instructions.md"


def copy_targets(bank: Bank) -> list[tuple[str, str]]:
    """(file, why a copy) for the other agents this project uses: Gemini CLI's context file
    (GEMINI.md, or `context.fileName` in .gemini/settings.json) where .gemini/ or the file exists,
    and .github/copilot-instructions.md where it exists or Copilot's hooks are installed."""
    out: list[tuple[str, str]] = []
    names = ["GEMINI.md"]
    settings = bank.inside(agent_tools.GEMINI_SETTINGS)
    if settings.is_file():
        try:
            data = json.loads(_read(bank, settings) or "{}")
        except ValueError:
            data = {}
        context = data.get("context") if isinstance(data, dict) else None
        given = context.get("fileName") if isinstance(context, dict) else None
        if isinstance(given, str):
            names = [given]
        elif isinstance(given, list) and all(isinstance(n, str) for n in given) and given:
            names = list(given)
    if bank.inside(".gemini").is_dir() or any(bank.inside(n).is_file() for n in names):
        out += [(n, "Gemini CLI's context file, kept by lessonbank") for n in names]
    if bank.inside(COPILOT_INSTRUCTIONS).is_file() or bank.inside(agent_tools.COPILOT_HOOKS).is_file():
        out.append((COPILOT_INSTRUCTIONS, "Copilot's instructions cannot import files"))
    return out


def _sync_cursor(bank: Bank, files: list[Path], globs: dict[Path, list[str]], dry_run: bool) -> list[tuple[str, str]]:
    results: list[tuple[str, str]] = []
    folder = bank.inside(".cursor/rules")
    wanted = {f"{p.stem}.mdc": p for p in files}
    for name in sorted(wanted):
        target = bank.inside(f".cursor/rules/{name}")
        text = mdc_text(bank, wanted[name], globs[wanted[name]])
        results.append((f".cursor/rules/{name}", write_atomic(target, text, dry_run)))
    if folder.is_dir():
        # Retire .mdc files this command wrote for rule files that are gone; leave all others.
        for path in sorted(folder.glob("*.mdc")):
            text = path.read_text(encoding="utf-8", errors="replace")
            if path.name not in wanted and _MDC_MARK.partition("{rel}")[0] in text:
                results.append((f".cursor/rules/{path.name}", remove(path, dry_run)))
    return results
