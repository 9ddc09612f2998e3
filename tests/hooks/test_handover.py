"""hooks.handover: the lines it writes read back."""


def test_slug_of_reads_back_the_slug_a_line_names() -> None:
    from lessonbank.hooks import handover

    assert handover.slug_of(handover.line("make-first", "run make ] first")) == "make-first"
    assert handover.slug_of(handover.line("team-rule", "text", "team:a")) == "team-rule"
    assert [handover.slug_of(t) for t in ("lessonbank: 2 lessons", "- no slug", "- [] empty", "")] == [None] * 4
