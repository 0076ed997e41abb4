"""Build purge histories directly with DDL, following the purge contract (DESIGN.md).

For table db.t at location L, a purge at ts creates `db.t_backup_<ts>` (partition p pointing at the
OLD location), new data at `<L>/<ts>/<partition path>` and points p there; an unpartitioned table
swaps its location to `<L>/<ts>` and its backup points at L.  Files are written with pyarrow (no
Spark job), so a history of many purges stays fast, and put on the warehouse's filesystem through
Hadoop (tests/warehouse_fs.py), so the same history is built on a local disk, HDFS and S3.
"""

from __future__ import annotations

import uuid
from typing import Any

import pyarrow as pa

from python_hooks.catalog import metastore
from python_hooks.catalog.partitions import spec_path
from tests import warehouse_fs

DAY = 86_400_000
HOUR = 3_600_000
BASE_TS = 1_900_000_000_000  # 2030-03-17 17:46 UTC: later than any real stale record
NOW = BASE_TS + 30 * DAY  # 2030-04-16 17:46 UTC


def lit(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def clause(pairs: list[tuple[str, str]]) -> str:
    return "(" + ", ".join(f"`{k}` = {lit(v)}" for k, v in pairs) + ")"


def register(spark: Any, database: str, side: str, kind: str, base: str, ts: int) -> None:
    """The side-table registration that purge and restore give what they create (side_tables.sql)."""
    properties = {
        "lakehouse.side_table": kind,
        "lakehouse.side_table.of": f"{database}.{base}",
        "lakehouse.side_table.created_at": str(ts),
        "lakehouse.side_table.invocation_id": "test-history",
    }
    listed = ", ".join(f"{lit(k)} = {lit(v)}" for k, v in properties.items())
    spark.sql(f"alter table {database}.{side} set tblproperties ({listed})")


def data_files(spark: Any, path: str) -> list[str]:
    """The data files under `path`, recursively (not `_SUCCESS`, `.crc`), as qualified URIs, sorted."""
    return [f for f in warehouse_fs.files(spark, path) if not f.rsplit("/", 1)[-1].startswith((".", "_"))]


class Lake:
    """One database of test tables; `ids` are the rows, `dp` the partition column."""

    def __init__(self, spark: Any, database: str) -> None:
        self.spark = spark
        self.db = database
        spark.sql(f"drop database if exists {database} cascade")
        spark.sql(f"create database {database}")

    def write(self, path: str, ids: list[int]) -> None:
        """One parquet file of `ids` in the directory `path` (created when missing)."""
        table = pa.table(
            {"id": pa.array(ids, pa.int64()), "v": pa.array([f"v{i}" for i in ids], pa.string())}
        )
        warehouse_fs.write_parquet(self.spark, f"{path.rstrip('/')}/part-{uuid.uuid4().hex}.parquet", table)

    def read(self, path: str) -> list[int]:
        """The ids of the data files directly in the directory `path` (not in its subdirectories)."""
        ids: list[int] = []
        directory = warehouse_fs.qualify(self.spark, path)
        for file in data_files(self.spark, path):
            if file.rsplit("/", 1)[0] == directory:
                ids += warehouse_fs.read_parquet(self.spark, file).column("id").to_pylist()
        return ids

    def table(self, name: str) -> metastore.Table:
        found = metastore.get_table(self.spark, self.db, name)
        assert found is not None, f"{self.db}.{name} does not exist"
        return found

    def create(
        self, name: str, partitions: dict[str, list[int]] | None = None, ids: list[int] | None = None
    ) -> None:
        """A Hive parquet table, partitioned by dp (partitions: value -> ids) or not (ids)."""
        by = " partitioned by (dp string)" if partitions is not None else ""
        self.spark.sql(f"create table {self.db}.{name} (id bigint, v string){by} stored as parquet")
        location = self.table(name).location
        if partitions is None:
            self.write(location, ids or [])
            return
        for value, rows in partitions.items():
            path = f"{location}/{spec_path([('dp', value)])}"
            self.write(path, rows)
            self.spark.sql(
                f"alter table {self.db}.{name} add partition {clause([('dp', value)])} location {lit(path)}"
            )

    def purge(self, name: str, ts: int, drop: set[int], external: bool = False) -> None:
        """One purge run at ts removing `drop`, leaving a backup (the contract's steps 3-5).

        `external`: the backup is an external table with its own (empty) directory, as the purge
        model makes them; otherwise a managed `create table like`.
        """
        live = self.table(name)
        backup = f"{name}_backup_{ts}"
        if not live.is_partitioned:
            new = f"{live.location}/{ts}"
            self.write(new, [i for i in self.read(live.location) if i not in drop])
            self.spark.sql(
                f"create table {self.db}.{backup} like {self.db}.{name} location {lit(live.location)}"
            )
            register(self.spark, self.db, backup, "backup", name, ts)
            self.spark.sql(f"alter table {self.db}.{name} set location {lit(new)}")
            return
        own = ""
        if external:
            root = (
                self.spark.sql(f"describe database {self.db}").where("info_name = 'Location'").collect()[0][1]
            )
            own = f" location {lit(root.rstrip('/') + '/' + backup)}"
        self.spark.sql(f"create table {self.db}.{backup} like {self.db}.{name}{own}")
        register(self.spark, self.db, backup, "backup", name, ts)
        for part in live.partitions:
            new = f"{live.location}/{ts}/{spec_path(part.pairs)}"
            self.write(new, [i for i in self.read(part.location) if i not in drop])
            self.spark.sql(
                f"alter table {self.db}.{backup} add partition {clause(part.pairs)} location {lit(part.location)}"
            )
            self.spark.sql(
                f"alter table {self.db}.{name} partition {clause(part.pairs)} set location {lit(new)}"
            )
        self.spark.catalog.refreshTable(f"{self.db}.{name}")

    def staging(self, name: str, ts: int, values: list[str]) -> str:
        """A staging table left by a run that died at ts (its data under <L>/<ts>)."""
        root = f"{self.table(name).location}/{ts}"
        staging = f"{name}_staging_{ts}"
        self.spark.sql(f"create table {self.db}.{staging} like {self.db}.{name} location {lit(root)}")
        register(self.spark, self.db, staging, "staging", name, ts)
        for value in values:
            path = f"{root}/{spec_path([('dp', value)])}"
            self.write(path, [1])
            self.spark.sql(
                f"alter table {self.db}.{staging} add partition {clause([('dp', value)])} location {lit(path)}"
            )
        return root

    def rows(self, name: str) -> list[tuple[int, str | None]]:
        self.spark.catalog.refreshTable(f"{self.db}.{name}")
        cols = "id, dp" if self.table(name).is_partitioned else "id, null as dp"
        return sorted(tuple(r) for r in self.spark.sql(f"select {cols} from {self.db}.{name}").collect())

    def tables(self) -> list[str]:
        return metastore.table_names(self.spark, self.db)

    def drop(self) -> None:
        self.spark.sql(f"drop database if exists {self.db} cascade")
