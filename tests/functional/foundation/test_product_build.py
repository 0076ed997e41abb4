"""`dbt build` of the product alone (the repo root), against a metastore that already holds real
tables named like the demo's (`tracking.event`, `u_purger.guestids`, `kafka.*`, `crm.*`), changes
none of them.

No demo name is a default: with no id table named, the purge and erasure nodes do not exist, so
nothing is purged; retention runs (at the repo root it is enabled without the purge) and finds
nothing registered to delete.  At the repo root (and only there) the compaction inputs default to
DESIGN.md's example sources, so DESIGN.md's compaction command works on a warehouse holding only
those inputs.  This runs the repo root's own dbt_project.yml, not a copy, in the shared session.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from dbt.tests.util import run_dbt_and_capture

from python_hooks.catalog import filesystem
from tests.conftest import REPO, WAREHOUSE_ROOT, spark_parameters

NOW = "2024-01-10 12:00:00"

# name -> (DDL, rows): what a user's real lake might hold under the demo's names
REAL_TABLES: dict[str, tuple[str, str]] = {
    "u_purger.guestids": (
        "(guestid bigint) using parquet",
        "(1), (2), (3)",
    ),
    "tracking.event": (
        "(metadata struct<guestid: bigint>, event_type string, datepartition string)"
        " using parquet partitioned by (datepartition)",
        "(named_struct('guestid', 1L), 'click', '2024-01-09-00'),"
        " (named_struct('guestid', 7L), 'view', '2024-01-09-00'),"
        " (named_struct('guestid', 2L), 'view', '2024-01-09-01')",
    ),
    "kafka.page_view_hourly_staging": (
        "(event_id bigint, member_id bigint, page string, event_ts timestamp, ingested_at timestamp,"
        " ds string, hr int) using parquet partitioned by (ds, hr)",
        "(1, 1, '/a', timestamp'2024-01-10 09:00:01', timestamp'2024-01-10 09:30:00', '2024-01-10', 9),"
        " (1, 1, '/a', timestamp'2024-01-10 09:00:01', timestamp'2024-01-10 09:30:00', '2024-01-10', 9),"
        " (2, 2, '/b', timestamp'2024-01-10 10:00:02', timestamp'2024-01-10 10:30:00', '2024-01-10', 10)",
    ),
    "kafka.ingestion_counts": (
        "(ds string, hr int, expected_count bigint) using parquet",
        "('2024-01-10', 9, 2), ('2024-01-10', 10, 1)",
    ),
    "crm.member_snapshot": (
        "(member_id bigint, name string, updated_at timestamp) using parquet",
        "(1, 'a', timestamp'2024-01-01 00:00:00'), (2, 'b', timestamp'2024-01-01 00:00:00')",
    ),
    "crm.member_delta_1": (
        "(member_id bigint, name string, updated_at timestamp) using parquet",
        "(2, 'b2', timestamp'2024-01-02 00:00:00')",
    ),
    "crm.member_delta_2": (
        "(member_id bigint, name string, updated_at timestamp) using parquet",
        "(3, 'c', timestamp'2024-01-03 00:00:00')",
    ),
}


def state(spark: Any, name: str) -> dict[str, Any]:
    """What a reader relies on: the rows, the location, and every file with its size and mtime."""
    spark.catalog.refreshTable(name)
    location = spark.sql(f"describe table extended {name}").where("col_name = 'Location'").collect()[0][1]
    files = [
        (entry["path"], entry["size"], entry["modification_time"])
        for entry in filesystem.list_dir(spark, location, recursive=True)
        if not entry["is_dir"]
    ]
    rows = sorted(json.dumps(row.asDict(recursive=True), default=str) for row in spark.table(name).collect())
    return {"location": location, "files": files, "rows": rows}


@pytest.fixture(scope="module")
def real_lake(spark: Any) -> dict[str, dict[str, Any]]:
    for name, (ddl, values) in REAL_TABLES.items():
        database = name.split(".")[0]
        spark.sql(f"create database if not exists {database}")
        spark.sql(f"drop table if exists {name}")
        spark.sql(f"create table {name} {ddl}")
        spark.sql(f"insert into {name} values {values}")
    return {name: state(spark, name) for name in REAL_TABLES}


def product_profile(directory: Path, schema: str) -> Path:
    profile = {
        "lakehouse": {
            "target": "local",
            "outputs": {
                "local": {
                    "type": "lakehouse",
                    "method": "session",
                    "host": "localhost",
                    "schema": schema,
                    "threads": 1,
                    "server_side_parameters": spark_parameters(WAREHOUSE_ROOT),
                }
            },
        }
    }
    (directory / "profiles.yml").write_text(yaml.safe_dump(profile))
    return directory


def test_product_build_changes_no_table_named_like_the_demos(
    spark: Any, real_lake: dict[str, dict[str, Any]], tmp_path: Path
) -> None:
    profiles = product_profile(tmp_path, "product_build")
    results, logs = run_dbt_and_capture(
        [
            "build",
            "--project-dir",
            str(REPO),
            "--profiles-dir",
            str(profiles),
            "--target-path",
            str(tmp_path / "target"),
            "--log-path",
            str(tmp_path / "logs"),
            "--vars",
            json.dumps({"compaction_now": NOW}),
        ]
    )
    built = {result.node.name for result in results}
    # the compaction ran on DESIGN.md's example inputs; no demo node exists in the product
    assert {"page_view_hourly", "page_view_daily", "member_merged", "member_history"} <= built
    assert not any(name.startswith("demo_") for name in built)
    # no id table named: nothing that deletes or reads ids exists, and no source names one
    assert not built & {"purge", "purge_log", "purge_verification", "erasure_requests", "pii_coverage"}
    # retention ran and deleted nothing: no side table is registered in this lake
    assert {"retention", "retention_log"} <= built
    deleted = spark.sql("select count(*) from product_build.retention where action = 'delete'").collect()
    assert deleted[0][0] == 0
    manifest = json.loads((tmp_path / "target" / "manifest.json").read_text())
    assert "source.compliance.compliance.id_table" not in manifest["sources"]
    assert "source.compliance.kafka.page_view_hourly_staging" in manifest["sources"]
    assert "purge_whitelist" not in logs
    # it read the inputs: the compaction found the hourly data, the merge the members
    assert spark.sql("select count(*) from product_build.page_view_hourly").collect()[0][0] == 2
    assert spark.sql("select count(*) from product_build.member_merged").collect()[0][0] == 3
    # and changed none of them: same rows, same location, same files
    for name, before in real_lake.items():
        assert state(spark, name) == before, f"dbt build of the product changed {name}"
