"""Groom: lessons seen in two or more sessions leave the bank by one of two exits, as one git change.

decide (which graduate, which went stale, which need a person) -> promote (render into rules,
skills and docs between markers) -> apply (the plan carried out and committed); rulesync carries
rules/ to every agent's file. It may import `bank`, the kernel, `errors` and `config`.
"""
