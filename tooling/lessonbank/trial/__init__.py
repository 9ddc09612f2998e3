"""The trial and the ledger: whether the lessons help, and what they cost.

stats (the rule fixed in advance, applied by session to per-turn records; per-lesson harm tests),
inference (the session-level studentized permutation test, its interval, Holm's correction; numpy),
report (the verdict as text and JSON), turns (the hooks' records as typed rows, joined into the
trial's per-turn records; reading exported records), ledger (the mode, the trial's start, reset and
log, the verdict over the recorded sessions, the ledger summary and the lessons it flags), chart,
and simulate (synthetic sessions through the real hook processes). It reads what the hooks write
through `state`'s records and arms and never imports the hooks. It may import `bank`,
`install`, the standard-library packages, `errors` and `config`.
"""
