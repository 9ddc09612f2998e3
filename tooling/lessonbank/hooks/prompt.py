"""UserPromptSubmit: deterministic recall of lessons by the words of the prompt.

A lesson is handed over only if the prompt shares at least one of its keywords or tag values
and at least one more meaningful word of the lesson (stop words dropped, light stemming, see
`lessonbank.words`). Best first: more shared words, then more shared keywords, then priority,
confidence and slug, so the same prompt always recalls the same lessons.
"""

from lessonbank.hooks import handover
from lessonbank.matching import words
from lessonbank.state import statedir


def ranked(index, prompt: str, session: "statedir.Session | None", limit: int) -> list[tuple]:
    """(lesson number, slug, priority, score) of unclaimed recalled lessons, best first (at least
    `limit` of them when there are that many); the score (shared words, shared keywords) ranks
    the lessons of several layers together (layers.Layered.ranked)."""
    terms = sorted(words.terms(prompt))
    found = index.lookup("recall", ["k:" + t for t in terms] + ["a:" + t for t in terms])
    shared_keys: dict[int, int] = {}
    for term in terms:
        for number in found.get("k:" + term, ()):
            shared_keys[number] = shared_keys.get(number, 0) + 1
    # Only lessons sharing a keyword can be recalled: their other shared words are counted by set
    # membership, not by walking every lesson a common word names (thousands in a big bank).
    word_sets = [set(found["a:" + term]) for term in terms if "a:" + term in found]
    groups: dict[tuple[int, int], list[int]] = {}
    for number, keys in shared_keys.items():
        both = sum(number in numbers for numbers in word_sets)
        if both >= 2:
            groups.setdefault((both, keys), []).append(number)
    from lessonbank.index.compiled_read import L_CONFIDENCE, L_PRIORITY, L_SLUG

    out: list[tuple] = []
    claimed = session.claimed_slugs() if session is not None else set()
    # Records are read a group at a time: a common keyword must not make us read every lesson.
    for score in sorted(groups, reverse=True):
        records = []
        for number in groups[score]:
            record = index.lesson(number)
            slug = record[L_SLUG]
            if slug not in claimed:
                records.append((-record[L_PRIORITY], -record[L_CONFIDENCE], slug, number))
        for priority, _, slug, number in sorted(records):
            out.append((number, slug, -priority, score))
        if len(out) >= limit:
            break
    return out


def user_prompt_submit(payload: dict, root: str, state_dir: str, mode: str) -> str:
    """Advance the turn counter and answer with the recalled lessons, or ""."""
    session = statedir.Session(state_dir, str(payload.get("session_id") or ""))
    session.advance_turn()
    prompt = payload.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        return ""
    from lessonbank.index import layers

    index = layers.Layered(layers.indexes(root, state_dir))
    settings = index.settings
    limit = settings["prompt_max_lessons"]
    found = index.dedupe(index.ranked([ranked(layer_index, prompt, session, limit * 3) for _, layer_index in index.layers]))
    chosen = handover.select(found, index, limit, settings["max_bytes"])
    if not chosen:
        return ""
    heading = (
        f"lessonbank: {handover.source(chosen)} that share words with this request. "
        "Use one only where it fits; ignore the rest."
    )
    turn = session.turn(payload.get("prompt_id"))
    return handover.hand_over(chosen, session, turn, "UserPromptSubmit", mode, heading)
