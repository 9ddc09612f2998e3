"""State: `.lessonbank/`, the bank's git-ignored state folder, what the hooks keep in it, and the user's own folders.

`statedir` is the one map of the folder (every name in it, atomic writes and appends that follow
no symlink); `userdirs` the user's XDG folders (outside every repository: trusted); `records`
writes and reads the hooks' JSON lines (ledger, checks), `arms` the trial's arms, `scrub` keeps
secrets out of what the hooks write, `jsonio` JSON through the C accelerator without importing
`json`. Standard library only, on the hook hot path: it may import `lessonbank.errors` and
`lessonbank.config` and nothing else of the package; nothing is imported here.
"""
