"""The bank: lesson files, the store on disk, git, and rendering of what is generated from them.

It owns the lesson file format, finding and loading a bank, atomic writes of its files, `bank init`,
`bank check`, the bank's side of the derived cache (`catalog`: what each lesson file gives the
whole-bank commands; the cache itself is `index.derived`), one regenerate step for INDEX.md,
BANK.md and the compiled index (`render`, which hands the compiled index to
`index.compiled_update`), and the team banks' registry and clones (`remotes`: add, pull, remove,
commits on a branch); `git` is the only module that imports gitpython. It may import the
standard-library packages (`matching`, `state`, `index`), `errors` and `config`.
"""
