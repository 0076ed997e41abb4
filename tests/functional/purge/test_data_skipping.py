"""Data skipping on clustered ids: the purge's scan carries `identifier between <min id> and
<max id>`, which the semi-join implies and Spark pushes down to the parquet reader, so row groups
whose statistics lie outside the listed ids are not read.  The results must not change: whole
rows compared, and a table whose identifier type differs from the id column's gets no range.

Before that, the files' footers narrow the scan (python_hooks/purge/skipping.py, read through the
Hadoop FileSystem by python_hooks/catalog/file_facts.py): a table none of whose files can hold a
listed id is not scanned, one with some is scanned over those files only, and one the footers
cannot vouch for (ids spread over the range, a sub-directory) is scanned whole.  The purge must
be the same either way, and the footer rule must never rule out a file that holds an id."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from tests import warehouse_fs
from tests.conftest import repo_files
from tests.functional.purge.conftest import (
    descriptor,
    kept_rows,
    last_run,
    location,
    log_rows,
    purge,
    remaining_ids,
    table_rows,
)

DB = "p_skip"


def make_tables(spark):
    spark.sql(f"drop database if exists {DB} cascade")
    spark.sql(f"create database {DB}")
    spark.sql(f"""
        create table {DB}.clustered (guestid bigint, payload string) partitioned by (ds string) stored as parquet
        tblproperties ('dataset.descriptor' = '{descriptor("guestid")}')""")
    # one file (one row group) per thousand ids: only the second holds 1001..1003
    for start in (0, 1000, 2000, 3000):
        spark.sql(f"""insert into {DB}.clustered partition (ds = 'a')
            select id, concat('p', id) from range({start}, {start + 1000})""")
    spark.sql(
        f"insert into {DB}.clustered partition (ds = 'b') select id, concat('q', id) from range(5000, 6000)"
    )
    # an int identifier against bigint ids: comparable, but not the same type, so no range
    spark.sql(f"""
        create table {DB}.int_ids (guestid int, payload string) stored as parquet
        tblproperties ('dataset.descriptor' = '{descriptor("guestid")}')""")
    spark.sql(f"insert into {DB}.int_ids select cast(id as int), concat('i', id) from range(995, 1010)")


class TestDataSkipping:
    def test_the_scan_skips_row_groups_outside_the_ids_and_purges_the_same_rows(
        self, project, spark, id_table, logs_dir
    ):
        make_tables(spark)
        before = {t: table_rows(spark, f"{DB}.{t}") for t in ("clustered", "int_ids")}
        self.assert_row_groups_skipped(spark)
        purge(DB)

        for table in ("clustered", "int_ids"):
            assert table_rows(spark, f"{DB}.{table}") == kept_rows(before[table]), table
        rows = last_run(log_rows(spark, project, DB))
        states = {(r.table_name, r.partition_spec): (r.state, r.rows_purged) for r in rows}
        assert states[("clustered", "ds=a")] == ("COMMITTED", 3)
        assert states[("clustered", "ds=b")][0] == "SKIPPED"
        assert states[("int_ids", None)] == ("COMMITTED", 3)

        # the scans as the purge ran them (dbt's debug log)
        log = (Path(logs_dir) / "dbt.log").read_text()
        records = re.split(r"\n(?=\S*\d\d:\d\d:\d\d\.\d+ \[)", log)
        scans = [r for r in records if "left semi join" in r and "as rows_purged" in r]
        clustered = [s for s in scans if f"purge step scan ({DB}.clustered" in s]
        # the range is the smallest and largest listed id: the log names it, never shows it
        assert clustered and all(
            "between <smallest listed id> and <largest listed id>" in s and "1001" not in s for s in clustered
        ), clustered[-1:]
        int_scan = [s for s in scans if f"purge step scan ({DB}.int_ids" in s]
        assert int_scan and not any("between" in s for s in int_scan)

    @staticmethod
    def assert_row_groups_skipped(spark):
        # Spark pushes the range down to the parquet reader (row-group statistics) ...
        plan = "\n".join(
            r[0]
            for r in spark.sql(
                f"explain formatted select count(*) from {DB}.clustered where guestid between 1001 and 1003"
            ).collect()
        )
        assert "GreaterThanOrEqual(guestid,1001)" in plan and "LessThanOrEqual(guestid,1003)" in plan, plan
        # ... and, on the files as the scan found them, the reader returns only the row group that
        # can hold the ids (at most the 1000 rows written with 1000..1999, of 4000)
        adaptive = spark.conf.get("spark.sql.adaptive.enabled")
        spark.conf.set("spark.sql.adaptive.enabled", "false")  # the scan is then the plan's leaf
        try:
            frame = spark.sql(
                f"select * from {DB}.clustered where ds = 'a' and guestid between 1001 and 1003"
            )
            assert len(frame.collect()) == 3
            scan = frame._jdf.queryExecution().executedPlan().collectLeaves().apply(0)
            assert "FileSourceScan" in scan.getClass().getSimpleName()
            assert scan.metrics().apply("numOutputRows").value() <= 1000  # of 4000
        finally:
            spark.conf.set("spark.sql.adaptive.enabled", adaptive)


NARROW = "p_narrow"


def narrow_tables(spark):
    """Three onboarded tables of 4 files in each of 2 partitions (file f of partition p holds the
    ids p*4000 + f*1000 .. +999): `clustered` (the listed ids 1001..1003 in one file), `elsewhere`
    (no file near the ids) and `spread` (every file spans the whole range)."""
    spark.sql(f"drop database if exists {NARROW} cascade")
    spark.sql(f"create database {NARROW}")
    for table, offset in (("clustered", 0), ("elsewhere", 100000), ("spread", None)):
        spark.sql(f"""
            create table {NARROW}.{table} (guestid bigint, payload string) partitioned by (ds string)
            stored as parquet tblproperties ('dataset.descriptor' = '{descriptor("guestid")}')""")
        for p, ds in enumerate(("a", "b")):
            for f in range(4):
                start = p * 4000 + f * 1000
                ids = (
                    f"id + {offset}"
                    if offset is not None
                    else f"case when id = {start} then 0 when id = {start + 999} then 9999 else id end"
                )
                spark.sql(f"""insert into {NARROW}.{table} partition (ds = '{ds}')
                    select /*+ COALESCE(1) */ {ids}, concat('x', id) from range({start}, {start + 1000})""")


class TestScanNarrowedByFooters:
    def test_the_footers_rule_out_files_and_the_purge_is_the_same(self, project, spark, id_table):
        narrow_tables(spark)
        before = {t: table_rows(spark, f"{NARROW}.{t}") for t in ("clustered", "elsewhere", "spread")}
        _, logs = purge(NARROW)

        # clustered: 7 of 8 files ruled out, one read by Spark; elsewhere: nothing read at all; spread: no line
        assert (
            f"{NARROW}.clustered: the footers' min/max rule out 7 of 8 file(s): the scan read 1 file(s) in 1 partition(s)"
            in logs
        )
        assert (
            f"{NARROW}.elsewhere: the footers' min/max rule out 8 of 8 file(s): no file can hold a listed id, nothing was scanned"
            in logs
        )
        assert f"{NARROW}.spread: the footers" not in logs
        for table in ("clustered", "elsewhere", "spread"):
            assert table_rows(spark, f"{NARROW}.{table}") == kept_rows(before[table]), table
        rows = last_run(log_rows(spark, project, NARROW))
        states = {(r.table_name, r.partition_spec): (r.state, r.rows_purged) for r in rows}
        assert states == {
            ("clustered", "ds=a"): ("COMMITTED", 3),
            ("clustered", "ds=b"): ("SKIPPED", 0),
            ("elsewhere", "ds=a"): ("SKIPPED", 0),
            ("elsewhere", "ds=b"): ("SKIPPED", 0),
            ("spread", "ds=a"): ("COMMITTED", 3),
            ("spread", "ds=b"): ("SKIPPED", 0),
        }

    def test_a_partition_the_footers_cannot_vouch_for_is_scanned_whole(self, project, spark, id_table):
        import pyarrow as pa

        narrow_tables(spark)
        # a sub-directory holding a file (Spark does not read it for a Hive partition): the whole
        # table is scanned.  (An empty one holds no row: as on an object store, it is as no
        # directory at all, since the table's listing knows a directory by the files under it.)
        sub = f"{location(spark, NARROW, 'elsewhere', [['ds', 'b']])}/sub"
        warehouse_fs.write_parquet(
            spark, f"{sub}/part-0.parquet", pa.table({"guestid": pa.array([7], pa.int64())})
        )
        # and a listed id written into a new file of the table that was clean: found by the scan
        spark.sql(f"insert into {NARROW}.clustered partition (ds = 'b') values (1002, 'late')")
        _, logs = purge(f"{NARROW}.elsewhere, {NARROW}.clustered")
        assert f"{NARROW}.elsewhere: the footers" not in logs
        assert (
            f"{NARROW}.clustered: the footers' min/max rule out 7 of 9 file(s): the scan read 2 file(s)"
            in logs
        )
        assert remaining_ids(spark, f"{NARROW}.clustered") == 0

    def test_an_id_at_the_bound_of_a_file_is_purged(self, project, spark, id_table):
        """The footer rule rules a file out only when every listed id lies strictly outside its
        [min, max]: a file whose largest identifier is the smallest listed id (1001), and one whose
        smallest is the largest listed id (1003), are scanned and rewritten; the others are not."""
        spark.sql(f"create database if not exists {NARROW}")
        spark.sql(f"drop table if exists {NARROW}.bounds")
        spark.sql(f"""
            create table {NARROW}.bounds (guestid bigint, payload string) partitioned by (ds string)
            stored as parquet tblproperties ('dataset.descriptor' = '{descriptor("guestid")}')""")
        for low, high in ((0, 1001), (1003, 2000), (5000, 6000)):  # one file each
            spark.sql(f"""insert into {NARROW}.bounds partition (ds = 'a')
                select /*+ COALESCE(1) */ id, concat('x', id) from range({low}, {high + 1})""")
        before = table_rows(spark, f"{NARROW}.bounds")
        _, logs = purge(f"{NARROW}.bounds")
        # two files of three may hold an id: too many to narrow the scan, so the footers sort the
        # partition's files for its rewrite
        assert (
            f"purge: {NARROW}.bounds: file-level rewrite: 2 file(s) that may hold listed ids rewritten,"
            " 1 whose footers rule them out copied unchanged" in logs
        )
        assert "removed 2 of 3001 rows" in logs
        assert remaining_ids(spark, f"{NARROW}.bounds") == 0
        assert table_rows(spark, f"{NARROW}.bounds") == kept_rows(before)

    def test_an_orc_id_table_narrows_the_same(self, project, spark, id_table):
        narrow_tables(spark)
        # the same ids in an ORC table: its range is read by Spark, the files left scanned over the view
        spark.sql("drop table if exists p_ids.ids_orc")
        spark.sql("create table p_ids.ids_orc (guestid bigint) stored as orc")
        spark.sql("insert into p_ids.ids_orc select guestid from p_ids.ids")
        before = table_rows(spark, f"{NARROW}.clustered")
        _, logs = purge(f"{NARROW}.clustered", compliance_id_table="p_ids.ids_orc")
        line = next(line for line in logs.splitlines() if f"{NARROW}.clustered: the footers" in line)
        assert line.endswith("the scan read 1 file(s) in 1 partition(s)"), line
        assert table_rows(spark, f"{NARROW}.clustered") == kept_rows(before)
        rows = last_run(log_rows(spark, project, NARROW))
        assert {(r.partition_spec, r.state, r.rows_purged) for r in rows} == {
            ("ds=a", "COMMITTED", 3),
            ("ds=b", "SKIPPED", 0),
        }
        spark.sql("drop table p_ids.ids_orc")


class TestOverriddenIdentifierIsHonoured:
    """A project that overrides how the identifier is read gets its override in every statement
    the engine runs (the scan over the files the footers leave, and the rewrite)."""

    @pytest.fixture(scope="class")
    def macros(self):
        return {
            **repo_files("macros"),
            "override_identifier.sql": (
                "{% macro lakehouse__purge_identifier_expr(alias, path) -%}"
                "({{ compliance.default__purge_identifier_expr(alias, path) }})"
                "{%- endmacro %}"
            ),
        }

    def test_the_override_is_in_what_runs(self, project, spark, id_table, logs_dir):
        narrow_tables(spark)
        before = table_rows(spark, f"{NARROW}.clustered")
        _, logs = purge(f"{NARROW}.clustered")
        line = next(line for line in logs.splitlines() if f"{NARROW}.clustered: the footers" in line)
        assert line.endswith("the scan read 1 file(s) in 1 partition(s)"), line
        assert table_rows(spark, f"{NARROW}.clustered") == kept_rows(before)
        log = (Path(logs_dir) / "dbt.log").read_text()
        assert (
            "on (a.`guestid`) = b.`guestid`" in log
        )  # the overridden expression, in the scan and the rewrite


def _write_files(directory: Path, seed: int) -> None:
    """Parquet files of every shape the footer rule must get right, with random values around the
    listed ids: int16, int32 and int64 identifiers under a bigint column (several row groups),
    a file without the column, a struct without the field, NULL structs and NULL ids."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)

    def ids(n: int, low: int, high: int, kind: pa.DataType) -> pa.Array:
        values = rng.integers(low, high, n)
        nulls = rng.random(n) < 0.1
        return pa.array([None if null else int(v) for v, null in zip(values, nulls, strict=True)], kind)

    def who(column: pa.Array, drop_field: bool = False) -> pa.Array:
        names = pa.array([f"n{i}" for i in range(len(column))])
        if drop_field:
            return pa.StructArray.from_arrays([names], ["name"])
        structs = pa.StructArray.from_arrays([column, names], ["id", "name"])
        mask = pa.array(rng.random(len(column)) < 0.1)
        return pa.StructArray.from_arrays([column, names], ["id", "name"], mask=mask) if seed % 2 else structs

    shapes = []
    for number in range(12):
        kind = [pa.int16(), pa.int32(), pa.int64()][number % 3]
        low = int(rng.integers(0, 30_000))
        column = ids(200, low, low + int(rng.integers(1, 2_000)), kind)
        shapes.append(
            (
                f"f{number:02d}.parquet",
                pa.table({"guestid": column, "who": who(column), "payload": pa.array(["x"] * 200)}),
            )
        )
    shapes.append(("no_column.parquet", pa.table({"payload": pa.array(["y"] * 5)})))
    column = ids(50, 0, 30_000, pa.int64())
    shapes.append(
        (
            "no_field.parquet",
            pa.table(
                {"guestid": column, "who": who(column, drop_field=True), "payload": pa.array(["z"] * 50)}
            ),
        )
    )
    shapes.append(
        (
            "all_null.parquet",
            pa.table(
                {
                    "guestid": pa.nulls(20, pa.int64()),
                    "who": pa.nulls(20, pa.struct([("id", pa.int64()), ("name", pa.string())])),
                    "payload": pa.array(["n"] * 20),
                }
            ),
        )
    )
    directory.mkdir(parents=True, exist_ok=True)
    for name, table in shapes:
        pq.write_table(table, directory / name, row_group_size=int(rng.integers(40, 120)))


