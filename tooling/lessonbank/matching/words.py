"""Words for matching: tokens, stop words and light stemming, with the standard library only.

This module is on the hook hot path, so it must not import `re` (several ms at start-up):
tokenising is done with `str.translate` and `str.split`.
"""

from __future__ import annotations

# Every ASCII character that is not a letter or digit becomes a separator.
_SEPARATORS = {c: " " for c in range(128) if not chr(c).isalnum()}

STOP_WORDS = frozenset(
    """
    a about above after again against all also am an and any are as at be because been
    before being below between both but by can cannot could did do does doing done down
    during each even ever every few for from further get gets got had has have having he
    her here hers herself him himself his how i if in into is it its itself just let lets
    like make makes me might more most must my myself need needs no nor not now of off on
    once one only or other our ours ourselves out over own please same she should so some
    still such than that the their theirs them themselves then there these they this those
    through to too try under until up us use used uses using very via was we were what
    when where which while who whom why will with without would yet you your yours
    yourself yourselves thing things way ok okay fix fixed fixes fixing make sure want
    """.split()
)


def tokens(text: str) -> list[str]:
    """Lower-cased alphanumeric runs of `text`, in order."""
    out = text.lower().translate(_SEPARATORS).split()
    if text.isascii():
        return out
    # Non-ASCII punctuation ('…', '—', curly quotes) is rare: split those tokens char by char.
    split: list[str] = []
    for token in out:
        if token.isalnum():
            split.append(token)
        else:
            split.extend("".join(c if c.isalnum() else " " for c in token).split())
    return split


def stem(word: str) -> str:
    """A light, deterministic suffix strip: enough to join 'hangs', 'hanging' and 'hang'."""
    if len(word) <= 3 or word.isdigit():
        return word
    for suffix, keep in (("ies", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("s", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            if suffix == "s" and word.endswith(("ss", "us", "is")):
                return word
            if suffix == "es" and not word.endswith(("ches", "shes", "sses", "xes", "zes")):
                continue
            base = word[: len(word) - len(suffix)] + keep
            # 'running' -> 'runn' -> 'run': undo a doubled final consonant.
            if suffix in ("ing", "ed") and len(base) >= 4 and base[-1] == base[-2] and base[-1] not in "lsz":
                base = base[:-1]
            return base
    return word


def terms(text: str) -> set[str]:
    """The meaningful stemmed words of `text`: no stop words, no one-letter tokens."""
    return {stem(t) for t in tokens(text) if len(t) > 1 and t not in STOP_WORDS}


def dice(a: set[str], b: set[str] | list[str]) -> float:
    """Dice similarity of two term sets, 0.0 for two empty sets; `b` may be a list of distinct terms."""
    if not a and not b:
        return 0.0
    return 2.0 * len(a.intersection(b)) / (len(a) + len(b))


def containment(part: set[str], whole: set[str]) -> float:
    """The share of `part` found in `whole` (0.0 when `part` is empty)."""
    if not part:
        return 0.0
    return len(part & whole) / len(part)
