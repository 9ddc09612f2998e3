"""Guards: the lessons a person marked `guard: true`, read from their files only when a call matches one.

Agents whose before-call hook cannot add context (Gemini CLI, Qwen Code) hand a call's lessons
over with its result; a guard is the exception, and holds the call back once instead. The flag is
not in INDEX.md: it is read here from the frontmatter of the lesson's own file, in the bank of
the layer that holds it, for the few lessons a call matched.
"""

from lessonbank.index import layers
from lessonbank.state import statedir

# What YAML reads as true (PyYAML's booleans); `bank check` refuses any other value than a boolean.
TRUE = frozenset({"true", "yes", "on"})
# How much of a lesson file is read for its frontmatter.
FRONT_MOST = 1 << 16


def flagged(text: str) -> bool:
    """Does a lesson file's frontmatter say `guard: true`?"""
    first, _, rest = text.partition("\n")
    if first.strip() != "---":
        return False
    for line in rest.split("\n"):
        if line.rstrip() in ("---", "..."):
            return False
        if line.startswith("guard:"):
            value = line[len("guard:") :].partition(" #")[0].strip().strip("'\"")
            return value.lower() in TRUE
    return False


def is_guard(root: str, layer: str, slug: str) -> bool:
    """Is the lesson `slug` of `layer` marked as a guard? (False when its file cannot be read.)"""
    bank = layers.root_of(root, layer)
    if bank is None:
        return False
    if "/" in slug or slug.startswith("."):  # INDEX.md is the repository's: a slug names no other file
        return False
    # The frontmatter is at the top: the rest is never read (the file may be a link to an endless one).
    return flagged(statedir.read_text(bank + "/lessons/" + slug + ".md", limit=FRONT_MOST) or "")
