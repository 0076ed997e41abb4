"""Property: whatever the history and the policy, retention never deletes or changes a file that
anything live or retained references, and never leaves a file that nothing references or records.

Histories are built with DDL following the purge and restore contracts (side tables registered by
table properties, lake.py), and are richer than one table's purges:

- two tables whose directories share a prefix (`t` and `tc`: `.../t` vs `.../tc`);
- locations spelled `file:/x`, `file:///x`, `/x` and `file:/x/` (DDL, stale records, `backup_dir`)
  on a local disk; on HDFS and S3 (LAKEHOUSE_TEST_FS) `hdfs://nn/x` or `s3a://bucket/x`, with and
  without the trailing slash (a scheme-less path there would name the session's default, local,
  filesystem, and `hdfs:///x` needs HDFS as the default filesystem);
- purges that back up only the partitions holding a purged id (as the purge does);
- unpartitioned purges in both layouts (`<L>/_purge_<ts>` and the older `<L>/<ts>`), whose backups
  at `<L>` hold the live directory; dead runs whose staging directory holds a live partition;
- restore then purge (two backups sharing one directory); reaping into `backup_dir`;
- a date-partitioned table (`d`, values that parse and one that does not) and a snapshot table (`s`);
- stale data records (old directories, live and backup locations), due and not yet due.

The oracle is not the code's rule, and reads the metastore through Spark's external catalog (the
metastore client itself), never through python_hooks' listing:
- every live partition survives, and only those: the set of live partitions after the pass is
  computed from the one before by date arithmetic (`d`: a `yyyy-MM-dd` value at least
  `partition_retention_days` before now goes, any other stays) and count arithmetic (`s`: the
  `snapshot_retention_count` newest values stay), and every live table is still there;
- every side-table partition within its policy survives: a staging table younger than
  `staging_retention_hours`, a trash table younger than `trash_retention_days`, a backup partition
  among the `backup_retention_versions` newest of that partition and younger than
  `backup_retention_days` (ages from the `<ts>` of the names);
- before the pass every file is hashed; after it, every table and partition still in the metastore,
  and every stale record not yet due, references exactly the files (relative path and content) it
  referenced before (a reaped partition: at its new place);
- a file that was referenced or recorded before and still exists is referenced or recorded after.

`make test` runs 6 fixed (derandomized) examples and the three explicit ones; `make test-property`
runs 200 random ones (env `RETENTION_PROPERTY_EXAMPLES`, random seed printed on failure).

`test_random_histories_through_the_engine` runs the engine (python_hooks.retention.engine, what the
`retention` model's pre-hook calls) on many examples; `test_histories_through_the_retention_model`
runs `dbt run --select retention` with vars and the policy seed, as users do, on fixed rich
histories and a few generated ones.
"""

from __future__ import annotations

import calendar
import hashlib
import os
import re
from collections import Counter
from datetime import date
from typing import Any
from urllib.parse import urlparse

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from python_hooks.catalog.partitions import spec_path
from python_hooks.errors import LakehouseError
from python_hooks.restore import plan as restore_hook
from python_hooks.retention import engine
from tests import warehouse_fs
from tests.conftest import TEST_FS, beside_warehouse
from tests.functional.retention.conftest import SEED_TYPES, retention
from tests.functional.retention.lake import BASE_TS, DAY, HOUR, Lake, clause, lit, register

DB = "r_prop"
BACKUP_DIR = beside_warehouse("prop-reaped")
DATES = ["2030-03-05", "2030-03-12", "2030-03-19", "2030-03-30", "not-a-date"]
SNAPSHOTS = ["2030-03-10", "2030-03-11", "2030-03-12", "2030-03-13"]
# the per-table rows of the policy seed (the drawn defaults are vars)
TABLE_POLICIES = {
    f"{DB}.d": {
        "partition_column": "dp",
        "partition_date_format": "yyyy-MM-dd",
        "partition_retention_days": 10,
    },
    f"{DB}.s": {"snapshot_column": "dp", "snapshot_retention_count": 2},
}
SEED = (
    ",".join(SEED_TYPES)
    + "\n"
    + "\n".join(
        ",".join([pattern] + [str(policy.get(column, "")) for column in list(SEED_TYPES)[1:]])
        for pattern, policy in TABLE_POLICIES.items()
    )
    + "\n"
)

