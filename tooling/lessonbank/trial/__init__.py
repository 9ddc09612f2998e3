"""The trial and the ledger: whether the lessons help, and what they cost.

stats (the rule fixed in advance, the verdict, attribution, and the verdict as text and JSON),
inference (exact intervals and the permutation test), turns (the hooks' records as typed rows,
joined into the trial's turns), ledger (the mode, the verdict over the recorded turns, the ledger
summary and the lessons it flags), chart, and simulate (synthetic sessions through the real hook
processes). It reads what the hooks write through the kernel's records and arms and never imports
the hooks. It may import `bank`, `install`, the kernel, `errors` and `config`.
"""