def _truth(spark, paths: list[str]) -> dict[str, dict[str, int]]:
    """Rows of each file holding a listed id, by Spark's semi-join, for each identifier path: the
    files read with their identifier's own integer type, a group of files per type (Spark reads no
    table whose files mix int16/int32/int64 under one column), compared with the bigint ids as
    Spark compares them, counted per file (`input_file_name`)."""
    import pyarrow.parquet as pq

    names = {16: "smallint", 32: "int", 64: "bigint"}
    groups: dict[str, list[str]] = {}
    for path in paths:
        arrow = pq.read_schema(path.removeprefix("file:"))
        kind = names[arrow.field("guestid").type.bit_width] if "guestid" in arrow.names else "bigint"
        groups.setdefault(kind, []).append(path)
    counts = {path: {"guestid": 0, "who.id": 0} for path in paths}
    by_name = {os.path.normpath(path.removeprefix("file:")): path for path in paths}
    for kind, group in groups.items():
        schema = f"guestid {kind}, who struct<id: {kind}, name: string>, payload string"
        spark.read.schema(schema).parquet(*group).createOrReplaceTempView("parity_files")
        for column, expression in (("guestid", "a.guestid"), ("who.id", "a.who.id")):
            for file, n in spark.sql(
                f"select a.file, count(*) from (select input_file_name() as file, * from parity_files) a"
                f" left semi join (select guestid from parity_ids where guestid is not null) b"
                f" on cast({expression} as bigint) = b.guestid group by a.file"
            ).collect():
                counts[by_name[os.path.normpath(file.removeprefix("file:"))]][column] = n
        spark.catalog.dropTempView("parity_files")
    return counts


