"""What a long retention pass is doing, told at least every `interval` seconds.

    Retention: 12/40 item(s) done, 31 s elapsed, about 72 s left; now: sales.orders_backup_1700000000000

A pass is a list of items known up front (a side-table family, a live table under a partition
policy, a stale data record); the pass calls `advance` after each and `working_on` before it.  A
thread owned by the pass (started by `with`, joined when the block ends) tells the state every
`interval` seconds, so one item that takes minutes (a large delete, a slow metastore) still shows
that the pass is alive.  A pass shorter than `interval` prints nothing.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from types import TracebackType

MIN_INTERVAL = 0.05


def _seconds(value: float) -> str:
    value = max(0.0, value)
    if value < 90:
        return f"{value:.0f} s"
    if value < 5400:
        return f"{value / 60:.1f} min"
    return f"{value / 3600:.1f} h"


class Progress:
    """`i/N`, elapsed and an estimate of what is left, told every `interval` seconds while it runs."""

    def __init__(
        self,
        total: int,
        emit: Callable[[str], None],
        interval: float = 10.0,
        label: str = "Retention",
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.total = max(0, int(total))
        self.emit = emit
        self.interval = max(MIN_INTERVAL, float(interval))
        self.label = label
        self.clock = clock
        self.done = 0
        self.current: str | None = None
        self.started = clock()
        self.reports = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def line(self) -> str:
        """The state now: `Retention: i/N item(s) done, <elapsed> elapsed, about <left> left; now: <item>`."""
        elapsed = self.clock() - self.started
        text = f"{self.label}: {self.done}/{self.total} item(s) done, {_seconds(elapsed)} elapsed"
        if self.done:
            left = elapsed / self.done * (self.total - self.done)
            text += f", about {_seconds(left)} left"
        else:
            text += ", no estimate yet"
        if self.current:
            text += f"; now: {self.current}"
        return text

    def working_on(self, item: str) -> None:
        self.current = item

    def advance(self) -> None:
        self.done += 1
        self.current = None

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self.reports += 1
            self.emit(self.line())

    def __enter__(self) -> Progress:
        self.started = self.clock()
        if self.total:
            self._thread = threading.Thread(target=self._run, name="retention-progress", daemon=True)
            self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
