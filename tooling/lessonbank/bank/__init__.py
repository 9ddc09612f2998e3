"""The bank: lesson files, the store on disk, git, and rendering of what is generated from them.

It owns the lesson file format, finding and loading a bank, atomic writes of its files, `bank init`,
`bank check`, the derived cache (what each lesson file gives the whole-bank commands, so only
changed files are parsed), one regenerate step for INDEX.md, BANK.md (render) and the compiled
index (compiled), and the team banks' registry and clones (`remotes`: add, pull, remove, commits
on a branch); `git` is the only module that imports gitpython. It may import the standard-library packages (`matching`, `state`, `index`), `errors`
and `config`.
"""