SPELLINGS = ["file:/", "file:///", "bare", "slash"]
SPELLING = st.sampled_from(SPELLINGS)
OP = st.one_of(
    # purge `table` of the ids `drop` with its new location spelled so; hidden: `_purge_<ts>` layout
    st.tuples(
        st.just("purge"),
        st.sampled_from(["t", "tc", "d"]),
        st.sets(st.integers(1, 6), min_size=1, max_size=2),
        SPELLING,
        st.booleans(),
    ),
    st.tuples(st.just("restore"), st.sampled_from(["a", "b:1"]), st.integers(0, 3)),
    # a dead run's staging table; swapped: it died after pointing the live partition into it
    st.tuples(st.just("staging"), st.sampled_from(["a", "b:1"]), st.booleans()),
    # a stale data record of an old directory, a live location or a backup location
    st.tuples(st.just("stale"), st.sampled_from(["orphan", "live", "backup"]), SPELLING),
)
HISTORY = st.lists(OP, min_size=1, max_size=7)
POLICY = st.fixed_dictionaries(
    {
        "backup_retention_days": st.integers(0, 6),
        "backup_retention_versions": st.integers(0, 3),
        "trash_retention_days": st.integers(0, 6),
        "staging_retention_hours": st.integers(0, 72),
        "stale_retention_days": st.integers(0, 6),
        "backup_reap_days": st.one_of(st.just(""), st.integers(0, 4)),
        "backup_dir": SPELLING,
    }
)
MODEL_FEATURES = {
    "reaped",
    "stale deleted",
    "stale not yet due",
    "expired backup deleted",
    "date partition dropped",
    "snapshot dropped",
    "restore then purge",
    "live partition inside a dead run's directory",
    "partial backup",
    "shared prefix (t and tc both backed up)",
}
# what the examples covered, per test: checked at the end of each test
COVERED: dict[str, Counter] = {"engine": Counter(), "model": Counter()}
FEATURES = {
    "shared prefix (t and tc both backed up)",
    "partial backup",
    "unpartitioned backup holding the live directory",
    "live partition inside a dead run's directory",
    "restore then purge",
    "spelling file:/",
    "spelling file:///",
    "spelling bare",
    "spelling slash",
    "reaped",
    "date partition dropped",
    "snapshot dropped",
    "stale deleted",
    "stale not yet due",
    "data kept because referenced",
    "expired backup deleted",
    "staging deleted",
    "trash deleted",
}


def spell(location: str, spelling: str) -> str:
    if TEST_FS != "file":  # hdfs://nn/x or s3a://bucket/x: the URI, or with a trailing slash
        uri = location.rstrip("/")
        return f"{uri}/" if spelling == "slash" else uri
    path = (urlparse(location).path if location.startswith("file:") else location).rstrip("/")
    return {"file:/": f"file:{path}", "file:///": f"file://{path}", "bare": path, "slash": f"file:{path}/"}[
        spelling
    ]


def tree(spark: Any, location: str) -> dict[str, str]:
    """{path relative to `location`: sha256} of every file under it (recursively), but checksums."""
    root = warehouse_fs.qualify(spark, location) + "/"
    found = {}
    for path in warehouse_fs.files(spark, location):
        assert path.startswith(root), f"{path} listed under {root}"
        if not path.rsplit("/", 1)[-1].startswith("."):
            found[path.removeprefix(root)] = hashlib.sha256(warehouse_fs.read_bytes(spark, path)).hexdigest()
    return found


def every_file(spark: Any, roots: list[str]) -> set[str]:
    """Every file under the roots, as qualified URIs."""
    return {f"{warehouse_fs.qualify(spark, root)}/{rel}" for root in roots for rel in tree(spark, root)}


def qualified(spark: Any, locations: list[str]) -> list[str]:
    """The locations, however spelled, as the qualified URIs that `every_file` gives."""
    return [warehouse_fs.qualify(spark, location) for location in locations]


