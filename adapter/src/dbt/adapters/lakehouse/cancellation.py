"""Ctrl-C and SIGTERM, honoured: the run stops at its next safe point and records what it did.

dbt on its own turns the first Ctrl-C into a KeyboardInterrupt in its main thread, asks the
adapter to cancel (dbt-spark cannot), waits for the running node to end, then prints a Python
traceback; SIGTERM kills the process outright.  Either way a purge goes on committing, or dies
between its swaps and its records.

While a dbt command of this adapter runs (from its first connection), the first SIGINT or
SIGTERM instead *requests* cancellation:

- every Spark job of the process is cancelled (`cancelAllJobs`; each node's statements run in
  the Spark job group named after its connection, which `cancel` cancels alone);
- the product's long work (the purge engine, retention) checks `Cancellation.check()` at its safe
  points, finishes what must not be cut (never between a table's backup and its swap), writes
  what it committed, and raises CancelledError;
- no new statement starts on a node's connection (the remaining nodes fail at once, saying so),
  while the run's hooks still run, so on-run-end records the invocation as `cancelled`;
- dbt then ends as after any failed node: a summary, exit code 1, no traceback.

Python runs a signal's handler only in the main thread, and only when that thread runs Python.
While a node runs, dbt's main thread waits for it (a lock); the kernel may give the signal to
another thread instead (it does, for one, when the process was stopped and another thread runs
first), which only trips a flag, and the handler would wait for the node's end: a purge would run
to its last table.  `SignalWaker` (one per process, the driver's) is woken by every signal (Python's
wakeup fd) and interrupts the main thread's wait, so that the handler runs at once.

A second signal falls back to the default behaviour (dbt's own abrupt interrupt, or the kill).
Outside a running command (parsing, `dbt ls`) the handlers behave as the defaults.  Nothing is
installed by importing this module: the adapter installs the handlers when it is created in the
main thread, and they hand over to the previous ones once the command is idle.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable
from typing import Any

from python_hooks.errors import CancelledError

SIGNALS = (signal.SIGINT, signal.SIGTERM)


# the signal that interrupts the main thread's wait; ignored by default, so one that arrives
# after its (no-op) handler is gone does nothing
KICK = signal.SIGURG


def _kicked(number: int, frame: Any) -> None:
    """The kick's handler: nothing; its delivery interrupts the main thread's wait, which then
    runs the handlers of the signals that are pending."""


class SignalWaker:
    """Makes the main thread run a SIGINT's or SIGTERM's handler at once, whichever thread the
    kernel gave the signal to: Python's C-level handler writes the signal's number to a pipe (the
    wakeup fd) from that thread, a watcher thread reads it and sends KICK to the main thread.

    One per process (set_wakeup_fd is), installed from the main thread; nothing is done when the
    process already has a wakeup fd (an asyncio loop in the main thread), nor outside the main
    thread.
    """

    def __init__(self) -> None:
        self.installed = False

    def install(self) -> None:
        if self.installed or threading.current_thread() is not threading.main_thread():
            return
        read, write = os.pipe()
        os.set_blocking(write, False)
        try:
            previous = signal.set_wakeup_fd(write, warn_on_full_buffer=False)
        except ValueError:
            previous = None
        if previous != -1:  # not the main thread of the main interpreter, or someone's fd already
            if previous is not None:
                signal.set_wakeup_fd(previous)
            os.close(read)
            os.close(write)
            return
        if signal.getsignal(KICK) in (signal.SIG_DFL, signal.SIG_IGN, None):
            signal.signal(KICK, _kicked)
        watcher = threading.Thread(target=self._watch, args=(read,), name="lakehouse-signals", daemon=True)
        watcher.start()
        self.installed = True

    @staticmethod
    def _watch(read: int) -> None:
        main = threading.main_thread().ident
        numbers = {int(number) for number in SIGNALS}
        while True:
            try:
                data = os.read(read, 64)
            except OSError:
                return
            if not data:
                return
            if main is not None and numbers.intersection(data):
                try:
                    signal.pthread_kill(main, KICK)
                except (ProcessLookupError, OSError):  # the main thread is gone: the process ends
                    return


class Cancellation:
    """One command's cancellation: requested once, checked by the work at its safe points."""

    def __init__(self) -> None:
        self._requested = threading.Event()
        self.reason = ""
        self.active = False  # a command of this adapter is running (a connection was opened)
        self._previous: dict[int, Any] = {}
        self._cancel_jobs: Callable[[], None] | None = None

    @property
    def requested(self) -> bool:
        return self._requested.is_set()

    def request(self, reason: str) -> None:
        if self._requested.is_set():
            return
        self.reason = reason
        self._requested.set()
        if self._cancel_jobs is not None:
            try:
                self._cancel_jobs()
            except Exception:  # noqa: BLE001 - a session already gone has no job to cancel
                pass

    def check(self, what: str = "") -> None:
        """Raise CancelledError when cancellation was requested (at a safe point of the work)."""
        if self._requested.is_set():
            raise CancelledError(
                f"Cancelled ({self.reason}){': ' + what if what else ''}. What was committed before is recorded;"
                " run the command again to finish the work."
            )

    def reset(self) -> None:
        self._requested.clear()
        self.reason = ""

    # ---- the signal handlers ----------------------------------------------------------------
    def install(self, cancel_jobs: Callable[[], None]) -> None:
        """Install the handlers (main thread only; elsewhere nothing is installed)."""
        self._cancel_jobs = cancel_jobs
        if threading.current_thread() is not threading.main_thread() or self._previous:
            return
        for number in SIGNALS:
            try:
                self._previous[number] = signal.signal(number, self._handle)
            except (ValueError, OSError):  # not the main thread of the main interpreter
                self._previous.clear()
                return

    def _handle(self, number: int, frame: Any) -> None:
        name = signal.Signals(number).name
        if self.active and not self.requested:
            from dbt.adapters.events.logging import AdapterLogger

            self.request(name)
            AdapterLogger("lakehouse").info(
                f"{name}: cancelling. The running work stops at its next safe point and records what it"
                " committed; send it again to stop at once."
            )
            return
        previous = self._previous.get(number)
        self.uninstall()
        if callable(previous):
            previous(number, frame)
        elif number == signal.SIGINT:
            raise KeyboardInterrupt
        else:
            os.kill(os.getpid(), number)

    def uninstall(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        for number, previous in self._previous.items():
            try:
                signal.signal(number, previous if previous is not None else signal.SIG_DFL)
            except (ValueError, OSError):
                pass
        self._previous.clear()