@pytest.mark.parametrize("seed", range(6))
def test_the_footer_rule_never_rules_out_a_file_that_holds_an_id(spark, tmp_path, seed):
    """Parity on generated data: each file's count of rows holding a listed id, by Spark's own
    semi-join, against the footer rule (file_facts.may_hold): a file with such a row is never
    ruled out, and the rule is not vacuous (it rules out files)."""
    import numpy as np

    from python_hooks.catalog.file_facts import FileFacts, may_hold

    directory = tmp_path / f"files{seed}"
    _write_files(directory, seed)
    rng = np.random.default_rng(1000 + seed)
    listed = [int(v) for v in rng.integers(0, 30_000, 40)]
    listed += listed[:5] + [None]  # repeated and NULL listed ids
    spark.createDataFrame([(v,) for v in listed], "guestid bigint").createOrReplaceTempView("parity_ids")
    bounds = (min(v for v in listed if v is not None), max(v for v in listed if v is not None))
    paths = sorted(f"file:{p}" for p in directory.glob("*.parquet"))
    facts = FileFacts(spark)
    truth = _truth(spark, paths)
    ruled_out = held = 0
    for column in ("guestid", "who.id"):
        footers = facts.footers(paths, "parquet", column)
        for path in paths:
            if truth[path][column] > 0:
                held += 1
                assert may_hold(footers[path], bounds), (column, path, footers[path])
            elif not may_hold(footers[path], bounds):
                ruled_out += 1
    assert ruled_out > 0 and held > 0
    spark.catalog.dropTempView("parity_ids")


