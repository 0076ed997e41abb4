"""The guides and concept pages say what is true now: none holds a date, an issue number, a commit
hash or a test count.  Those belong to the history page (docs/history.md) and the benchmark page
(docs/benchmarks.md, whose figures carry the date they were measured, and
docs/benchmarks-history.md), which are left out here; a guide states the lasting fact and links there.

Example values are not prose: fenced code blocks and inline code spans (a partition value
`2024-01-01`, a timestamp in example output) are stripped before the checks.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DATED = {"docs/history.md", "docs/benchmarks.md", "docs/benchmarks-history.md"}

DATE = re.compile(r"\b20\d\d-[01]\d-[0-3]\d\b")
ISSUE = re.compile(r"\b[Ii]ssues? #?\d+")
# a word of 7 to 40 hex digits with at least one letter and one digit
HASH = re.compile(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}\b")
COUNT = re.compile(r"\b\d+ (?:tests?|passed|failed)\b")
CHECKS = {"a date": DATE, "an issue number": ISSUE, "a commit hash": HASH, "a test count": COUNT}


def guides() -> list[str]:
    """The README and docs/**/*.md (the generated reference pages too) but the dated pages,
    relative to the repository."""
    found = ["README.md", *(str(path.relative_to(REPO)) for path in sorted((REPO / "docs").rglob("*.md")))]
    return [name for name in found if name not in DATED]


def prose(text: str) -> list[str]:
    """The lines of `text` with fenced code blocks blanked and inline code spans removed, so that
    line numbers stay those of the file."""
    lines, fenced = [], False
    for line in text.splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            lines.append("")
            continue
        lines.append("" if fenced else re.sub(r"(`+)(?:(?!\1).)+?\1", "", line))
    return lines


def findings(text: str) -> list[tuple[int, str, str]]:
    return [
        (number, kind, match.group(0))
        for number, line in enumerate(prose(text), 1)
        for kind, pattern in CHECKS.items()
        for match in pattern.finditer(line)
    ]


def test_the_checks_find_what_they_are_for() -> None:
    text = (
        "Measured on 2026-11-27 at 76641f4 (issue 29): 197 passed, 3 tests.\n"
        "Against Issues #15 and a commit 0123456789abcdef0123456789abcdef01234567.\n"
    )
    found = [(number, kind) for number, kind, _ in findings(text)]
    assert found == [
        (1, "a date"),
        (1, "an issue number"),
        (1, "a commit hash"),
        (1, "a test count"),
        (1, "a test count"),
        (2, "an issue number"),
        (2, "a commit hash"),
    ]


def test_code_and_ordinary_words_are_not_flagged() -> None:
    text = (
        "Partition `order_date=2024-01-01`, output `2026-11-26T04:22:53Z` and `at 76641f4`.\n"
        "```\npurge: kept until 2026-11-30 12:00 UTC\n```\n"
        "A deadline, a decade, 1000000 rows, 5M rows, the faced effect, 20 tables, 3 testers.\n"
        "`bench/purge_bench.py --rows 5000000` and `` a `2024-01-02` span ``.\n"
    )
    assert findings(text) == []


@pytest.mark.parametrize("name", guides())
def test_a_guide_holds_no_date_issue_hash_or_count(name: str) -> None:
    found = findings((REPO / name).read_text(encoding="utf-8"))
    assert not found, f"{name} holds what belongs in docs/history.md or docs/benchmarks.md:\n" + "\n".join(
        f"{name}:{number}: {kind}: {matched!r}" for number, kind, matched in found
    )