def under(path: str, locations: list[str]) -> bool:
    """`path` is, or lies inside, one of the (qualified) locations."""
    return any(path == loc or path.startswith(loc + "/") for loc in locations)


class History:
    """One random history in database r_prop, built as purge, restore and dead runs leave them."""

    def __init__(self, spark: Any, schema: str, partitioned: bool) -> None:
        self.spark = spark
        self.schema = schema
        self.lake = Lake(spark, DB)
        warehouse_fs.delete(spark, BACKUP_DIR)  # what an earlier example reaped
        self.features: set[str] = set()
        self.restored = False
        if partitioned:
            self.create("t", {"a": [1, 2, 3], "b:1": [4, 5, 6]})
        else:
            self.lake.create("t", ids=[1, 2, 3, 4, 5, 6])
        self.create("tc", {"a": [1, 2, 3], "b:1": [4, 5, 6]})
        self.create("d", {value: [n + 1] for n, value in enumerate(DATES)})
        self.create("s", {value: [n + 1] for n, value in enumerate(SNAPSHOTS)})
        spark.sql(f"drop table if exists {self.stale_table}")
        spark.sql(f"""
            create table {self.stale_table} (recorded_at timestamp, invocation_id string, database_name string,
            table_name string, partition_spec string, location string, reason string) using parquet""")

    def create(self, name: str, partitions: dict[str, list[int]]) -> None:
        """Lake.create's partitioned table, its partitions added by one statement."""
        self.spark.sql(
            f"create table {DB}.{name} (id bigint, v string) partitioned by (dp string) stored as parquet"
        )
        location = self.lake.table(name).location
        added = []
        for value, rows in partitions.items():
            path = f"{location}/{spec_path([('dp', value)])}"
            self.lake.write(path, rows)
            added.append(f"partition {clause([('dp', value)])} location {lit(path)}")
        self.spark.sql(f"alter table {DB}.{name} add {' '.join(added)}")

    @property
    def stale_table(self) -> str:
        return f"{self.schema}.stale_data_records"

    def record_stale(self, table: str, spec: str | None, location: str, ts: int, spelling: str) -> None:
        self.features.add(f"spelling {spelling}")
        self.spark.sql(
            f"insert into {self.stale_table} select timestamp_millis({ts}), 'history', '{DB}', '{table}', "
            f"{lit(spec) if spec else 'null'}, {lit(spell(location, spelling))}, 'test'"
        )

    def ddl_location(self, location: str, spelling: str) -> str:
        self.features.add(f"spelling {spelling}")
        return lit(spell(location, spelling))

    def purge(self, name: str, ts: int, drop: set[int], spelling: str, hidden: bool) -> None:
        """The purge's steps: the partitions holding an id rewritten under `<L>/<ts>`, only they in
        the backup (at their old directories), the old directories recorded as stale."""
        lake, live = self.lake, self.lake.table(name)
        backup = f"{name}_backup_{ts}"
        if not live.is_partitioned:
            rows = lake.read(live.location)
            if not set(rows) & drop:
                return
            new = f"{live.location.rstrip('/')}/{'_purge_' if hidden else ''}{ts}"
            lake.write(new, [i for i in rows if i not in drop])
            self.spark.sql(f"create table {DB}.{backup} like {DB}.{name} location {lit(live.location)}")
            register(self.spark, DB, backup, "backup", name, ts)
            self.spark.sql(f"alter table {DB}.{name} set location {self.ddl_location(new, spelling)}")
            self.record_stale(name, None, live.location, ts, spelling)
            self.features.add("unpartitioned backup holding the live directory")
            return
        parts = [p for p in live.partitions if set(lake.read(p.location)) & drop]
        if not parts:
            return
        if len(parts) < len(live.partitions):
            self.features.add("partial backup")
        root = self.spark.sql(f"describe database {DB}").where("info_name = 'Location'").collect()[0][1]
        own = f"{root.rstrip('/')}/{backup}"
        self.spark.sql(f"create table {DB}.{backup} like {DB}.{name} location {lit(own)}")
        register(self.spark, DB, backup, "backup", name, ts)
        for part in parts:
            new = f"{live.location.rstrip('/')}/{ts}/{spec_path(part.pairs)}"
            lake.write(new, [i for i in lake.read(part.location) if i not in drop])
            self.spark.sql(
                f"alter table {DB}.{backup} add partition {clause(part.pairs)} location {lit(part.location)}"
            )
            self.spark.sql(
                f"alter table {DB}.{name} partition {clause(part.pairs)} set location {self.ddl_location(new, spelling)}"
            )
            self.record_stale(name, part.spec, part.location, ts, spelling)
        if name == "t" and self.restored:
            self.features.add("restore then purge")
        self.spark.catalog.refreshTable(f"{DB}.{name}")

    def restore(self, value: str, pick: int, ts: int) -> None:
        """What the restore macro does, from the restore planner's plan."""
        backups = sorted(t for t in self.lake.tables() if t.startswith("t_backup_"))
        chosen = backups[pick] if pick < len(backups) else None
        try:
            plan = restore_hook.plan_restore(
                self.spark, f"{DB}.t", f"dp={value}", backup=chosen, now=ts, allow_future=True
            )
        except LakehouseError:
            return
        pairs = [tuple(p) for p in plan["pairs"]]
        if plan["current_location"]:
            trash = plan["trash_table"]
            self.spark.sql(f"create table {DB}.{trash} like {DB}.t")
            register(self.spark, DB, trash, "trash", "t", int(trash.rsplit("_", 1)[1]))
            self.spark.sql(
                f"alter table {DB}.{trash} add partition {clause(pairs)} location {lit(plan['current_location'])}"
            )
        self.spark.sql(
            f"alter table {DB}.t partition {clause(pairs)} set location {lit(plan['backup_location'])}"
        )
        self.restored = True

    def staging(self, value: str, swapped: bool, ts: int) -> None:
        root = self.lake.staging("t", ts, [value])
        if swapped:
            live = next(p for p in self.lake.table("t").partitions if p.pairs == [("dp", value)])
            self.spark.sql(
                f"alter table {DB}.t partition {clause(live.pairs)} "
                f"set location {lit(root + '/' + spec_path(live.pairs))}"
            )
            self.record_stale("t", live.spec, live.location, ts, "file:/")
            self.features.add("live partition inside a dead run's directory")

    def stale(self, what: str, spelling: str, ts: int) -> None:
        live = self.lake.table("t")
        if what == "orphan":
            old = f"{live.location.rstrip('/')}/old-{ts}"
            self.lake.write(old, [9])
            self.record_stale("t", None, old, ts, spelling)
        elif what == "live":
            spec, location = (
                (live.partitions[0].spec, live.partitions[0].location)
                if live.is_partitioned
                else (None, live.location)
            )
            self.record_stale("t", spec, location, ts, spelling)
        else:
            for name in sorted(self.lake.tables()):
                backup = self.lake.table(name)
                if name.startswith("t_backup_") and backup.partitions:
                    self.record_stale(
                        "t", backup.partitions[0].spec, backup.partitions[0].location, ts, spelling
                    )
                    return

    def build(self, history: list[tuple]) -> int:
        """Run the history, one operation a day from BASE_TS; returns the time of the last one."""
        ts = BASE_TS
        partitioned = self.lake.table("t").is_partitioned
        for step, (op, *args) in enumerate(history):
            ts = BASE_TS + step * DAY
            if op == "purge":
                self.purge(args[0], ts, set(args[1]), args[2], args[3])
            elif op == "restore" and partitioned:
                self.restore(args[0], args[1], ts)
            elif op == "staging" and partitioned:
                self.staging(args[0], args[1], ts)
            elif op == "stale":
                self.stale(args[0], args[1], ts)
        names = self.lake.tables()
        if any(n.startswith("t_backup_") for n in names) and any(n.startswith("tc_backup_") for n in names):
            self.features.add("shared prefix (t and tc both backed up)")
        return ts