def onboarded_table(spark, name: str, ds_type: str) -> None:
    """`name` (guestid bigint), partitioned by `ds` of `ds_type`, parquet, onboarded on guestid."""
    spark.sql(f"""create table {name} (guestid bigint) partitioned by (ds {ds_type}) stored as parquet
        tblproperties ('dataset.descriptor' = '{descriptor("guestid")}')""")


def _plan_of(spark, whitelist: str):
    from python_hooks.purge import planning

    database, _, table = whitelist.partition(".")
    return planning.plan_purge(
        spark,
        {
            "invocation_id": "skipping-test",
            "run_ts": 1,
            "target_schema": "p_giveup",
            "whitelist": [{"database": database, "table": table or None, "prefix": False, "text": whitelist}],
            "blacklist": [],
            "id_table": "p_ids.ids",
            "id_column": "guestid",
        },
    )


def test_the_footers_are_given_up_when_no_file_is_ruled_out(spark, id_table):
    """With ids spread over the range no sampled file is ruled out: the table is scanned whole;
    with every file ruled out it is not scanned; with half of them left, a view over that half
    would cost more than the scan it saves: scanned whole."""
    spark.sql("drop database if exists p_giveup cascade")
    spark.sql("create database p_giveup")
    onboarded_table(spark, "p_giveup.spread", "int")
    spark.sql(
        "insert into p_giveup.spread partition (ds) select id % 2000, cast(id % 100 as int) from range(100000)"
    )
    onboarded_table(spark, "p_giveup.far", "int")
    spark.sql(
        "insert into p_giveup.far partition (ds) select 5000 + id % 1000, cast(id % 100 as int) from range(100000)"
    )
    onboarded_table(spark, "p_giveup.half", "int")
    for low in (0, 1000):
        spark.sql(
            f"insert into p_giveup.half partition (ds) select /*+ COALESCE(1) */ id, cast(id % 4 as int)"
            f" from range({low}, {low + 1000})"
        )
    scans = {t.table: t.scan for t in _plan_of(spark, "p_giveup").tables}
    assert scans == {"spread": "table", "far": "none", "half": "table"}
    far = next(t for t in _plan_of(spark, "p_giveup.far").tables)
    assert far.narrowed.files_left == 0 and far.narrowed.files_read >= 100 and len(far.listing) == 100
    spark.sql("drop database p_giveup cascade")


