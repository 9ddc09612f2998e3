"""What several adapters share: a tool call in our names, reading a handler's answer, a transcript's tail."""


def tool_call(tools: dict, name: object, args: object) -> "tuple[str, dict] | None":
    """(our tool name, the arguments under our names) of an agent's tool call, or None when
    the tool is not one we know or its arguments are not a mapping."""
    tool = tools.get(str(name))
    if tool is None or not isinstance(args, dict):
        return None
    internal, arguments = tool
    return internal, {ours: args[theirs] for theirs, ours in arguments if theirs in args}


def context_of(out: str) -> tuple[str, str]:
    """(kind, text) of a handler's answer: ("context", text), ("block", reason) or ("", "")."""
    from lessonbank.state import jsonio

    data = jsonio.loads(out)
    if not isinstance(data, dict):
        return "", ""
    if data.get("decision") == "block":
        return "block", str(data.get("reason") or "")
    inner = data.get("hookSpecificOutput")
    if isinstance(inner, dict) and isinstance(inner.get("additionalContext"), str):
        return "context", inner["additionalContext"]
    return "", ""


def tail_lines(path: str, needle: str, limit: int = 1 << 26):  # noqa: ANN201 - a generator
    """Lines of the file at `path` holding `needle`, last first, read backwards in chunks
    (at most `limit` bytes): a long transcript costs only the end the caller reads."""
    import posix

    try:
        fd = posix.open(path, posix.O_RDONLY)
    except OSError:
        return
    try:
        end = posix.lseek(fd, 0, 2)
        pos, carry, chunk = end, b"", 1 << 16
        key = needle.encode("utf-8")
        while pos > 0 and end - pos < limit:
            step = min(chunk, pos)
            pos -= step
            posix.lseek(fd, pos, 0)
            lines = (posix.read(fd, step) + carry).split(b"\n")
            carry = lines.pop(0) if pos > 0 else b""
            for raw in reversed(lines):
                if key in raw:
                    yield raw.decode("utf-8", "replace")
            chunk = min(chunk * 4, 1 << 22)
    finally:
        posix.close(fd)
