"""The hook process: one payload in, the lessons that fit out, in milliseconds, failing open.

entry (the script agents run) -> dispatch (an explicit event -> handler table) -> one module per
event (session_start, prompt, pre_tool, post_tool, stop), with handover (budget, claims, ledger)
and session (claims and turns). Standard library only: it imports the kernel, `errors` and
`config`, never anything that loads click, yaml, jinja2 or git.
"""
