"""The step budget both matchers charge (`regex_engine` and `globs`): per search, and per hook call.

Backtracking can take exponential time, so a search counts its steps and gives up past a budget
linear in its subject (`steps`): a fixed allowance plus a few steps per character, so a
linear-time match of any length fits and a backtracking one gives up within tens of milliseconds.
A step is one attempt to match at a position, or one character a repeat or a wildcard scans.

One hook call also has an allowance across all its searches, regex and glob alike, from
`new_call` to `end_call` (the PreToolUse hook brackets each call with them): CALL_BUDGET steps,
at most about 60 ms at the slowest step measured (1.4 µs), so no number of slow triggers adds up
past it. `re`, which runs what the small matcher cannot, gets a clock instead: RE_SECONDS in all
per call (regex_engine enforces it with SIGALRM). Outside a call only each search's own budget
applies. It imports nothing: both matchers load it on the hook's hot path.
"""

BUDGET_BASE = 5_000
BUDGET_PER_CHAR = 10
CALL_BUDGET = 40_000
RE_SECONDS = 0.015
_call: list = [None, None]  # the call's steps and `re` seconds left; None outside a call


class Exhausted(Exception):
    """A search used up its step budget, or the call its own: the trigger counts as not matching
    (the hook logs it)."""


def steps(size: int) -> int:
    """The step budget of one search in a subject of `size` characters."""
    return BUDGET_BASE + BUDGET_PER_CHAR * size


def new_call() -> None:
    """Start a hook call's allowance."""
    _call[0], _call[1] = CALL_BUDGET, RE_SECONDS


def end_call() -> None:
    """End it: searches outside a hook call have only their own budget."""
    _call[0] = _call[1] = None


def run(search, size: int, *args):  # noqa: ANN001, ANN201 - any search function and its answer
    """`search(*args, left)` with `left` = [the smaller of `steps(size)` and what the call has
    left]; the steps it used are charged to the call. Raises Exhausted when either runs out (the
    search raises it as soon as `left[0]` goes below zero)."""
    allowed = steps(size)
    if _call[0] is not None and _call[0] < allowed:
        allowed = _call[0]
        if allowed <= 0:
            raise Exhausted("skipped: this call's matching budget is spent")
    left = [allowed]
    try:
        return search(*args, left)
    except Exhausted:
        raise Exhausted(f"gave up after {allowed} matching steps") from None
    finally:
        if _call[0] is not None:
            _call[0] -= allowed - left[0]


def clock() -> "float | None":
    """The seconds of `re` this call has left, or None outside a call (no clock)."""
    return _call[1]


def spend(seconds: float) -> None:
    """Charge `re`'s time to the call."""
    if _call[1] is not None:
        _call[1] -= seconds
