"""The secret gate's coverage, route by route, on the generated corpus of tests/bank/secret_cases.py.

For every credential format (SECRETS) and every benign look-alike (LOOK_ALIKES), the text goes
through each route a secret can enter by, in the shape that route gives it, and the table counts
the formats whose random parts are all gone and the look-alikes left untouched:

- gate: `bank.secrets.redact_secrets` on the text as written;
- one line: the text folded to one line (a `--when` flag, a JSON string, a `#lesson` field);
- lesson file: `bank check` on a hand-written lesson holding the text in its body (reported);
- commit message: groom's commit message quoting it in a reason.

Run: python benchmarks/secrets_coverage.py   (prints a markdown table)
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.bank.secret_cases import LOOK_ALIKES, SECRETS  # noqa: E402

from lessonbank.bank import lint, secrets  # noqa: E402
from lessonbank.bank.lesson import parse  # noqa: E402

LESSON = "---\nid: 01JGR00M0000000000000000S1\nslug: s\nwhen: w\ndo: d\npromote-to: rule:x\n---\n{body}\n"


def _gone(text: str, parts: tuple[str, ...]) -> bool:
    return not any(part in text for part in parts)


def _routes(text: str) -> dict[str, tuple[str, bool]]:
    """route -> (text after it, whether it reported a secret)."""
    folded = " ".join(text.split())
    lesson = LESSON.format(body=text)
    reported = any("holds a secret" in m for _, m, _ in lint.lesson_problems(parse(lesson), lesson, "s"))
    message = f"- s: verify failed: {text}\n"
    return {
        "gate": (secrets.redact_secrets(text)[0], False),
        "one line": (secrets.redact_secrets(folded)[0], False),
        "lesson file (bank check)": ("", reported),
        "commit message": (secrets.redact_secrets(message)[0], False),
    }


def main() -> None:
    routes = list(_routes("x"))
    caught = dict.fromkeys(routes, 0)
    missed: dict[str, list[str]] = {r: [] for r in routes}
    kept = dict.fromkeys(routes, 0)
    for name, text, parts in SECRETS:
        for route, (after, reported) in _routes(text).items():
            ok = reported if route.startswith("lesson file") else _gone(after, parts)
            caught[route] += ok
            if not ok:
                missed[route].append(name)
    for _name, text in LOOK_ALIKES:
        for route, (after, reported) in _routes(text).items():
            unchanged = {"gate": text, "one line": " ".join(text.split()), "commit message": f"- s: verify failed: {text}\n"}
            kept[route] += (not reported) if route.startswith("lesson file") else after == unchanged[route]
    print(f"| route | formats caught (of {len(SECRETS)}) | look-alikes left alone (of {len(LOOK_ALIKES)}) |")
    print("|---|---|---|")
    for route in routes:
        print(f"| {route} | {caught[route]} | {kept[route]} |")
    for route in routes:
        if missed[route]:
            print(f"\nmissed by {route}: {', '.join(missed[route])}")


if __name__ == "__main__":
    main()
