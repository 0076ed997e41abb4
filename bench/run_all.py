"""`make bench`: run every benchmark in bench/ with its default options.  Each prints its figures
and ratios and writes its record in bench/results/ (bench/record.py: the command, the date, the
commit and the machine with the figures); `make benchmarks-page` then puts the records into
docs/benchmarks.md and the README."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"


def main() -> int:
    scripts = sorted(HERE.glob("*_bench.py"))
    started = time.time()
    failed = []
    for script in scripts:
        print(f"\n##### {script.name}", flush=True)
        if subprocess.call([sys.executable, str(script), *sys.argv[1:]]) != 0:
            failed.append(script.name)
    written = sorted(p.name for p in RESULTS.glob("*.json") if p.stat().st_mtime >= started)
    print(
        f"\n{len(written)} record(s) written by this run: {', '.join(written) or 'none'}"
        + (f"; failed: {', '.join(failed)}" if failed else "")
        + "\nput them into the pages: make benchmarks-page"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
