"""The bank's layers: the project bank, the person's own bank and the team banks, as the hooks see them.

A project's bank is the first layer. The others are user-level, under the data folder
(`$XDG_DATA_HOME/lessonbank`, by default `~/.local/share/lessonbank`):

    personal/                    the personal bank (a bank like any other: bank.toml, lessons/);
                                 lessons that follow the person across projects
    teams/<name>/                a team bank: a git clone of the team's bank repository
    remotes.json                 the team banks this user follows, written by `bank remote add`:
                                 {"teams": {"<name>": {"url": "<git url>", "branch": "<branch>"}}}

Each layer keeps its own compiled index in its own `.lessonbank/` (the clone's is excluded from
git through .git/info/exclude), built from its INDEX.md like the project's. The hooks read every
layer's index in one call (`indexes`) and take the hits best first across them (`Layered`): one byte
budget and one set of once-per-session claims, both the project's. A lesson of a later layer
whose slug, or whose words (Dice of their terms at SAME_MEANING or above), repeat a lesson of an
earlier layer met in the same call gives way to it: the project wins over personal, personal
over teams. Stdlib only (`posix`): the hooks import it on every call.
"""

import posix

from lessonbank.index import compiled_read
from lessonbank.index.compiled_read import L_CONFIDENCE, L_TERMS
from lessonbank.state import jsonio, statedir, userdirs

PERSONAL = "personal"
TEAMS = "teams"
REGISTRY = "remotes.json"
PROJECT = "project"
TEAM_PREFIX = "team:"
# gates.duplicate_threshold's default (lessonbank.config): the same measure as capture's
# duplicate gate, here over the terms of each lesson's title, when and do, which its compiled
# record carries (tests/index/test_layers.py keeps them equal; the hooks must not import config).
SAME_MEANING = 0.6
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-_.")


def data_dir() -> "str | None":
    """The user's lessonbank data folder, or None when neither XDG_DATA_HOME nor HOME is usable."""
    return userdirs.user_dir("XDG_DATA_HOME", ".local/share")


def valid_name(name: str) -> bool:
    """A team name: lower-case letters, digits, '-', '_' and '.', not starting with '.' or '-', at most 64."""
    return 0 < len(name) <= 64 and name[0] not in ".-" and all(c in _NAME_CHARS for c in name)


def personal_root(data: str) -> str:
    return data + "/" + PERSONAL


def team_root(data: str, name: str) -> str:
    return data + "/" + TEAMS + "/" + name


def registry_path(data: str) -> str:
    return data + "/" + REGISTRY


def read_registry(data: str) -> "dict[str, dict[str, str]]":
    """name -> {"url", "branch"} of every registered team bank ({} when there is none or it is broken)."""
    text = statedir.read_text(registry_path(data))
    if not text:
        return {}
    try:
        parsed = jsonio.loads(text)
    except ValueError:
        return {}
    teams = parsed.get("teams") if isinstance(parsed, dict) else None
    if not isinstance(teams, dict):
        return {}
    out = {}
    for name, entry in teams.items():
        if isinstance(name, str) and valid_name(name) and isinstance(entry, dict):
            out[name] = {"url": str(entry.get("url") or ""), "branch": str(entry.get("branch") or "")}
    return out


def root_of(project_root: str, layer: str) -> "str | None":
    """The folder of the bank that holds a layer's lessons (`project_root` for the project's); None
    for a layer of no bank."""
    if layer == PROJECT:
        return project_root
    data = data_dir()
    if data is None:
        return None
    if layer == PERSONAL:
        return personal_root(data)
    if layer.startswith(TEAM_PREFIX):
        return team_root(data, layer[len(TEAM_PREFIX) :])
    return None


def other_layers(data: "str | None") -> "list[tuple[str, str]]":
    """(layer name, bank root) of the personal bank and every registered team bank that exists,
    in precedence order: personal, then the teams by name."""
    if data is None:
        return []
    out = []
    candidates = [(PERSONAL, personal_root(data))]
    candidates += [(TEAM_PREFIX + name, team_root(data, name)) for name in sorted(read_registry(data))]
    for layer, root in candidates:
        try:
            posix.stat(root + "/" + statedir.MARKER)
        except OSError:
            continue
        out.append((layer, root))
    return out


