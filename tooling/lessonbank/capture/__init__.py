"""Capture: the one draft type, `#lesson` blocks, the gates and redaction, and saving a draft.

Capture, the Stop hook (through `bank capture --blocks`) and scan all hand over a `Draft`; it goes
through the gates (destination, duplicates, preferences, secrets) into lessons/ or onto a banked
lesson's seen count; `target` sends drafts into the personal bank or a team bank's clone
(`bank capture --to`) through the same gates. It may import `bank`, the standard-library packages (`matching`, `state`, `index`), `errors` and `config`.
"""
