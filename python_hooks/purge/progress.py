"""Progress a person can follow while a purge (or any long pass over tables) runs.

A line when each table starts (`table i/N`), and, while one statement runs long, a line at least
every `every` seconds with what it is doing, what is done so far, the time elapsed and an
estimate of what remains (the mean time of the tables done, times those left).  The ticker is
a thread of this object's own, stopped and joined when the `with` block ends.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from python_hooks.catalog import console


def clock(seconds: float) -> str:
    seconds = int(seconds)
    return (
        f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"
        if seconds >= 3600
        else f"{seconds // 60}:{seconds % 60:02d}"
    )


class Progress:
    def __init__(self, what: str, total: int, every: float = 10.0) -> None:
        self.what = what
        self.total = total
        self.every = every
        self.started = time.monotonic()
        self.last_line = self.started
        self.index = 0
        self.table = ""
        self.step = ""
        self.tables_done = 0
        self.rows = 0
        self.partitions = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None

    def __enter__(self) -> Progress:
        self._ticker = threading.Thread(target=self._tick, name="lakehouse-progress", daemon=True)
        self._ticker.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join()

    def _say(self, text: str) -> None:
        with self._lock:
            self.last_line = time.monotonic()
        console.say(f"{self.what}: {text}")

    def start_table(self, index: int, name: str, step: str) -> None:
        self.index, self.table, self.step = index, name, step
        self._say(f"table {index}/{self.total} {name}: {step}")

    def set_step(self, step: str) -> None:
        self.step = step

    def table_done(self, rows: int, partitions: int) -> None:
        with self._lock:
            self.tables_done += 1
            self.rows += rows
            self.partitions += partitions

    def status(self) -> str:
        elapsed = time.monotonic() - self.started
        left = self.total - self.tables_done
        estimate = (
            f", about {clock(elapsed / self.tables_done * left)} left" if self.tables_done and left else ""
        )
        return (
            f"table {self.index}/{self.total} {self.table}: {self.step}; so far {self.tables_done} table(s) done,"
            f" {self.rows:,} row(s) removed from {self.partitions} partition(s); {clock(elapsed)} elapsed{estimate}"
        )

    def _tick(self) -> None:
        while not self._stop.wait(1.0):
            with self._lock:
                quiet = time.monotonic() - self.last_line
            if quiet >= self.every and self.table:
                self._say(self.status())
