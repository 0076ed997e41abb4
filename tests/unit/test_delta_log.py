"""How long a Delta table's log keeps an entry, as the purge reads `delta.logRetentionDuration`
for the erasure ledger's date (python_hooks/purge/delta_log.py)."""

from __future__ import annotations

import pytest

from python_hooks.purge.delta_log import log_retention_hours


@pytest.mark.parametrize(
    ("text", "hours"),
    [
        (None, 720.0),  # Delta's default, 30 days
        ("interval 30 days", 720.0),
        ("interval 1 week", 168.0),
        ("INTERVAL 12 HOURS", 12.0),
        ("7 days", 168.0),
        ("interval 90 minutes", 1.5),
        # what is not one plain interval gets no date, never a guessed one
        ("interval 1 day 2 hours", None),
        ("forever", None),
    ],
)
def test_a_log_retention_is_read_as_hours_or_not_at_all(text, hours):
    assert log_retention_hours(text) == hours
