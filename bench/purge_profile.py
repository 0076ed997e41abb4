"""Where a purge node's time goes, from the `logs/dbt.log` a run keeps (`purge_bench.py --keep-work`,
`purge_many_bench.py --keep-work`, or any project's own log).

The purge logs a debug line as it starts each step (`purge step <step> (<table>)`, and its
`purge: ...` progress lines); the time of a step is the time from its line to the next line of the
node's own thread, summed over the node's tables and partitions.  Work on the engine's background
threads (the read-ahead scans, the backup, dropping the staging table) is inside the steps of the
node's thread that wait for it: "scan (waiting for the read-ahead)" and "rewrite (the backup
meanwhile)".  Every purge node of the log is one run; the first `--skip` runs (a warm-up) are left
out and the medians of the others printed, as a Markdown table.

    .venv/bin/python bench/purge_profile.py /tmp/purge-bench-xyz/logs/dbt.log --skip 1
"""

from __future__ import annotations

import argparse
import re
import statistics
from collections import defaultdict
from datetime import datetime
from pathlib import Path

LINE = re.compile(r"^(?:\x1b\[0m)?(\d\d:\d\d:\d\d\.\d+) \[\w+\s*\] \[([^\]]+)\]: (.*)$")
BEGIN = re.compile(r"Began executing node model\.\w+\.purge$")
END = re.compile(r"Finished running node model\.\w+\.purge$")
# `purge: ...` lines of the node's thread, by what follows them
PROGRESS = (
    (re.compile(r"^purge: planned "), "scan (waiting for the read-ahead)"),
    (re.compile(r"^purge: \S+: the scan found"), "statements (rendered before the scans)"),
    (re.compile(r"^purge: \S+ \(.*\): \d+ partition"), "table start"),
    (re.compile(r"^purge: table \d+/\d+ "), "table start"),
    (re.compile(r"^purge: \S+ .*: (COMMITTED|FAILED)"), "result lines"),
    (re.compile(r"^purge: summary: "), "status line"),
)


def step_of(message: str) -> str | None:
    """The step a line of the node's thread starts, or None when it starts none."""
    if message.startswith("purge step "):
        step = message[len("purge step ") :].split(":", 1)[0]
        step = re.sub(r"\s*\(.*$", "", step)  # the table, or a count
        return re.sub(r"^(swap|before swap|backup partition) .*$", r"\1", step)
    for pattern, step in PROGRESS:
        if pattern.search(message):
            return step
    return None


def runs(log: Path) -> list[dict[str, float]]:
    """Each purge node of the log: {step: seconds}, with its total under "node"."""
    found: list[dict[str, float]] = []
    current: dict[str, float] | None = None
    thread = step = ""
    last = start = 0.0
    for raw in log.read_text(encoding="utf-8", errors="replace").splitlines():
        match = LINE.match(raw)
        if not match:
            continue
        clock, who, message = match.groups()
        moment = (datetime.strptime(clock[:15], "%H:%M:%S.%f") - datetime(1900, 1, 1)).total_seconds()
        if BEGIN.search(message):
            current, thread, step, last, start = defaultdict(float), who, "node start", moment, moment
            continue
        if current is None or who != thread:
            continue
        if END.search(message):
            current[step] += moment - last
            current["node"] = moment - start
            found.append(dict(current))
            current = None
            continue
        started = step_of(message)
        if started is not None:
            current[step] += moment - last
            step, last = started, moment
    return found


def table(found: list[dict[str, float]]) -> str:
    steps = [s for s in dict.fromkeys(k for run in found for k in run) if s != "node"]
    node = statistics.median(run["node"] for run in found)
    lines = [
        f"| step (median of {len(found)} run(s)) | seconds | share of the node |",
        "| --- | ---: | ---: |",
    ]
    for step in steps:
        seconds = statistics.median(run.get(step, 0.0) for run in found)
        lines.append(f"| {step} | {seconds:.3f} | {seconds / node:.0%} |")
    lines.append(f"| **the node** | **{node:.3f}** | 100% |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("log", type=Path, help="a dbt.log holding purge runs")
    parser.add_argument("--skip", type=int, default=0, help="leave out the first N purge runs (warm-up)")
    args = parser.parse_args(argv)
    found = runs(args.log)[args.skip :]
    if not found:
        parser.error(f"no purge node in {args.log} (after skipping {args.skip})")
    print(table(found))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
