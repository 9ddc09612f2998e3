"""Scan: lessons found in the transcripts users already have, named in the order data flows.

sources (where transcripts are, reading only new bytes) -> parse (records into events) -> outcomes
(how each command ended) -> detect (events into candidates) -> candidates (scoring, merging, the
store, review and accepting through capture). It may import `capture`, `bank`, the kernel, `errors` and `config`.
"""
