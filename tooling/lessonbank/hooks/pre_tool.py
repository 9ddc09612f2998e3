"""PreToolUse: the lessons whose command or path triggers match this tool call.

Bash commands are matched by their executable parts, each followed by the assignments it runs
with (`shell.trigger_texts`: `RUST_BACKTRACE=1 cargo test` is `cargo test RUST_BACKTRACE=1`, and
`rg -n pytest docs/` is `rg -n docs/`); file tools by their path relative to the bank root. The
compiled index picks candidate triggers by the rarest literal each must contain, and drops those
whose other literals are not in the call or whose lesson is claimed before any regex runs; the
rest run best first and only until the budget is full, most on the small `regex_engine` matcher, so `re` is
rarely imported.
"""

from lessonbank.index import compiled_read
from lessonbank.index.compiled_read import (
    E_BOUNDED,
    E_CHOICES,
    E_CONFIDENCE,
    E_KIND,
    E_LITERALS,
    E_NUMBER,
    E_PRIORITY,
    E_PROGRAM,
    E_SLUG,
    E_SOURCE,
    E_TOOLS,
)
from lessonbank.state import statedir

# shell, regex_engine, globs and handover are imported only when a call needs them: each module
# costs start-up time (a Read or Edit call never splits a command).

PATH_KEYS = {
    "Read": ("file_path",),
    "Edit": ("file_path",),
    "Write": ("file_path",),
    "MultiEdit": ("file_path",),
    "NotebookEdit": ("notebook_path",),
    "Glob": ("path",),
    "Grep": ("path",),
}
PATTERN_TOOLS = ("Glob", "Grep")


def relative(path: str, root: str, cwd: str) -> str | None:
    """`path` relative to the bank root with '.' and '..' resolved, or None when outside it."""
    if not path.startswith("/"):
        path = cwd.rstrip("/") + "/" + path
    parts: list[str] = []
    for part in path.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if parts:
                parts.pop()
        else:
            parts.append(part)
    full = "/" + "/".join(parts)
    prefix = root.rstrip("/") + "/"
    if not full.startswith(prefix):
        return None
    return full[len(prefix) :]


def subjects(tool: str, tool_input: dict, root: str, cwd: str) -> tuple[list[str], list[str]]:
    """(command texts, relative paths) of a tool call."""
    commands: list[str] = []
    paths: list[str] = []
    if tool == "Bash":
        command = tool_input.get("command")
        if isinstance(command, str):
            from lessonbank.matching import shell

            commands = shell.trigger_texts(command)
        return commands, paths
    for key in PATH_KEYS.get(tool, ()):
        value = tool_input.get(key)
        if isinstance(value, str) and value:
            rel = relative(value, root, cwd)
            if rel is not None:
                paths.append(rel)
    if tool in PATTERN_TOOLS:
        pattern = tool_input.get("pattern")
        extra = tool_input.get("glob") if tool == "Grep" else pattern
        if isinstance(pattern, str) and pattern:
            commands.append(pattern)
        if isinstance(extra, str) and extra:
            base = paths[0] if paths else ""
            paths.append(f"{base}/{extra}" if base else extra)
    return commands, paths


def _fires(index, entry: tuple, commands: list[str], paths: list[str], state_dir: str) -> bool:
    """Does the trigger match? One that uses up its step budget does not, and hook.log says so."""
    kind, source = entry[E_KIND], entry[E_SOURCE]
    if kind != "c" and kind != "p":
        return True
    from lessonbank.matching import budget

    program = index.program(entry[E_PROGRAM])
    try:
        if kind == "c":
            from lessonbank.matching import regex_engine

            return any(regex_engine.search(program, source, text) for text in commands)
        from lessonbank.matching import globs

        return any(globs.match(program, path) for path in paths)
    except budget.Exhausted as exc:
        what = "command" if kind == "c" else "path"
        statedir.log_line(state_dir, "PreToolUse", f"lesson {entry[E_SLUG]}: {what} trigger {source!r} {exc}")
        return False


