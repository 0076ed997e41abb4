"""A benchmark run's figures as the record docs/benchmarks.md and the README are generated from.

Every `bench/*_bench.py` ends by writing `bench/results/<key>.json`: its headline figures under
standard names (below), the command as typed, when, on which commit and machine, and its own
details.  The key is made of the script and its options, less the repetitions, so that a run of the
same command replaces its own record and never another's (the 5M and the 50M rows, the local disk
and S3).  `python -m tools.benchmarks` turns the records into the pages' tables.

The standard names a record's `figures` may hold:
- `ratio`: the job's time over the floor's (the median of each repetition's ratio), or, for a
  dbt node, `node_ratio` and `command_ratio` (the node's own time, the whole `dbt run`);
- `floor_s`: the floor's median seconds;
- `seconds`: a figure in seconds that is the result itself (an overhead, a load);
- `requests`, `floor_requests`, `bytes_copied`, `floor_bytes_copied`: S3 requests and bytes copied
  by a command and by its floor; `metastore_calls`: metastore calls of the command.
"""

from __future__ import annotations

import json
import os
import platform
import re
import shlex
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / "results"
# options that change how often or how visibly a command runs, not what it measures
UNKEYED = {"--repeat": 1, "--warmup": 1, "--keep-work": 0, "--keep": 0}


def result_key(argv: list[str], environment: dict[str, str] | None = None) -> str:
    """`purge_bench.rows=50000000.sweep-rows=0` for `bench/purge_bench.py --rows 50000000
    --sweep-rows 0 --repeat 3`: the script's name, then its options in sorted order (with their
    values), less the repetitions; an environment variable that changes what runs comes first."""
    script, *options = argv
    parts: list[str] = []
    i = 0
    while i < len(options):
        option = options[i]
        name, _, inline = option.partition("=")
        if name in UNKEYED:
            i += 1 + (UNKEYED[name] if not inline else 0)
            continue
        values = [inline] if inline else []
        while not inline and i + 1 < len(options) and not options[i + 1].startswith("--"):
            i += 1
            values.append(options[i])
        value = "+".join(values)
        parts.append(name.lstrip("-") + ("=" + re.sub(r"[^A-Za-z0-9_.+-]+", "_", value) if values else ""))
        i += 1
    prefix = [f"{k}={v}" for k, v in sorted((environment or {}).items())]
    return ".".join([Path(script).stem, *prefix, *sorted(parts)])


def commit() -> str | None:
    """The checkout's commit, with `+changes` when its tracked files differ from it."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short=10", "HEAD"], cwd=REPO, capture_output=True, text=True, check=True
        ).stdout.strip()
        changed = subprocess.run(["git", "diff", "--quiet", "HEAD"], cwd=REPO).returncode != 0
    except (OSError, subprocess.CalledProcessError):
        return None
    return head + ("+changes" if changed else "")


def machine() -> str:
    """`2 cores, 24 GiB, Linux x86_64`: what the figures were measured on."""
    import psutil

    memory = round(psutil.virtual_memory().total / 2**30)
    return f"{os.cpu_count()} cores, {memory} GiB, {platform.system()} {platform.machine()}"


def write(
    figures: dict[str, float | int],
    *,
    repetitions: int,
    details: Any = None,
    environment: dict[str, str] | None = None,
    approximate: list[str] | None = None,
    argv: list[str] | None = None,
    results: Path = RESULTS,
) -> Path:
    """This run's record, `bench/results/<key>.json`; prints where it went.  `environment`: the
    variables that changed what ran (a cluster whose warehouse is on S3), shown with the command;
    `approximate`: the figures that are estimates (an extrapolation), shown as `about <value>`."""
    argv = [str(Path(sys.argv[0]).resolve().relative_to(REPO)), *sys.argv[1:]] if argv is None else argv
    record = {
        "command": shlex.join(argv),
        "environment": environment or {},
        "measured_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "commit": commit(),
        "machine": machine(),
        "load_average_1m": round(os.getloadavg()[0], 2),
        "repetitions": repetitions,
        "figures": figures,
        "approximate": approximate or [],
        "details": details,
    }
    results.mkdir(parents=True, exist_ok=True)
    path = results / f"{result_key(argv, environment)}.json"
    path.write_text(json.dumps(record, indent=2) + "\n")
    print(f"record: {path} (`make benchmarks-page` puts it in docs/benchmarks.md)")
    return path


def cluster_environment(cluster: bool, fs: str) -> dict[str, str]:
    """`{"CLUSTER_WAREHOUSE_FS": "s3a"}` for a run on a cluster started with its warehouse on S3 or
    HDFS (`CLUSTER_WAREHOUSE_FS=s3a make cluster-up`) and no `--fs` of its own; else {}."""
    warehouse = os.environ.get("SPARK_WAREHOUSE_DIR", "")
    scheme = warehouse.split("://", 1)[0] if "://" in warehouse else ""
    if cluster and fs == "file" and scheme in ("s3a", "hdfs"):
        return {"CLUSTER_WAREHOUSE_FS": scheme}
    return {}


def store_figures(job: dict[str, int] | None, floor: dict[str, int] | None) -> dict[str, int]:
    """The S3 requests and bytes copied of a job and of its floor (workload.counters_between),
    under the standard names; {} off S3."""
    figures = {}
    for prefix, cost in (("", job), ("floor_", floor)):
        if cost:
            figures[f"{prefix}requests"] = cost.get("requests", 0)
            figures[f"{prefix}bytes_copied"] = cost.get("files_copied_bytes", 0)
    return figures


def read_all(results: Path = RESULTS) -> dict[str, dict[str, Any]]:
    """Every record, by key."""
    return {path.stem: json.loads(path.read_text()) for path in sorted(results.glob("*.json"))}