def catalog(spark: Any) -> dict[tuple[str, str | None], str]:
    """{(table, partition spec `k=v` unescaped, or None for an unpartitioned table): its location} of
    every table and partition of r_prop, read from Spark's external catalog (the metastore client),
    not through python_hooks' listing.  A partitioned table's own directory is not a key: its data
    is in its partitions."""
    external = spark._jsparkSession.sharedState().externalCatalog()
    no_filter = spark._jvm.scala.Option.empty()
    found: dict[tuple[str, str | None], str] = {}
    names = external.listTables(DB)
    for i in range(names.size()):
        name = names.apply(i)
        meta = external.getTable(DB, name)
        columns = [meta.partitionColumnNames().apply(j) for j in range(meta.partitionColumnNames().size())]
        if not columns:
            found[(name, None)] = str(meta.location())
            continue
        parts = external.listPartitions(DB, name, no_filter)
        for j in range(parts.size()):
            part = parts.apply(j)
            spec = "/".join(f"{c}={part.spec().apply(c)}" for c in columns)
            found[(name, spec)] = str(part.location())
    return found


def references(spark: Any) -> dict[tuple[str, str | None], dict[str, str]]:
    """{(table, partition spec or None): the files it references}: every table and partition of r_prop."""
    return {key: tree(spark, location) for key, location in catalog(spark).items()}


