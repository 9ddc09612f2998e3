"""The index: INDEX.md as data, the compiled index the hooks read, and every cache of the lessons, with the standard library only.

`index_md` escapes INDEX.md's cells and parses the table back. The compiled index
(`.lessonbank/index.bin`): `compiled_read` is its format, read with a few `pread`s per hook call;
`compiled_pieces` works out what one INDEX.md row gives it, `compiled_build` joins the rows'
pieces into its tables (in memory for the hooks' fallback, streamed for `bank index`) and
`compiled_bytes` lays them out as the file's bytes;
`compiled_patch` patches it for a few changed, added or removed rows;
`compiled_update` brings a bank's file up to date after INDEX.md was written (nothing, a new key, a
patch or a build; the compiled regexes kept in triggers.cache). The caches of the lessons:
`derived` (with `derived_file`, its layout on disk, and `derived_write`, its writing) is derived.cache, what each lesson file gives
the whole-bank commands, and `lesson_cache` is lessons.cache, the parsed lessons `Bank.load`
reads; `listing` is what both compare of the lessons folder (names and stat keys). `layers` finds the personal and team banks and reads every layer's index for one hook call.

The hooks import `compiled_read`, `layers` and (when the file is stale) `compiled_build`, so
nothing here may import the bank: what these modules need of it (how a lesson file is parsed and
described, how a file is written) they are given as arguments, or take a bank as a small protocol
(`compiled_update.Place`: its root and state folder). It may import `matching`, `state`,
`lessonbank.errors` and `lessonbank.config`; nothing is imported here.
"""
