"""`bank rules`: one source (rules/*.md) reaching every agent: CLAUDE.md, AGENTS.md, GEMINI.md,
.github/copilot-instructions.md, Cursor.

CLAUDE.md gets a managed block of `@rules/<name>.md` import lines. AGENTS.md cannot import
files and agents reading it do not follow links, so its block holds a copy of each rule file.
GEMINI.md (or Gemini's `context.fileName`) and .github/copilot-instructions.md get the same
copy, with the same markers, where the project uses those agents (see `copy_targets`). Cursor
gets one `.cursor/rules/<name>.mdc` per rule file when asked. Nothing outside a managed block is
ever changed. It imports `bank.store`, `markers`, `matching.agent_tools` (the hook files that say a
project uses Copilot or Gemini) and `errors`; `apply` also runs it after every groom.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from lessonbank.bank.store import Bank, remove, write_atomic
from lessonbank.errors import BankError
from lessonbank.groom.markers import MARK_RE, break_markers, shift_headings
from lessonbank.matching import agent_tools

BLOCK_BEGIN = "<!-- lessonbank:rules:begin -->"
BLOCK_END = "<!-- lessonbank:rules:end -->"
_BLOCK_RE = re.compile(r"<!--\s*lessonbank\s*:\s*rules\s*:\s*(begin|end)\s*-->", re.IGNORECASE)
_MDC_MARK = "<!-- lessonbank:rules generated from {rel} by `bank rules`; edit that file instead. -->"
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


def claude_block(rels: list[str], imports_agents: bool) -> str:
    """The inside of CLAUDE.md's block: one import line per rule file."""
    head = "<!-- Managed by `bank rules` from rules/*.md: edit those files, not this block. -->"
    if imports_agents:
        return head + "\n<!-- The rules reach Claude through @AGENTS.md, which holds a copy of them. -->"
    if not rels:
        return head + "\n<!-- No rules yet: `bank groom` promotes lessons seen in two sessions. -->"
    return head + "\n" + "\n".join(f"@{rel}" for rel in rels)


def agents_block(bank: Bank, files: list[Path], why: str = "AGENTS.md cannot import files") -> str:
    """The inside of AGENTS.md's block (and GEMINI.md's, Copilot's): each rule file copied,
    headings pushed down one level."""
    head = f"<!-- Managed by `bank rules`: a copy of rules/*.md ({why}). Edit those files, not this block. -->"
    parts = [head]
    if not files:
        parts.append("<!-- No rules yet: `bank groom` promotes lessons seen in two sessions. -->")
    for path in files:
        body = break_markers(shift_headings(strip_sections(_read(bank, path)), 1))
        parts.append(f"<!-- from {bank.relative(path)} -->\n{body}")
    return "\n\n".join(parts)


def mdc_text(bank: Bank, path: Path) -> str:
    """A Cursor rule (.mdc) holding a copy of one rule file; it applies to every request."""
    rel = bank.relative(path)
    body = strip_sections(_read(bank, path))
    description = f"Project rules ({path.stem}) promoted by lessonbank from lessons seen in two sessions"
    return (
        f"---\ndescription: {description}\nglobs:\nalwaysApply: true\n---\n\n"
        f"{_MDC_MARK.format(rel=rel)}\n\n{body}\n"
    )


def sync(bank: Bank, cursor: bool | None = None, dry_run: bool = False) -> list[tuple[str, str]]:
    """Bring CLAUDE.md, AGENTS.md (and .cursor/rules when asked) in line with rules/*.md."""
    files = rule_files(bank)
    rels = [bank.relative(p) for p in files]
    use_cursor = bool(bank.config.get("groom.cursor")) if cursor is None else cursor
    results: list[tuple[str, str]] = []
    claude = bank.inside("CLAUDE.md")
    agents = bank.inside("AGENTS.md")
    agents_old = _read(bank, agents) if agents.is_file() else None
    if files or agents_old is not None and _BLOCK_RE.search(agents_old):
        text = replace_block(agents_old, agents_block(bank, files), "AGENTS.md")
        results.append(("AGENTS.md", write_atomic(agents, text, dry_run=dry_run)))
    if claude != agents:
        claude_old = _read(bank, claude) if claude.is_file() else None
        if files or claude_old is not None and _BLOCK_RE.search(claude_old):
            outside = _BLOCK_RE.sub("", claude_old or "")
            imports_agents = bool(_IMPORTS_AGENTS.search(outside))
            text = replace_block(claude_old, claude_block(rels, imports_agents), "CLAUDE.md")
            results.append(("CLAUDE.md", write_atomic(claude, text, dry_run=dry_run)))
    for name, why in copy_targets(bank):
        target = bank.inside(name)
        if target in (claude, agents):
            continue
        old = _read(bank, target) if target.is_file() else None
        if files or old is not None and _BLOCK_RE.search(old):
            text = replace_block(old, agents_block(bank, files, why), name)
            results.append((name, write_atomic(target, text, dry_run=dry_run)))
    if use_cursor:
        results += _sync_cursor(bank, files, dry_run)
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


def _sync_cursor(bank: Bank, files: list[Path], dry_run: bool) -> list[tuple[str, str]]:
    results: list[tuple[str, str]] = []
    folder = bank.inside(".cursor/rules")
    wanted = {f"{p.stem}.mdc": p for p in files}
    for name in sorted(wanted):
        target = bank.inside(f".cursor/rules/{name}")
        results.append((f".cursor/rules/{name}", write_atomic(target, mdc_text(bank, wanted[name]), dry_run)))
    if folder.is_dir():
        # Retire .mdc files this command wrote for rule files that are gone; leave all others.
        for path in sorted(folder.glob("*.mdc")):
            text = path.read_text(encoding="utf-8", errors="replace")
            if path.name not in wanted and _MDC_MARK.partition("{rel}")[0] in text:
                results.append((f".cursor/rules/{path.name}", remove(path, dry_run)))
    return results