def locations(spark: Any) -> list[str]:
    """The locations `references` reads: partitions, and unpartitioned tables."""
    return list(catalog(spark).values())


SIDE = re.compile(r"^(?P<base>.+)_(?P<kind>staging|backup|trash)_(?P<ts>\d+)$")


def date_ms(value: str) -> int | None:
    """Midnight UTC of a `yyyy-MM-dd` value, or None when it is not a date (such partitions stay)."""
    try:
        return calendar.timegm(date.fromisoformat(value).timetuple()) * 1000
    except ValueError:
        return None


def must_survive(keys: set[tuple[str, str | None]], now: int, drawn: dict[str, Any]) -> dict[str, Any]:
    """What the pass must leave, from the policies' documented rules, by date and count arithmetic
    over the catalog before it: {"live": {table: its partitions after, exactly}, "side": the side
    table partitions within their policy}."""
    live: dict[str, set[str | None]] = {}
    side: set[tuple[str, str | None]] = set()
    backups: dict[tuple[str, str | None], list[tuple[int, str]]] = {}
    for table, spec in keys:
        match = SIDE.match(table)
        if match is None:
            live.setdefault(table, set()).add(spec)
            continue
        kind, ts = match["kind"], int(match["ts"])
        if kind == "staging" and ts >= now - drawn["staging_retention_hours"] * HOUR:
            side.add((table, spec))
        elif kind == "trash" and ts >= now - drawn["trash_retention_days"] * DAY:
            side.add((table, spec))
        elif kind == "backup":
            backups.setdefault((match["base"], spec), []).append((ts, table))
    for (_base, spec), versions in backups.items():
        for rank, (ts, table) in enumerate(sorted(versions, reverse=True)):
            if rank < drawn["backup_retention_versions"] and ts >= now - drawn["backup_retention_days"] * DAY:
                side.add((table, spec))
    by_date = TABLE_POLICIES[f"{DB}.d"]
    days = by_date["partition_retention_days"]
    live["d"] = {
        spec
        for spec in live["d"]
        if date_ms(spec.split("=", 1)[1]) is None or date_ms(spec.split("=", 1)[1]) >= now - days * DAY
    }
    count = TABLE_POLICIES[f"{DB}.s"]["snapshot_retention_count"]
    live["s"] = set(sorted(live["s"], key=lambda spec: spec.split("=", 1)[1])[-count:])
    return {"live": live, "side": side}


def stale_rows(spark: Any, table: str) -> list[Any]:
    spark.catalog.refreshTable(table)
    return spark.sql(f"select * from {table}").collect()


def policies(drawn: dict[str, Any]) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """The defaults (as vars) and the resolved per-table policies, as run_retention.sql passes them."""
    defaults = {
        "partition_column": "",
        "partition_date_format": "yyyy-MM-dd",
        "partition_age": "value",
        "partition_retention_days": None,
        "snapshot_column": "",
        "snapshot_retention_count": None,
        **drawn,
        "backup_dir": spell(BACKUP_DIR, drawn["backup_dir"]),
        "backup_reap_days": None if drawn["backup_reap_days"] == "" else drawn["backup_reap_days"],
    }
    per_table = {
        f"{DB}.{t}": {**defaults, **TABLE_POLICIES.get(f"{DB}.{t}", {})} for t in ("t", "tc", "d", "s")
    }
    return defaults, per_table


