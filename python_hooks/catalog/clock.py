"""The clock retention and restore judge ages by: the driver's, or var `retention_now`.

A `retention_now` in the past keeps more than the policies would (nothing is old enough yet); one
in the future deletes more (every backup, staging and trash table due at once, past the policies
and retention_min_hours), so it is refused unless the run says it simulates a later day, and a
pass that used it records it (retention_log, kind `clock`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from python_hooks.errors import ConfigError

DAY_MS = 86_400_000
# how far ahead of the driver's clock `retention_now` may lie and still be taken as clock skew
FUTURE_TOLERANCE_MS = 5 * 60_000


@dataclass(frozen=True)
class Clock:
    """The time a retention pass or a restore judges ages by: the driver's clock, or the var
    `retention_now` that overrides it (`overridden`), and the driver's own time beside it."""

    ms: int
    driver_ms: int
    overridden: bool = False

    def describe(self) -> str:
        """One line for the log: which time was used, and the driver's when it was overridden."""
        used = _utc(self.ms)
        if not self.overridden:
            return f"the driver's clock, {used}"
        return f"retention_now {used}, in place of the driver's clock {_utc(self.driver_ms)}"


def _utc(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time_ms(value: Any) -> int:
    """Epoch ms of `retention_now`: epoch ms, or an ISO timestamp (UTC unless it has an offset)."""
    if isinstance(value, bool):
        raise ValueError(value)
    if isinstance(value, (int, float)):
        return int(value)
    if str(value).strip().isdigit():
        return int(str(value).strip())
    parsed = datetime.fromisoformat(str(value).strip())
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=timezone.utc)
    return int(parsed.timestamp() * 1000)


def retention_clock(value: Any, allow_future: Any = False, driver_ms: int | None = None) -> Clock:
    """The clock of a retention pass or a restore: the driver's, unless var `retention_now` is set.

    A `retention_now` more than FUTURE_TOLERANCE_MS ahead of the driver's clock is refused unless
    `allow_future` (var `retention_allow_future_now`, read with compliance.bool_var): a clock in
    the future makes every backup, staging and trash table due at once, past the policies and
    retention_min_hours, as if days had passed.  A clock in the past only keeps more.
    """
    driver = int(time.time() * 1000) if driver_ms is None else driver_ms
    if value is None or str(value).strip() == "":
        return Clock(driver, driver)
    try:
        ms = parse_time_ms(value)
    except (TypeError, ValueError, OverflowError):
        raise ConfigError(
            f"Var retention_now is {str(value)!r}: expected epoch milliseconds or an ISO timestamp in UTC"
            " (2026-12-06T10:00:00). Nothing was deleted."
        ) from None
    moved = ms - driver
    if moved > FUTURE_TOLERANCE_MS and allow_future is not True:
        raise ConfigError(
            f"Var retention_now is {_utc(ms)}, {moved / DAY_MS:.1f} day(s) ahead of this driver's clock"
            f" ({_utc(driver)}): a clock in the future makes every backup, staging and trash table due at once,"
            " past the retention policies and retention_min_hours. Nothing was deleted. To delete copies sooner,"
            " lower the policy instead (backup_retention_days: 0 with retention_allow_short: true); to simulate a"
            " later day on a warehouse of tests, also set retention_allow_future_now: true (the pass records the"
            " clock it used in retention_log)."
        )
    return Clock(ms, driver, overridden=True)