def index(root: str, state_dir: str):  # noqa: ANN201 - DiskIndex or MemIndex
    """A bank's compiled index: the file when current, else rebuilt from INDEX.md (which loads `re`,
    so only then)."""
    found = compiled_read.current(root, state_dir)
    if found is not None:
        return found
    from lessonbank.index import compiled_build

    return compiled_build.rebuild(root, state_dir)


def indexes(root: str, state_dir: str) -> "list[tuple[str, object]]":
    """(layer name, index) of every layer, the project's first. A layer whose index cannot be read
    is left out (and logged in the project's hook.log): the others still answer."""
    out: list[tuple[str, object]] = [(PROJECT, index(root, state_dir))]
    for layer, layer_root in other_layers(data_dir()):
        if layer_root == root:
            continue
        try:
            out.append((layer, index(layer_root, layer_root + "/" + statedir.STATE)))
        except Exception as exc:
            statedir.log_error(state_dir, "layer " + layer, exc)
    return out


class Layered:
    """Several layers' indexes as one: lesson numbers are (layer position, number in that layer)."""

    def __init__(self, layers: "list[tuple[str, object]]") -> None:
        self.layers = layers  # (layer name, index) each, the project's first
        _, project = layers[0]
        self.settings = project.settings  # type: ignore[attr-defined]
        self._lessons: dict[tuple[int, int], tuple] = {}  # read once: `dedupe` and then the handover read each hit

    def lesson(self, number: "tuple[int, int]") -> tuple:
        """The record of lesson (layer position, number in that layer): compiled_read's L_* fields."""
        found = self._lessons.get(number)
        if found is None:
            position, in_layer = number
            _, index = self.layers[position]
            found = self._lessons[number] = index.lesson(in_layer)  # type: ignore[attr-defined]
        return found

    def layer(self, number: "tuple[int, int]") -> str:
        position, _ = number
        name, _ = self.layers[position]
        return name

    def dedupe(self, ranked):  # noqa: ANN001, ANN201 - generators (no typing import in the hook)
        """The hits of every layer ((layer position, number), slug, priority), best first, with
        repeats settled: a hit repeating one already given from an earlier layer (same slug, or
        same meaning) is dropped, and one from an earlier layer repeating some already given from
        later layers takes their place. Each hit comes out as (number, slug, priority, the slugs
        whose place it takes)."""
        given = []  # (layer position, slug, terms) of what went out
        for number, slug, priority in ranked:
            position, _ = number
            twins = []
            if len(self.layers) > 1:  # lessons of one layer are never weighed against each other
                terms = frozenset(self.lesson(number)[L_TERMS])
                twins = [
                    (at, other, its_terms) for at, other, its_terms in given
                    if at != position and (other == slug or _dice(its_terms, terms) >= SAME_MEANING)
                ]  # fmt: skip
                if any(at < position for at, _, _ in twins):
                    continue
                given = [g for g in given if g not in twins]
                given.append((position, slug, terms))
            yield (number, slug, priority, tuple(other for _, other, _ in twins))

    def ranked(self, lists: "list[list[tuple]]") -> "list[tuple]":
        """Each layer's hits ((number, slug, priority, score) best first, `score` a tuple, higher
        first) as one list of ((layer position, number), slug, priority): by score, priority,
        confidence, layer, then slug."""
        keyed = []
        for position, hits in enumerate(lists):
            for number, slug, priority, score in hits:
                confidence = self.lesson((position, number))[L_CONFIDENCE]
                order = (tuple(-s for s in score), -priority, -confidence, position, slug, number)
                keyed.append((order, ((position, number), slug, priority)))
        keyed.sort()  # by order: two equal orders are one hit twice (the same layer position and number)
        return [hit for _, hit in keyed]


def _dice(a: frozenset, b: frozenset) -> float:
    """Dice similarity of two term sets (words.dice, without importing words and its stemmer)."""
    return 2.0 * len(a & b) / (len(a) + len(b)) if a or b else 0.0
