"""`make bench`: run every benchmark in bench/ (each prints its figures and ratios and writes its
bench/results/<name>.json), then gather them with the date and the machine into
bench/results/summary.json, so that figures from different days and machines are never mixed up."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"


def machine() -> dict[str, object]:
    import psutil

    return {
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "memory_gib": round(psutil.virtual_memory().total / 2**30, 1),
        "load_average_1m_at_end": round(os.getloadavg()[0], 2),
    }


def main() -> int:
    scripts = sorted(HERE.glob("*_bench.py"))
    started = datetime.now(timezone.utc)
    failed = []
    for script in scripts:
        print(f"\n##### {script.name}", flush=True)
        if subprocess.call([sys.executable, str(script), *sys.argv[1:]]) != 0:
            failed.append(script.name)
    results = {}
    for path in sorted(RESULTS.glob("*.json")):
        if (
            path.name == "summary.json"
            or datetime.fromtimestamp(path.stat().st_mtime, timezone.utc) < started
        ):
            continue  # written by an earlier run: not this run's figure
        results[path.stem] = json.loads(path.read_text())
    summary = {
        "started_at": started.isoformat(timespec="seconds"),
        "ended_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "machine": machine(),
        "failed": failed,
        "results": results,
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(
        f"\n{len(results)} result file(s) of this run gathered in {RESULTS / 'summary.json'}"
        + (f"; failed: {', '.join(failed)}" if failed else "")
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
