"""What every benchmark here measures: wall time and the peak RSS of this process and its
children (the Spark JVM), sampled every 50 ms."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import psutil


class PeakRss:
    """Peak resident memory of this process and its children while active."""

    def __init__(self) -> None:
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        me = psutil.Process()
        while not self._stop.is_set():
            total = 0
            seen: dict[int, tuple[str, ...]] = {}
            for proc in [me, *me.children(recursive=True)]:
                try:
                    command = tuple(proc.cmdline())
                    seen[proc.pid] = command
                    # A fork that has not exec'd yet (Hadoop's local filesystem forks the JVM to
                    # run `chmod` or `stat`) shares its parent's pages: counting its RSS too would
                    # double the JVM for that instant.
                    if seen.get(proc.ppid()) == command:
                        continue
                    total += proc.memory_info().rss
                except psutil.Error:  # a child that just ended
                    pass
            self.peak = max(self.peak, total)
            time.sleep(0.05)

    def __enter__(self) -> PeakRss:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def measure(fn: Callable[[], Any]) -> tuple[float, int, Any]:
    """(wall seconds, peak RSS bytes, fn's result)."""
    with PeakRss() as rss:
        start = time.perf_counter()
        result = fn()
        wall = time.perf_counter() - start
    return wall, rss.peak, result