def check(spark: Any, history: History, before: dict[str, Any], now: int, rows: list[Any], mode: str) -> None:
    """The property, after the pass (the `rows` are its attempts)."""
    drawn_stale_days = before["stale_days"]
    after = references(spark)
    # 0. every live table is there with exactly the partitions the arithmetic leaves, and every
    # side-table partition within its policy is still there
    live_after: dict[str, set[str | None]] = {}
    for table, spec in after:
        if SIDE.match(table) is None:
            live_after.setdefault(table, set()).add(spec)
    assert live_after == before["survive"]["live"], (
        f"live partitions: expected {before['survive']['live']}, found {live_after}"
    )
    missing = before["survive"]["side"] - set(after)
    assert not missing, f"within their policy, but gone: {sorted(missing, key=str)}"
    # 1. every table and partition still in the metastore references the files, with the bytes, it did
    for key, files in after.items():
        assert key in before["references"], f"{key} appeared during the pass"
        assert files == before["references"][key], (
            f"{key}: its files changed or went: {sorted(set(before['references'][key]) ^ set(files))}"
        )
    # 2. every stale record not yet due still has its files
    for record in before["stale"]:
        recorded = int(record.recorded_at.timestamp() * 1000)
        if recorded >= now - drawn_stale_days * DAY:
            history.features.add("stale not yet due")
            assert tree(spark, record.location) == before["stale_files"][record.location], (
                f"stale record {record.location} is not due yet"
            )
    # 3. nothing referenced or recorded before is left unreferenced and unrecorded (no orphan)
    covered_after = qualified(
        spark, locations(spark) + [r.location for r in stale_rows(spark, history.stale_table)]
    )
    for path in before["covered"]:
        if warehouse_fs.exists(spark, path):
            assert under(path, covered_after), f"{path} is left with nothing referencing or recording it"
    # the only failures allowed: reaping refused for a directory another table references
    for row in rows:
        if not row.succeeded:
            assert row.action == "reap" and "is also referenced by" in row.failure_reason, row.asDict()
    for row in rows:
        if row.succeeded and row.action == "reap":
            history.features.add("reaped")
        if row.succeeded and row.action == "delete" and row.files_deleted:
            history.features.add(
                {
                    "partition": "date partition dropped",
                    "snapshot": "snapshot dropped",
                    "stale": "stale deleted",
                    "backup": "expired backup deleted",
                    "staging": "staging deleted",
                    "trash": "trash deleted",
                }.get(row.kind, f"{row.kind} deleted")
            )
        if row.action == "keep_data":
            history.features.add("data kept because referenced")
    COVERED[mode].update(history.features)


def snapshot_before(spark: Any, history: History, drawn: dict[str, Any], now: int) -> dict[str, Any]:
    refs = references(spark)
    stale = stale_rows(spark, history.stale_table)
    covered_locations = qualified(spark, locations(spark) + [r.location for r in stale])
    roots = [
        spark.sql(f"describe database {DB}").where("info_name = 'Location'").collect()[0][1],
        BACKUP_DIR,
    ]
    return {
        "references": refs,
        "stale": stale,
        "stale_files": {r.location: tree(spark, r.location) for r in stale},
        "stale_days": drawn["stale_retention_days"],
        "covered": {f for f in every_file(spark, roots) if under(f, covered_locations)},
        "survive": must_survive(set(refs), now, drawn),
    }


