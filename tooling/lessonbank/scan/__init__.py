"""Scan: lessons found in the transcripts users already have, named in the order data flows.

sources (where transcripts are, reading only new bytes) -> parse (records into events) -> outcomes
(how each command ended, whether its status was masked) -> detect (events into candidates: fixed
checks, plain shell mistakes via shellfail, corrections and the agent's words via prose; the types in
events) -> distill (an episode into a lesson: when, do, title, cause-based triggers, verify) ->
candidates (scoring, merging, the store, review and accepting through capture); compliance keeps the
#lesson protocol's record per agent and week. It may import
`capture`, `bank`, the standard-library packages (`matching`, `state`, `index`), `errors` and `config`.
"""
