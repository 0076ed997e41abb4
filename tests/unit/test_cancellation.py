"""A signal reaches the command's cancellation while a node runs, whichever thread the kernel gives
it to (cancellation.SignalWaker).

Python runs a handler only in the main thread, when that thread runs Python.  While a node runs,
dbt's main thread waits for it on a lock.  When the kernel gives the signal to another thread (it
did in the fault harness, which stops the process at a step and then sends SIGINT and SIGCONT), the
handler waited for the node's end, and a purge ran to its last table before it saw its
cancellation.  Here the main thread blocks SIGINT, so that the kernel gives it to another thread
every time: without the waker the node never sees the cancellation while it runs; with it, at
once.  Real processes and signals, no Spark.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

CHILD = textwrap.dedent(
    """
    import linecache, os, signal, sys, threading, time
    from dbt.adapters.lakehouse.cancellation import Cancellation, SignalWaker

    cancellation = Cancellation()
    cancellation.install(lambda: None)
    cancellation.active = True
    if sys.argv[1] == "waker":
        SignalWaker().install()
    seen = []

    sent = []  # when the parent said it had sent SIGINT (its line on stdin)

    def told():
        sys.stdin.readline()
        sent.append(time.monotonic())

    def main_thread_waits():
        # True once the main thread is inside join's lock acquire, where no handler runs until
        # the node ends.  Before that it runs bytecode, and a handler would run there at once.
        frame = sys._current_frames().get(threading.main_thread().ident)
        if frame is None or frame.f_code.co_filename != threading.__file__:
            return False
        line = linecache.getline(frame.f_code.co_filename, frame.f_lineno)
        return "lock.acquire(" in line or "_handle.join(" in line  # 3.11 / 3.13

    def node():
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT])  # this thread takes it
        while not main_thread_waits():
            time.sleep(0.01)
        print("RUNNING", flush=True)  # the parent sends SIGINT
        started = time.monotonic()
        # until 3 s after the parent sent it, however late a loaded machine lets it send
        while not sent or time.monotonic() - sent[0] < 3:
            if cancellation.requested:
                seen.append(round(time.monotonic() - started, 3))
                return
            time.sleep(0.01)

    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGINT])  # not the main thread
    threading.Thread(target=told, daemon=True).start()
    worker = threading.Thread(target=node)
    worker.start()
    worker.join()  # the main thread waits for the node, as dbt's does
    print("SEEN", seen[0] if seen else None, cancellation.reason or None, flush=True)
    """
)


def seen_after_sigint(mode: str) -> tuple[str, str]:
    """(seconds the node waited for its cancellation or 'None', the cancellation's reason)."""
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, mode], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None and child.stdin is not None
        assert child.stdout.readline().strip() == "RUNNING"
        os.kill(child.pid, signal.SIGINT)
        child.stdin.write("SENT\n")
        child.stdin.flush()
        out, _ = child.communicate(timeout=60)
    finally:
        child.kill()
    line = next(x for x in out.splitlines() if x.startswith("SEEN "))
    _, seconds, reason = line.split()
    return seconds, reason


def test_the_node_sees_its_cancellation_at_once_whichever_thread_took_the_signal():
    for _ in range(3):
        seconds, reason = seen_after_sigint("waker")
        assert seconds != "None" and float(seconds) < 1.5, seconds
        assert reason == "SIGINT"


def test_without_the_waker_the_handler_waits_for_the_node():
    seconds, reason = seen_after_sigint("none")
    assert seconds == "None"  # the node ran to its end without seeing it
    assert reason == "SIGINT"  # the handler ran after it, when the main thread woke
