"""`make demo`: build the demo warehouse and run the main job on it, in one process.

Every step is a dbt command run in-process with dbtRunner, so the Spark session (and its
embedded Derby metastore) starts once.  The demo warehouse is rebuilt from scratch each time:
it is the directory named by SPARK_WAREHOUSE_DIR / SPARK_METASTORE_DIR (default `.warehouse/`).
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any, List

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def dbt(*args: str, allow_failure: bool = False) -> Any:
    from dbt.cli.main import dbtRunner

    print(f"\n=== dbt {' '.join(args)}", flush=True)
    started = time.time()
    result = dbtRunner().invoke(list(args))
    print(f"=== done in {time.time() - started:.1f}s", flush=True)
    if not result.success and not allow_failure:
        raise SystemExit(f"demo step failed: dbt {' '.join(args)}")
    return result


def spark() -> Any:
    from pyspark.sql import SparkSession

    return SparkSession.builder.getOrCreate()


def rows(sql: str) -> List[Any]:
    try:
        return spark().sql(sql).collect()
    except Exception as exc:  # a step that did not build its table is reported, not fatal
        return [f"(unavailable: {str(exc).splitlines()[0]})"]


def reset_warehouse() -> None:
    for env in ("SPARK_WAREHOUSE_DIR", "SPARK_METASTORE_DIR"):
        path = Path(os.environ[env])
        if path.exists():
            shutil.rmtree(path)
    derby_log = Path(os.environ["SPARK_METASTORE_DIR"]).parent / "derby.log"
    derby_log.unlink(missing_ok=True)


def summary() -> None:
    schema = os.environ.get("DBT_SCHEMA", "lakehouse")
    print("\n" + "=" * 78)
    print("DEMO SUMMARY")
    print("=" * 78)
    print(f"warehouse: {os.environ['SPARK_WAREHOUSE_DIR']}")
    print(f"metastore: {os.environ['SPARK_METASTORE_DIR']}")
    print("\nBuilt:")
    for r in rows("show tables in tracking"):
        print(f"  tracking.{r.tableName}" if hasattr(r, "tableName") else f"  {r}")
    count = rows("select count(*) as n from tracking.event")
    print(f"  tracking.event rows: {count[0][0] if count and hasattr(count[0], '__getitem__') else count}")
    print(f"\nAudit tables live in database `{schema}`; read them with `dbt show` or any Spark SQL client.")


def main() -> None:
    os.chdir(REPO)
    os.environ.setdefault("DBT_PROFILES_DIR", str(REPO))
    os.environ.setdefault("SPARK_WAREHOUSE_DIR", str(REPO / ".warehouse" / "warehouse"))
    os.environ.setdefault("SPARK_METASTORE_DIR", str(REPO / ".warehouse" / "metastore_db"))
    reset_warehouse()
    started = time.time()
    dbt("seed")
    dbt("run", "--select", "demo")
    summary()
    print(f"\nmake demo finished in {time.time() - started:.0f}s")


if __name__ == "__main__":
    main()
