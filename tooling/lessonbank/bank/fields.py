"""The values a lesson's `type`, `source` and `status` may take: apart from bank.lesson, so that a
command declaring its options does not import the YAML parser (about 30 ms of `bank list`)."""

TYPES = ("gotcha", "pattern", "convention", "command")
SOURCES = ("typed", "learned", "scanned")
STATUSES = ("active", "needs-review", "disabled")