# `make test`: 6 fixed examples (derandomized, the same on every run) after the explicit ones; `make test-property`:
# RETENTION_PROPERTY_EXAMPLES=200 random ones, whose seed hypothesis prints when one fails
EXAMPLES = int(os.environ.get("RETENTION_PROPERTY_EXAMPLES") or 6)
SETTINGS = dict(
    deadline=None,
    derandomize="RETENTION_PROPERTY_EXAMPLES" not in os.environ,
    database=None,
    print_blob=True,
    suppress_health_check=list(HealthCheck),
)
RICH = [
    # partitioned: purge, restore, purge again (two backups share a directory), a dead run holding a
    # live partition, stale records, the neighbour `tc` and the date table purged too
    [
        ("purge", "t", {1}, "file:///", False),
        ("stale", "orphan", "bare"),
        ("restore", "a", 0),
        ("purge", "t", {2, 4}, "slash", False),
        ("purge", "tc", {5}, "bare", False),
        ("staging", "b:1", True),
        ("purge", "d", {2, 3}, "file:/", False),
        ("stale", "live", "file:///"),
        ("stale", "backup", "slash"),
    ],
]
RICH_POLICY = {
    "backup_retention_days": 5,
    "backup_retention_versions": 1,
    "trash_retention_days": 1,
    "staging_retention_hours": 0,
    "stale_retention_days": 2,
    "backup_reap_days": 1,
    "backup_dir": "slash",
}


class TestRetentionProperty:
    @pytest.fixture(scope="class")
    def seeds(self) -> dict[str, Any]:
        return {"retention": {"retention_policies.csv": SEED}}

    def test_random_histories_through_the_engine(self, built, spark):
        @settings(max_examples=EXAMPLES, **SETTINGS)
        @given(history=HISTORY, drawn=POLICY, partitioned=st.booleans(), wait_hours=st.integers(0, 240))
        @example(history=RICH[0], drawn=RICH_POLICY, partitioned=True, wait_hours=30)
        @example(
            history=[
                ("purge", "t", {1}, "bare", False),
                ("purge", "t", {2}, "file:///", True),
                ("purge", "tc", {1}, "slash", True),
            ],
            drawn={**RICH_POLICY, "backup_retention_versions": 1, "backup_dir": "file:///"},
            partitioned=False,
            wait_hours=50,
        )
        # a dead run's staging directory that holds no live partition: deleted
        @example(
            history=[("purge", "t", {1}, "bare", False), ("staging", "a", False)],
            drawn=RICH_POLICY,
            partitioned=True,
            wait_hours=30,
        )
        def examples(history, drawn, partitioned, wait_hours):
            built_history = History(spark, built.test_schema, partitioned)
            now = built_history.build(history) + wait_hours * HOUR
            before = snapshot_before(spark, built_history, drawn, now)
            defaults, per_table = policies(drawn)
            engine.run_retention(
                spark,
                invocation_id="property",
                policies=per_table,
                defaults=defaults,
                now=now,
                stale_relation=[built.test_schema, "stale_data_records"],
                view_name="retention_property_attempts",
                allow_future=True,  # the histories' clock is a day of 2030
            )
            rows = spark.table("retention_property_attempts").collect()
            check(spark, built_history, before, now, rows, "engine")

        examples()
        assert FEATURES <= set(COVERED["engine"]), f"never covered: {FEATURES - set(COVERED['engine'])}"

    def test_histories_through_the_retention_model(self, built, spark):
        @settings(max_examples=2, **SETTINGS)
        @given(history=HISTORY, drawn=POLICY, partitioned=st.booleans(), wait_hours=st.integers(0, 240))
        @example(history=RICH[0], drawn=RICH_POLICY, partitioned=True, wait_hours=30)
        def examples(history, drawn, partitioned, wait_hours):
            built_history = History(spark, built.test_schema, partitioned)
            now = built_history.build(history) + wait_hours * HOUR
            before = snapshot_before(spark, built_history, drawn, now)
            defaults, _ = policies(drawn)
            variables = {k: ("" if v is None else v) for k, v in defaults.items() if k in drawn}
            results, logs = retention(
                now, expect_pass=None, scope=DB, retention_allow_short=True, **variables
            )
            # the pass ran (retention_log may fail the run, for the refusals check() allows)
            assert {r.node.name: str(r.status) for r in results}["retention"] == "success", logs
            spark.catalog.refreshTable(f"{built.test_schema}.retention")
            rows = spark.sql(
                f"select * from {built.test_schema}.retention where database_name = '{DB}'"
            ).collect()
            check(spark, built_history, before, now, rows, "model")

        examples()
        # the rich example alone covers these through dbt
        assert MODEL_FEATURES <= set(COVERED["model"]), (
            f"never covered: {MODEL_FEATURES - set(COVERED['model'])}"
        )