def test_the_listed_ids_range_is_read_from_the_id_tables_footers(spark):
    """The ids' range the scans filter on: from the id table's footers when they give it (no
    Spark job), else Spark's aggregate; always the column's own min and max of non-NULL values."""
    from python_hooks.purge import id_table

    spark.sql("drop database if exists p_bounds cascade")
    spark.sql("create database p_bounds")
    spark.sql("create table p_bounds.ids (guestid bigint) using parquet")
    spark.sql("insert into p_bounds.ids values (7), (8), (8), (null), (400)")
    spark.sql("insert into p_bounds.ids values (-3)")
    # a file written before the id column existed holds no id
    spark.sql("create table p_bounds.late (note string) using parquet")
    spark.sql("insert into p_bounds.late values ('before the column')")
    spark.sql("alter table p_bounds.late add columns (guestid bigint)")
    spark.sql("insert into p_bounds.late values ('after', 9)")
    spark.sql("create table p_bounds.orc_ids (guestid bigint) stored as orc")
    spark.sql("insert into p_bounds.orc_ids values (5), (null), (11)")
    spark.sql("create table p_bounds.nulls (guestid bigint) using parquet")
    spark.sql("insert into p_bounds.nulls values (null)")
    spark.sql("create table p_bounds.text_ids (guestid bigint) stored as textfile")
    spark.sql("insert into p_bounds.text_ids values (3), (4)")
    for table, expected in (
        ("ids", (-3, 400)),
        ("late", (9, 9)),
        ("orc_ids", (5, 11)),
        ("nulls", None),
        ("text_ids", (3, 4)),
    ):
        row = spark.sql(f"select min(guestid), max(guestid) from p_bounds.{table}").collect()[0]
        assert (None if row[0] is None else (row[0], row[1])) == expected, table
        assert id_table.id_bounds(spark, "p_bounds", table, "guestid") == expected, table
    spark.sql("drop database p_bounds cascade")


