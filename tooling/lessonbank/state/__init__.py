"""State: `.lessonbank/`, the bank's git-ignored state folder, and what the hooks keep in it.

`statedir` is the one map of the folder (every name in it, atomic writes, appends, the user's
XDG folders); `records` writes and reads the hooks' JSON lines (ledger, checks), `arms` the
trial's arms, `jsonio` JSON through the C accelerator without importing `json`. Standard library
only, on the hook hot path: it may import `lessonbank.errors` and `lessonbank.config` and nothing
else of the package; nothing is imported here.
"""
