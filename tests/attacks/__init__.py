"""Issue 12's attacks, made from the outside: one module per numbered item of the issue.

Each attack goes through what a hostile lesson, payload or file would meet: the `bank` CLI
(click's CliRunner, or a `bank` process for a read-only mount), the hook process as installed
with a payload on stdin (tests.hook_support), and real git repositories in tmp_path.

- test_item1_hang: hostile command regexes and path globs cannot hang a hook; every capture
  route and `bank check` refuse them, `bank index` leaves them out, and when one is in the
  index all the same the hook answers and logs the trigger it gave up on.
- test_item2_secrets: credentials in each provider's published shape reach no file and no
  commit by any capture route (flags, --json with the secret in the title, i.e. the file
  name, --blocks, --pending, scan); look-alikes (`$VAR`, `${VAR}`, `$(cmd)`, prose) stay.
- test_item3_groom: kill -9 at random moments of `bank groom --commit` and `--branch`
  (benchmarks/crash_groom.py, a few trials); a stale index.lock refuses before any write;
  `--branch` never moves the user's branch nor their uncommitted files; temporary files of
  killed writers are cleaned, not counted as changes.
- test_item4_own_files: destinations that name the bank's own files or .git/ in another case
  or another Unicode form are refused by capture and reported by `bank check`.
- test_item5_smaller: `@path` imports and raw HTML made inert in everything rendered; a Stop
  hook that cannot save a block keeps it in the user's state folder and says so; every
  command on a read-only mount or a full disk ends in one line naming the path; non-UTF-8
  bank.toml; spaced-JSON transcripts; `seen` without a session; invalid lessons left out of
  INDEX.md; the hook and `bank hook` read bank.toml alike; ids checked; huge payloads cut.
"""
