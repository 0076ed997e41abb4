"""`--cluster`: run a benchmark as the `cluster` target on the cluster `make cluster-up` started.

The settings come from the environment (HIVE_METASTORE_URIS, SPARK_MASTER_URL, SPARK_WAREHOUSE_DIR)
or, when unset, from `.cluster/env`.  `--executors N` caps the application at N one-core executors
(`spark.cores.max`): 1 uses one of the two workers, 2 uses both.  The benchmark's tables go under
`<warehouse>/bench/`, in databases it drops first, and dbt's own tables (the purge's records, the
verifier's results) in the schema `bench_lakehouse` (DBT_SCHEMA), never in the cluster's
`lakehouse`; `drop_databases` removes them all at the end, so it never touches anything else.
With `--fs hdfs` the warehouse is on the HDFS that `make hdfs-up` started, as a production
cluster keeps it, instead of the cluster's directory.  On S3 the cluster keeps its own store:
`CLUSTER_WAREHOUSE_FS=s3a make cluster-up` gives the metastore, the workers and .cluster/env the
S3A jars, endpoint and credentials of a bucket of its own, and `--cluster` alone then runs there
(the results file named `s3a`); `--fs s3a`, the store of `make s3-up`, is refused: the cluster's
executors have none of its credentials.

`MetastoreCalls` counts the metastore service's calls from its audit log
(`.cluster/logs/metastore-audit.log`, one line per thrift call, written by
scripts/cluster/metastore-log4j2.properties): the lines appended between two marks.
"""

from __future__ import annotations

import argparse
import os
import re
import time
from collections import Counter
from pathlib import Path

from workload import local_warehouse, running_session, session_settings, store_environment

REPO = Path(__file__).resolve().parents[1]
CLUSTER_DIR = Path(os.environ.get("CLUSTER_DIR") or REPO / ".cluster")
AUDIT_LOG = CLUSTER_DIR / "logs" / "metastore-audit.log"
# dbt's target schema for a benchmark on the cluster (the profile reads DBT_SCHEMA)
SCHEMA = "bench_lakehouse"
_CALL = re.compile(r"cmd=(?:source:\S+ )?([a-z][a-z0-9_]*)")  # not "Cleaning up ..." / "Done ..."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--cluster",
        action="store_true",
        help="run as the `cluster` target on the cluster of `make cluster-up` (or the one the environment names)",
    )
    parser.add_argument(
        "--executors", type=int, default=2, help="with --cluster: one-core executors to use (1 or 2)"
    )


def use_cluster(name: str, executors: int, fs: str = "file") -> str:
    """Point this process's dbt and Spark at the cluster; returns the filesystem its warehouse is
    on (`file`, `hdfs`, ...: what the results file is named after).

    `fs` hdfs: the warehouse on the HDFS `make hdfs-up` started (its export line in the
    environment, or .hdfs/env), as production keeps a cluster's warehouse, instead of the
    cluster's own shared directory (which may itself be on HDFS: CLUSTER_WAREHOUSE_FS=hdfs)."""
    if fs == "s3a":
        raise SystemExit(
            "--cluster --fs s3a: the cluster's executors have no credentials for the store of `make s3-up`;"
            " start the cluster on an object store of its own (`CLUSTER_WAREHOUSE_FS=s3a make cluster-up`)"
            " and run with --cluster alone"
        )
    store = store_environment(fs) if fs != "file" else None  # before .cluster/env sets its own
    env_file = CLUSTER_DIR / "env"
    if not os.environ.get("HIVE_METASTORE_URIS"):
        if not env_file.is_file():
            raise SystemExit("--cluster: no HIVE_METASTORE_URIS and no .cluster/env: run `make cluster-up`")
        for line in env_file.read_text().splitlines():
            if line.startswith("export "):
                key, _, value = line[len("export ") :].partition("=")
                os.environ[key] = value
    base = store or os.environ["SPARK_WAREHOUSE_DIR"].rstrip("/")
    warehouse = f"{base}/bench/{name}-{int(time.time())}"
    os.environ.update(
        {
            "DBT_TARGET": "cluster",
            "SPARK_WAREHOUSE_DIR": warehouse,
            "SPARK_CORES_MAX": str(executors),
            "SPARK_EXECUTOR_CORES": "1",
            "SPARK_LOCAL_IP": os.environ.get("SPARK_LOCAL_IP", "127.0.0.1"),
            "DBT_SCHEMA": SCHEMA,
        }
    )
    os.environ.pop("SPARK_METASTORE_DIR", None)
    return warehouse.split("://", 1)[0] if "://" in warehouse else "file"