def test_the_sample_takes_a_few_files_from_each_partition(spark):
    """The sample that decides whether to read every footer spreads over the partitions (at most
    SAMPLE_PER_PARTITION files from each), so that ids clustered in one partition of many files
    cannot fill it; one call answers for every table, a missing directory with no file."""
    from python_hooks.catalog.file_facts import FileFacts
    from python_hooks.purge.skipping import SAMPLE, SAMPLE_PER_PARTITION

    spark.sql("drop database if exists p_sample cascade")
    spark.sql("create database p_sample")
    spark.sql("create table p_sample.t (guestid bigint) partitioned by (ds int) stored as parquet")
    spark.sql(
        "insert into p_sample.t partition (ds) select /*+ REPARTITION(12) */ id, cast(id % 3 as int)"
        " from range(3000)"
    )
    root = spark.sql("describe formatted p_sample.t").where("col_name = 'Location'").collect()[0][1]
    files_per_partition = {
        ds: len([f for f in warehouse_fs.listdir(spark, f"{root}/ds={ds}") if f.startswith("part-")])
        for ds in range(3)
    }
    assert min(files_per_partition.values()) > SAMPLE_PER_PARTITION, files_per_partition
    sampled, missing = FileFacts(spark).samples(
        [(root, 1, 7), (f"{root}/nowhere", 1, 7)], SAMPLE, SAMPLE_PER_PARTITION
    )
    per_partition: dict[str, int] = {}
    for path in sampled:
        directory = re.search(r"/(ds=\d+)/", path).group(1)
        per_partition[directory] = per_partition.get(directory, 0) + 1
    assert per_partition == {f"ds={ds}": SAMPLE_PER_PARTITION for ds in range(3)}, sampled
    assert missing == []
    # two levels (days and hours): each day gives at most SAMPLE_PER_PARTITION files too
    spark.sql("create table p_sample.h (guestid bigint) partitioned by (ds int, hr int) stored as parquet")
    spark.sql(
        "insert into p_sample.h partition (ds, hr) select /*+ REPARTITION(4) */ id,"
        " cast(id % 12 as int), cast(id % 8 as int) from range(9600)"
    )
    root = spark.sql("describe formatted p_sample.h").where("col_name = 'Location'").collect()[0][1]
    (sampled,) = FileFacts(spark).samples([(root, 2, 7)], SAMPLE, SAMPLE_PER_PARTITION)
    days: dict[str, int] = {}
    for path in sampled:
        day = re.search(r"/(ds=\d+)/hr=\d+/", path).group(1)
        days[day] = days.get(day, 0) + 1
    assert len(sampled) == SAMPLE and max(days.values()) <= SAMPLE_PER_PARTITION, sampled
    spark.sql("drop database p_sample cascade")


