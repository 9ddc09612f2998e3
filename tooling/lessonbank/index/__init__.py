"""The index: INDEX.md as data and the compiled index the hooks read, with the standard library only.

`index_md` escapes INDEX.md's cells and parses the table back; `compiled_build` turns its rows into
lookup tables and file bytes (`compiled_stream` does it in bounded memory); `compiled_read` is
the file's format, read with a few `pread`s per hook call; `compiled_patch` and `compiled_rows`
patch it for a few changed rows; `layers` finds the personal and team banks and reads every
layer's index for one hook call. It may import `matching`, `state`, `lessonbank.errors` and
`lessonbank.config`; nothing is imported here.
"""
