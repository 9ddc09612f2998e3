"""What `bank scan` prints: its summary lines and its JSON, from a scan's report and the store."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the scanner is imported when a scan command runs, not with every `bank` command
    from lessonbank.scan.candidates import Report, Store
    from lessonbank.scan.events import Candidate

SKIP_LABELS = {
    "denied": ("permission denial", "permission denials"),
    "rejected": ("rejected tool call", "rejected tool calls"),
    "interrupted": ("interrupt", "interrupts"),
    "invalid": ("tool-use error", "tool-use errors"),
    "masked": ("masked exit status", "masked exit statuses"),
}


def _n(count: int, one: str, many: str) -> str:
    return f"{count} {one if count == 1 else many}"


def _size(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n >= 1e6 else f"{n / 1e3:.1f} kB"


def summary(report: Report, store: Store, dry_run: bool = False) -> list[str]:
    """The lines `bank scan` prints."""
    from lessonbank.scan.candidates import short_id

    st = report.stats
    tiers = {1: 0, 2: 0}
    for key in report.new + report.updated:
        if key in store.candidates:
            tiers[store.candidates[key].tier] += 1
    read = f"{_n(st.files, 'transcript', 'transcripts')}: {st.files_read} with new lines, {_size(st.bytes_read)} read"
    if st.restarted:
        read += f", {st.restarted} read again from the start (truncated or replaced)"
    lines = [
        f"scanned {read}",
        f"found {_n(len(report.new), 'new candidate', 'new candidates')}, {len(report.updated)} seen again: "
        f"{tiers[1]} self-reported (tier 1), {tiers[2]} heuristic (tier 2)",
    ]
    harness = {k: n for k, n in st.skipped.items() if k in SKIP_LABELS}
    if harness:
        parts = [_n(harness[k], *SKIP_LABELS[k]) for k in sorted(harness)]
        lines.append(f"skipped {_n(sum(harness.values()), 'non-mistake', 'non-mistakes')}: {', '.join(parts)}")
    episodes = {k: n for k, n in st.skipped.items() if k not in SKIP_LABELS}
    if episodes:  # mistakes, or what looked like one, that teach nothing worth injecting
        parts = [f"{episodes[k]} {k}" for k in sorted(episodes)]
        lines.append(f"set aside {_n(sum(episodes.values()), 'episode', 'episodes')} with no lesson: {', '.join(parts)}")
    if report.watching:
        lines.append(f"watching {_n(len(report.watching), 'error', 'errors')} met in one session so far "
                     "(a second session makes each a candidate)")  # fmt: skip
    if report.dropped:
        lines.append(f"ignored {_n(report.dropped, 'candidate', 'candidates')} rejected before")
    if st.malformed:
        lines.append(f"skipped {_n(st.malformed, 'malformed line', 'malformed lines')}")
    if st.waiting:
        lines.append(f"{_n(st.waiting, 'file ends', 'files end')} in a half-written line (read next time)")
    if report.protocol:  # Phase 0: does the self-report protocol work for this team?
        fixed = sum(f for f, _ in report.protocol.values())
        said = sum(b for _, b in report.protocol.values())
        per = ", ".join(f"{agent} {b} of {f}" for agent, (f, b) in sorted(report.protocol.items()))
        lines.append(f"#lesson protocol: {said} of {_n(fixed, 'fixed check', 'fixed checks')} came with a block ({per})")
    for key, outcome in report.accepted:
        lines.append(f"accepted {short_id(key)}: " + "; ".join(outcome))
    for key, message in report.refused:
        lines.append(f"not accepted {short_id(key)}: {message}")
    pending = len(store.pending())
    waiting = _n(pending, "candidate waits", "candidates wait")
    lines.append(f"{waiting} for review: `bank review`" if pending else "nothing waits for review")
    if dry_run:
        lines.append("dry run: nothing was written")
    return lines


def report_json(report: Report, store: Store, dry_run: bool) -> dict[str, Any]:
    from lessonbank.scan.candidates import short_id

    st = report.stats
    return {
        "files": st.files,
        "files_read": st.files_read,
        "bytes_read": st.bytes_read,
        "lines": st.lines,
        "parsed": st.parsed,
        "malformed": st.malformed,
        "waiting": st.waiting,
        "restarted": st.restarted,
        "skipped": dict(sorted(st.skipped.items())),
        "new": sorted(short_id(k) for k in report.new),
        "updated": sorted(short_id(k) for k in report.updated),
        "ignored_rejected": report.dropped,
        "watching": sorted(short_id(k) for k in report.watching),
        "accepted": [{"id": short_id(k), "outcome": o} for k, o in report.accepted],
        "refused": [{"id": short_id(k), "reason": m} for k, m in report.refused],
        "protocol": {agent: {"fixed": f, "with_block": b} for agent, (f, b) in sorted(report.protocol.items())},
        "pending": [candidate_json(c) for c in store.pending()],
        "dry_run": dry_run,
    }


def candidate_json(cand: Candidate) -> dict[str, Any]:
    from lessonbank.scan.candidates import short_id

    data = cand.to_dict()
    data["id"] = short_id(cand.key)
    data["seen"] = len(cand.sessions)
    return data
