"""What the audit hooks add to a dbt command: `dbt run --select demo_event_counts` in the demo
project, whole processes, with `audit_enabled` on and off, in steady state (medians).

The demo project is built once into a warehouse of its own (a temporary directory: the demo's
`.warehouse/` is not touched), then each mode runs once to warm up (its partial-parse state and
audit tables) and `--repeat` times measured, the two modes interleaved so that drift in the
machine's load hits both alike.  Each mode keeps its own target directory, so switching the var
never costs a re-parse.  The hooks' own seconds (on-run-start's pending load and on-run-end's
load, from dbt.log) are reported too, step by step.  Target: the audit adds <= 0.5 s.

    .venv/bin/python bench/audit_overhead_bench.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from statistics import median
from typing import Any

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "demo"
sys.path.insert(0, str(REPO / "bench"))

import record  # noqa: E402
from measure import measure  # noqa: E402

MODEL = "demo_event_counts"
TOOK = re.compile(r"audit: (pending runs|this run) took ([0-9.]+)s (\{.*\})")


def dbt(work: Path, target: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "DBT_PROFILES_DIR": str(REPO),
        "DBT_TARGET": "local",
        "SPARK_WAREHOUSE_DIR": str(work / "warehouse"),
        "SPARK_METASTORE_DIR": str(work / "metastore_db"),
    }
    command = [
        str(REPO / ".venv" / "bin" / "dbt"),
        *args,
        "--target-path",
        str(work / target),
        "--log-path",
        str(work / f"logs_{target}"),
    ]
    done = subprocess.run(command, cwd=DEMO, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"dbt {' '.join(args)} failed:\n{done.stdout[-3000:]}")
    return done


def hook_seconds(work: Path, target: str, since: int) -> tuple[dict[str, float], int]:
    """The hooks' seconds logged after byte `since` of this mode's dbt.log, and the log's end."""
    log = work / f"logs_{target}" / "dbt.log"
    text = log.read_text(errors="replace")
    found: dict[str, float] = {}
    for what, seconds, steps in TOOK.findall(text[since:]):
        found[what] = float(seconds)
        for step, value in json.loads(steps).items():
            found[f"{what}: {step}"] = value
    return found, len(text)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--keep-work", action="store_true")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="audit-overhead-"))
    try:
        started = time.time()
        if not (DEMO / "dbt_packages").exists():
            dbt(work, "target_on", "deps")
        print("setup: seed and build the model's upstream in a warehouse of its own", flush=True)
        dbt(work, "target_on", "seed")
        dbt(work, "target_on", "run", "--select", f"+{MODEL}")
        modes = {"on": ["--vars", "{audit_enabled: true}"], "off": ["--vars", "{audit_enabled: false}"]}
        for mode, extra in modes.items():
            dbt(work, f"target_{mode}", "run", "--select", MODEL, *extra)  # warm-up
        print(f"setup done in {time.time() - started:.0f}s; {args.repeat} runs per mode", flush=True)
        walls: dict[str, list[float]] = {mode: [] for mode in modes}
        peaks: dict[str, list[int]] = {mode: [] for mode in modes}
        hooks: list[dict[str, float]] = []
        offset = {mode: hook_seconds(work, f"target_{mode}", 0)[1] for mode in modes}
        for i in range(args.repeat):
            for mode, extra in modes.items():
                wall, peak, _ = measure(
                    lambda m=mode, e=extra: dbt(work, f"target_{m}", "run", "--select", MODEL, *e)
                )
                walls[mode].append(wall)
                peaks[mode].append(peak)
                seconds, offset[mode] = hook_seconds(work, f"target_{mode}", offset[mode])
                if mode == "on":
                    hooks.append(seconds)
                print(f"  run {i + 1} audit {mode}: {wall:.2f}s, peak {peak / 2**20:.0f} MiB", flush=True)
        on, off = median(walls["on"]), median(walls["off"])
        # each repetition runs the two modes back to back: the median of their differences is
        # less sensitive to drift in the machine's load than the difference of the medians
        paired = median(a - b for a, b in zip(walls["on"], walls["off"], strict=True))
        steps = sorted({key for h in hooks for key in h})
        hook_medians = {key: round(median(h.get(key, 0.0) for h in hooks), 3) for key in steps}
        result: dict[str, Any] = {
            "command": f"dbt run --select {MODEL} (demo project, whole process)",
            "repeat": args.repeat,
            "audit_on_s": walls["on"],
            "audit_off_s": walls["off"],
            "median_on_s": round(on, 2),
            "median_off_s": round(off, 2),
            "overhead_s": round(on - off, 2),
            "paired_overhead_s": round(paired, 2),
            "ratio": round(on / off, 3),
            "target_overhead_s": 0.5,
            "target_met": on - off <= 0.5,
            "peak_rss_on_mib": round(median(peaks["on"]) / 2**20),
            "peak_rss_off_mib": round(median(peaks["off"]) / 2**20),
            "hook_seconds_median": hook_medians,
        }
        print(f"\naudit on  {on:.2f}s (median of {args.repeat})   off {off:.2f}s")
        print(
            f"overhead  {on - off:+.2f}s  ({on / off:.2f}x)   target <= 0.5 s: "
            + ("met" if result["target_met"] else "MISSED")
        )
        print(f"paired    {paired:+.2f}s  (median of the {args.repeat} back-to-back differences)")
        print("hooks, median seconds: " + ", ".join(f"{k} {v}" for k, v in hook_medians.items()))
        record.write(
            {"seconds": result["overhead_s"], "paired_seconds": result["paired_overhead_s"]},
            repetitions=args.repeat,
            details=result,
        )
    finally:
        if args.keep_work:
            print(f"work directory kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