def choose_warehouse(args: argparse.Namespace, name: str, work: Path) -> None:
    """With --cluster the cluster's (`use_cluster`; `args.fs` becomes its warehouse's
    filesystem), otherwise the embedded default's, its metastore in `work` (workload.py)."""
    if args.cluster:
        args.fs = use_cluster(name, args.executors, args.fs)
        session_settings()
    else:
        local_warehouse(work, args.fs)


def drop_databases(*databases: str, keep_warehouse: bool = False) -> None:
    """Drop the benchmark's databases and dbt's schema on the cluster, then, unless kept, its
    warehouse directory (`use_cluster`'s, its own: what is left there is the purge's journal),
    if a session runs.  A failure is printed, not raised: the benchmark's own error, if any,
    is the one to see."""
    spark = running_session()
    if spark is None:
        return
    warehouse = os.environ["SPARK_WAREHOUSE_DIR"]
    try:
        for database in (*databases, SCHEMA):
            spark.sql(f"drop database if exists {database} cascade")
        if keep_warehouse:
            print(f"the benchmark's warehouse kept: {warehouse}")
            return
        from python_hooks.catalog import filesystem

        filesystem.delete(spark, warehouse)
    except Exception as error:  # noqa: BLE001 - cleaning up after the benchmark
        print(
            f"cleaning up the cluster failed ({error}); drop the databases {databases + (SCHEMA,)} and {warehouse} by hand"
        )


def spark_settings() -> dict[str, str]:
    """The cluster target's Spark settings, for a benchmark that builds its own session."""
    return {
        "spark.master": os.environ["SPARK_MASTER_URL"],
        "spark.hadoop.hive.metastore.uris": os.environ["HIVE_METASTORE_URIS"],
        "spark.sql.warehouse.dir": os.environ["SPARK_WAREHOUSE_DIR"],
        "spark.cores.max": os.environ["SPARK_CORES_MAX"],
        "spark.executor.cores": "1",
        "spark.executor.memory": "1g",
        "spark.driver.host": "127.0.0.1",
        "spark.driver.bindAddress": "127.0.0.1",
        "spark.ui.showConsoleProgress": "false",
    }


def wait_for_executors(spark: object, count: int, timeout: float = 60) -> None:
    """Wait until the application has its executors, so no timing includes their start."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        # the driver's own block manager is in the list too
        if spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size() - 1 >= count:  # type: ignore[attr-defined]
            return
        time.sleep(0.5)
    raise SystemExit(f"the cluster gave fewer than {count} executor(s) within {timeout:.0f}s")


class MetastoreCalls:
    """Metastore calls made between `start()` and `stop()` (by every client: run one at a time)."""

    def __init__(self, log: Path = AUDIT_LOG) -> None:
        self.log = log
        self.offset = 0
        self.calls: Counter[str] = Counter()

    def start(self) -> MetastoreCalls:
        self.offset = self.log.stat().st_size if self.log.exists() else 0
        return self

    def stop(self) -> Counter[str]:
        time.sleep(0.2)  # the service flushes every line; let the last one land
        with open(self.log, encoding="utf-8", errors="replace") as handle:
            handle.seek(self.offset)
            text = handle.read()
        self.calls = Counter(m.group(1) for m in _CALL.finditer(text))
        return self.calls

    @property
    def total(self) -> int:
        return sum(self.calls.values())

    def summary(self, top: int = 6) -> str:
        common = ", ".join(f"{name} {count}" for name, count in self.calls.most_common(top))
        return f"{self.total} metastore calls ({common})"
