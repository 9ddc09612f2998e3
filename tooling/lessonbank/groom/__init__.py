"""Groom: lessons seen in two or more sessions leave the bank by one of two exits, as one git change.

snapshot (the committed code, and fast path, glob and regex questions about it) -> decide (which
lessons graduate, which went stale, which need a person) -> plan (HEAD read, every decision made
and every destination rendered, nothing written) -> apply (the plan written and committed, all
or nothing: transaction journals it, rolls it back, recovers it after a kill).
promote renders lessons into rules, skills and docs between the stable markers that markers owns;
rulesync carries rules/ to every agent's file. It may import `capture`, `bank`, the standard-library packages, `errors` and
`config`; nothing below it imports it.
"""