def candidates(index, tool: str, commands: list[str], paths: list[str], shared: dict) -> list[tuple]:  # noqa: ANN001
    """The trigger entries of one index that may fire for this call, in no particular order.

    Candidates come from the index by the literals the call contains; an entry that does not
    apply to the tool, or whose literals are not all in the call, is dropped before its program
    is even read. `shared`, one dict per call, keeps what every layer's lookup has in common
    (the call's keys and their hashes, its folded texts), so a layered call works them out once.
    """
    lengths = index.gram_lengths
    keys = shared.get(lengths)
    if keys is None:
        grams = compiled_read.grams(commands + paths, lengths)
        grams.add(compiled_read.TOOL + tool)
        if commands:
            grams.add(compiled_read.ALWAYS_COMMAND)
        if paths:
            grams.add(compiled_read.ALWAYS_PATH)
        keys = shared[lengths] = (grams, compiled_read.hashed(grams))
    call_grams, hashed_keys = keys
    texts = shared.get("texts")
    if texts is None:
        joined = "\n".join(commands)
        folded_texts = {"c": compiled_read.fold(joined), "p": compiled_read.fold("\n".join(paths)), "t": ""}
        texts = shared["texts"] = (folded_texts, compiled_read.bounded(joined))
    folded, bounded = texts
    bounded_text = bounded or ""
    out = []
    # The field numbers bound to locals: a local is the cheapest read, and this loop runs per candidate.
    tools_at, kind_at, literals_at, bounded_at, choices_at = E_TOOLS, E_KIND, E_LITERALS, E_BOUNDED, E_CHOICES
    for entry in index.entries(index.probe("pre", hashed_keys), call_grams):
        tools, kind = entry[tools_at], entry[kind_at]
        # A trigger naming tools applies to those; else a command trigger to Bash, a path trigger to any.
        if (tool not in tools) if tools else (kind != "p" and (kind != "c" or tool != "Bash")):
            continue
        # Plain loops (no generator or map per entry): every literal in the call, every
        # boundary-marked one in its bounded form, and one branch of each required alternation.
        text = folded[kind]
        for literal in entry[literals_at]:
            if literal not in text:
                break
        else:
            for literal in entry[bounded_at] if bounded is not None else ():
                if literal not in bounded_text:
                    break
            else:
                for group in entry[choices_at]:
                    for branch in group:
                        if branch in text:
                            break
                    else:
                        break  # no branch of this alternation is in the call
                else:
                    out.append(entry)
    return out


def layered_hits(indexes: list, tool: str, commands: list[str], paths: list[str], session: statedir.Session):  # noqa: ANN201
    """((layer position, lesson number), slug, priority) of unclaimed lessons triggered by this
    call in any of the `indexes`, best first (priority, confidence, then layer): lazily, so that
    a caller that has enough stops the matching there.

    Every layer's candidates are ranked together before any program runs, so a call runs no
    more programs over three layers than over one bank; a lesson this session already has (one
    listing of its claims) is skipped without running its program.
    """
    ranked: list[tuple] = []
    shared: dict = {}
    for position, index in enumerate(indexes):
        for e in candidates(index, tool, commands, paths, shared):
            # best first: priority, confidence, layer, slug; then the candidates' own order (a
            # group's entries keep each row's triggers in order), so no entry is ever compared
            ranked.append((-e[E_PRIORITY], -e[E_CONFIDENCE], position, e[E_SLUG], e[E_NUMBER], len(ranked), e))
    if not ranked:
        return
    ranked.sort()
    # One matching budget for the whole call, shared by all its searches (regex and glob) in
    # every layer.
    from lessonbank.matching import budget

    budget.new_call()
    try:
        claimed = session.claimed_slugs()
        done: set[tuple[int, int]] = set()
        for _, _, position, _, _, _, entry in ranked:
            number, slug = (position, entry[E_NUMBER]), entry[E_SLUG]
            if number in done or slug in claimed:
                continue
            if _fires(indexes[position], entry, commands, paths, session.state_dir):
                done.add(number)
                yield (number, slug, entry[E_PRIORITY])
    finally:
        budget.end_call()