def test_a_partition_added_after_the_listing_is_asked_for_again(spark, id_table):
    """The partitions of a table scanned whole are listed while its scan runs: one that an outside
    writer adds in between, which the scan then finds, is asked of the metastore again and purged;
    one the metastore still does not list fails the table, naming the partition."""
    from concurrent.futures import Future

    from dbt.adapters.lakehouse.cancellation import Cancellation

    from python_hooks.purge import scanning, skipping

    spark.sql("drop database if exists p_relist cascade")
    spark.sql("create database p_relist")
    onboarded_table(spark, "p_relist.t", "string")
    spark.sql(
        "insert into p_relist.t partition (ds) select 1000 + id % 10, cast(id % 3 as string) from range(30)"
    )
    (table,) = _plan_of(spark, "p_relist.t").tables
    assert table.scan == "table" and table.listing is None  # ids spread: listed beside the scan
    listed = skipping.listings_of(spark, [table])["p_relist.t"]
    spark.sql("insert into p_relist.t partition (ds = 'late') values (1002)")  # after the listing
    rows = [
        [r.ds, r.n]
        for r in spark.sql(
            "select ds, count(*) as n from p_relist.t where guestid in (1001, 1002, 1003) group by ds"
        ).collect()
    ]
    assert ["late", 1] in rows
    scan: Future = Future()
    scan.set_result(rows)
    assigned = scanning._scanned(spark, table, scan, listed, Cancellation())
    assert assigned.error is None, assigned.error
    assert sorted(p.spec for p in assigned.todo) == ["ds=0", "ds=1", "ds=2", "ds=late"]
    assert {p.spec: p.rows_purged for p in assigned.todo}["ds=late"] == 1
    # a partition the metastore never listed: the table fails, nothing to purge
    ghost: Future = Future()
    ghost.set_result([*rows, ["ghost", 1]])
    failed = scanning._scanned(spark, table, ghost, listed, Cancellation())
    assert failed.todo == [] and "partition(s) ds=ghost, which the metastore does not list" in failed.error
    # a listing that failed: the table fails, saying so once
    again: Future = Future()
    again.set_result(rows)
    stopped = scanning._scanned(spark, table, again, "the table was dropped", Cancellation())
    assert stopped.error == (
        "Table p_relist.t: its partitions could not be listed: the table was dropped; nothing was purged,"
        " run the purge again"
    )
    spark.sql("drop database p_relist cascade")
