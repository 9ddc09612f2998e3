"""Attacks made from the outside, one module per behaviour they prove.

Each attack goes through what a hostile lesson, payload or file would meet: the `bank` CLI
(click's CliRunner, or a `bank` process for a read-only mount), the hook process as installed
with a payload on stdin (tests.hook_support), and real git repositories in tmp_path.

- test_hostile_patterns_never_hang: hostile command regexes and path globs cannot hang a hook;
  every capture route and `bank check` refuse them, `bank index` leaves them out, and when one
  is in the index all the same the hook answers and logs the trigger it gave up on.
- test_secrets_never_reach_a_file_or_a_commit: credentials in each provider's published shape
  reach no file and no commit by any capture route (flags, --json with the secret in the title,
  i.e. the file name, --blocks, --pending, scan); look-alikes (`$VAR`, `${VAR}`, `$(cmd)`,
  prose) stay.
- test_groom_is_all_or_nothing: kill -9 at random moments of `bank groom --commit` and
  `--branch` (benchmarks/crash_groom.py, a few trials); a stale index.lock refuses before any
  write; `--branch` never moves the user's branch nor their uncommitted files; temporary files
  of killed writers are cleaned, not counted as changes.
- test_the_banks_own_files_are_never_a_destination: destinations that name the bank's own files
  or .git/ in another case or another Unicode form are refused by capture and reported by
  `bank check`.
- test_lesson_text_is_inert_in_memory_files: `@path` imports and raw HTML made inert in
  everything rendered.
- test_an_unwritable_bank_loses_nothing_and_says_where: every command on a read-only mount or a
  full disk ends in one line naming the path; a Stop hook that cannot save a block keeps it in
  the user's state folder and says so.
- test_a_broken_bank_toml_stops_commands_not_hooks: a non-UTF-8 or invalid bank.toml is one
  line for a command, a warning for the hook and `bank hook` alike.
- test_spaced_json_transcripts_are_read, test_a_capture_without_a_session_counts_once,
  test_invalid_lessons_are_reported_and_left_out (ids checked too),
  test_huge_payloads_are_cut_and_answered.
"""