def hits(index, tool: str, tool_input: dict, root: str, cwd: str, session: statedir.Session):  # noqa: ANN201
    """(lesson number, slug, priority) of unclaimed lessons of one index triggered by this call,
    best first, lazily (`layered_hits` over that index alone)."""
    commands, paths = subjects(tool, tool_input, root, cwd)
    for (_, number), slug, priority in layered_hits([index], tool, commands, paths, session):
        yield (number, slug, priority)


def _then(first: tuple, rest):  # noqa: ANN001, ANN202 - generators
    yield first
    yield from rest


def matching(
    index, tool: str, tool_input: dict, root: str, cwd: str, session: statedir.Session
) -> list[tuple]:
    """(lesson number, slug, priority) of unclaimed lessons triggered by this call, best first."""
    return list(hits(index, tool, tool_input, root, cwd, session))


def pre_tool_use(payload: dict, root: str, state_dir: str, mode: str) -> str:
    """The answer for a tool call's lessons: their texts as context, or "" for none.

    The internal event's `deliver` says when the agent reads them (hooks/agents): unset, before
    the call; "guards" (a before-call hook that cannot add context), only the lessons marked as
    guards, answered as a block that holds the call back once; "after" (PostToolUse), the call's
    lessons with its result.
    """
    tool = payload.get("tool_name")
    tool_input = payload.get("tool_input")
    if not isinstance(tool, str) or not isinstance(tool_input, dict):
        return ""
    session = statedir.Session(state_dir, str(payload.get("session_id") or ""))
    from lessonbank.index import layers

    index = layers.Layered(layers.indexes(root, state_dir))
    cwd = payload.get("cwd")
    if not isinstance(cwd, str):
        cwd = root
    # Paths are relative to the project's root in every layer: a team's `**/*.py` means this project's files.
    commands, paths = subjects(tool, tool_input, root, cwd)
    ranked = index.dedupe(layered_hits([i for _, i in index.layers], tool, commands, paths, session))
    deliver = payload.get("deliver")
    if deliver == "guards":
        from lessonbank.hooks import guards

        ranked = ((n, slug, *rest) for n, slug, *rest in ranked if guards.is_guard(root, index.layer(n), slug))
    first = next(ranked, None)
    if first is None:
        return ""
    from lessonbank.hooks import handover

    settings = index.settings
    chosen = handover.select(_then(first, ranked), index, settings["max_lessons"], settings["max_bytes"])
    turn = session.turn(payload.get("prompt_id"))
    if deliver == "after":
        # Read after the call ran: not tied to the call (the trial must not count its failure as one after the lesson).
        heading = (
            f"lessonbank: {handover.source(chosen)} that may bear on the {tool} call that just ran. "
            "Use one only where it fits what you are doing; ignore the rest."
        )
        return handover.hand_over(chosen, session, turn, "PostToolUse", mode, heading)
    if deliver == "guards":  # a block: the agent's deny (hooks/agents), the lessons its reason
        heading = (
            f"lessonbank held this {tool} call back once: {handover.source(chosen)}, marked as guards, bear on it. "
            "Nothing else is wrong with the call: read them, then run it again, changed only where a lesson applies."
        )
    else:
        heading = (
            f"lessonbank: {handover.source(chosen)} that may bear on this {tool} call. "
            "Use one only where it fits what you are doing; ignore the rest."
        )
    tool_use_id = str(payload.get("tool_use_id") or "")
    return handover.hand_over(chosen, session, turn, "PreToolUse", mode, heading, tool_use_id, deliver == "guards")
