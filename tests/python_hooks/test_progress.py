"""Retention's progress: `i/N`, elapsed and an estimate, told by the pass's own thread."""

from __future__ import annotations

import threading

from python_hooks.retention.progress import Progress


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_the_line_counts_done_items_and_estimates_what_is_left() -> None:
    clock = Clock()
    progress = Progress(40, lambda line: None, label="Retention", clock=clock)
    assert progress.line() == "Retention: 0/40 item(s) done, 0 s elapsed, no estimate yet"
    progress.working_on("the side tables of sales.orders")
    for _ in range(12):
        progress.advance()
    clock.now += 30
    progress.working_on("the side tables of sales.returns")
    # 12 items in 30 s: 28 left at 2.5 s each
    assert progress.line() == (
        "Retention: 12/40 item(s) done, 30 s elapsed, about 70 s left; now: the side tables of sales.returns"
    )
    clock.now += 600
    assert "630 s" not in progress.line() and "10.5 min elapsed" in progress.line()


def test_the_thread_tells_the_state_every_interval_and_is_joined() -> None:
    lines: list[str] = []
    told = threading.Event()

    def emit(line: str) -> None:
        lines.append(line)
        if len(lines) >= 2:
            told.set()

    with Progress(3, emit, interval=0.05) as progress:
        progress.working_on("a long delete")
        # wait for the reports themselves, not for a fixed time
        assert told.wait(timeout=30), "no progress was told"
    assert progress._thread is None  # joined when the block ended
    count = len(lines)
    assert all("0/3 item(s) done" in line and "now: a long delete" in line for line in lines[:2])
    assert progress.reports == count


def test_a_pass_with_nothing_to_do_starts_no_thread() -> None:
    with Progress(0, lambda line: None, interval=0.05) as progress:
        assert progress._thread is None
