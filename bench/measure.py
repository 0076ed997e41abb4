"""What every benchmark here measures: wall time and the peak RSS of this process and its
children (the Spark JVM), sampled every 50 ms."""

from __future__ import annotations

import statistics
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


def ratios(
    runs: list[dict[str, Any]], name: str, numerator: Callable[[dict[str, Any]], float], floor: str
) -> None:
    """Each repetition's `numerator` over the floor measured in the same repetition, kept in the
    run as `name`; their median is then what the medians of the runs report.  The one way every
    benchmark here states a ratio: a ratio of two medians would pair figures of different
    repetitions (a slow floor with a fast purge)."""
    for run in runs:
        run[name] = round(numerator(run) / run[floor], 2)


def median_of(runs: list[dict[str, Any]], key: str) -> float:
    return round(statistics.median(run[key] for run in runs), 2)


def measure(fn: Callable[[], Any]) -> tuple[float, int, Any]:
    """(wall seconds, peak RSS bytes, fn's result)."""
    with PeakRss() as rss:
        start = time.perf_counter()
        result = fn()
        wall = time.perf_counter() - start
    return wall, rss.peak, result
