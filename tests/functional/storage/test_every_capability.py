"""Every capability on the warehouse's own filesystem (LAKEHOUSE_TEST_FS: file, hdfs or s3a).

CI runs this file on the loopback HDFS and on the S3-compatible store (`make test-storage-smoke`):
a purge interrupted and finished, a restore, retention's deletes, the erasure ledger carried to
`erased` with a certificate that re-checks.  Each assertion looks at the filesystem through
Hadoop (tests/warehouse_fs.py): the journal's entries, the swapped locations and retention's
deletions are on the warehouse's scheme, so a product path that only works on a local disk
fails here.  On S3 the staging writes must copy no byte, and the store's secret must appear in
no log, artifact, table or certificate; on a local disk, no product code may touch the
warehouse's files through Python's own file calls (a `sys.addaudithook` watches them).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from dbt.tests.util import run_dbt

from python_hooks.catalog.commit import REPORTED
from python_hooks.catalog.journal import JOURNAL_DIR, Journal
from tests import warehouse_fs
from tests.conftest import TEST_FS, WAREHOUSE
from tests.functional.erasure.conftest import ZERO, dbt_log, models, project_config, seeds  # noqa: F401
from tests.functional.purge.conftest import descriptor

DB = "fs_lake"
IDS = "fs_ids.requests"
LISTED = {1001, 1002, 1003}
SCHEME = {"file": "file:", "hdfs": "hdfs://", "s3a": "s3a://"}[TEST_FS]


def run(select: str, expect_pass: bool = True, **variables: Any) -> str:
    base = {"purge_whitelist": DB, "retention_scope": DB}
    return dbt_log(
        ["run", "--select", select, "--vars", json.dumps({**base, **variables})], expect_pass=expect_pass
    )


def listed_rows(spark: Any, table: str) -> int:
    spark.catalog.clearCache()
    spark.catalog.refreshTable(table)
    return int(
        spark.sql(f"select count(*) from {table} where guestid in ({', '.join(map(str, LISTED))})").collect()[
            0
        ][0]
    )


def locations(spark: Any, table: str) -> dict[str, str]:
    found = {}
    for row in spark.sql(f"show partitions {table}").collect():
        spec = ", ".join(f"{k} = '{v}'" for k, v in (p.split("=", 1) for p in row.partition.split("/")))
        described = spark.sql(f"describe formatted {table} partition ({spec})").collect()
        found[row.partition] = next(r.data_type for r in described if r.col_name == "Location")
    return found


@pytest.fixture(scope="class")
def project_config_update() -> dict[str, Any]:
    return project_config(DB, IDS)


@pytest.fixture(scope="class")
def lake(project: Any, spark: Any) -> dict[str, Any]:
    for database in (DB, "fs_ids"):
        spark.sql(f"drop database if exists {database} cascade")
        spark.sql(f"create database {database}")
    stamp = f"{dt.datetime.now() - dt.timedelta(days=1):%Y-%m-%d %H:%M:%S}"
    spark.sql(f"create table {IDS} (guestid bigint, request_id string, requested_at timestamp) using parquet")
    spark.sql(
        f"insert into {IDS} values " + ", ".join(f"({i}, 'FS-1', timestamp'{stamp}')" for i in sorted(LISTED))
    )
    for name in ("a", "b", "c"):
        spark.sql(f"""
            create table {DB}.{name} (guestid bigint, page string) partitioned by (ds string) stored as parquet
            tblproperties ('dataset.descriptor' = '{descriptor("guestid")}')""")
        spark.sql(f"""insert into {DB}.{name} partition (ds) values
            (1001, 'p1', 'd1'), (7, 'p2', 'd1'), (1002, 'p3', 'd2'), (8, 'p4', 'd2'), (9, 'p5', 'd3')""")
    spark.sql(f"""
        create table {DB}.flat (guestid bigint, name string) stored as orc
        tblproperties ('dataset.descriptor' = '{descriptor("guestid")}')""")
    spark.sql(f"insert into {DB}.flat values (1003, 'x'), (11, 'y')")
    run_dbt(["seed"])
    return {"before": {t: locations(spark, f"{DB}.{t}") for t in ("a", "b", "c")}}


# Python's own file calls; on a local-disk warehouse none of the product's may name a path under
# it (the product reaches the warehouse through Hadoop's FileSystem), apart from the run lock, a
# kernel flock in the warehouse's own directory
FILE_EVENTS = {"open", "os.listdir", "os.scandir", "os.remove", "os.rename", "os.mkdir", "os.rmdir",
               "os.chmod", "os.truncate", "os.utime", "shutil.rmtree", "shutil.copyfile", "shutil.move"}  # fmt: skip
LOCK_NAMES = (".dbt-run.lock", ".dbt-refusals")


@pytest.fixture(scope="class")
def file_calls(lake: Any) -> Any:
    """The Python file calls on the warehouse made from here to the end of the class (a
    `sys.addaudithook`, which cannot be removed: it goes quiet after the class)."""
    seen: list[str] = []
    root = str(Path(WAREHOUSE).resolve())
    state = {"on": TEST_FS == "file"}

    def hook(event: str, args: tuple) -> None:
        if not (state["on"] and event in FILE_EVENTS and args):
            return
        if not isinstance(args[0], (str, bytes, os.PathLike)):
            return
        path = os.path.abspath(os.fsdecode(args[0]).removeprefix("file:"))
        if path == root and event == "os.mkdir":
            return  # the lock's makedirs of the warehouse directory
        if path.startswith(root) and not any(name in path for name in LOCK_NAMES):
            seen.append(f"{event} {path}")

    sys.addaudithook(hook)
    if state["on"]:  # the watcher sees a call on the warehouse (else the test could not fail)
        os.listdir(root)
        assert seen == [f"os.listdir {root}"], seen
        seen.clear()
    yield seen
    state["on"] = False


@pytest.mark.usefixtures("file_calls")
class TestEveryCapability:
    logs: list[str] = []

    def test_the_warehouse_is_on_the_filesystem_under_test(self, project, spark, lake):
        assert str(spark.conf.get("spark.sql.warehouse.dir")).startswith(SCHEME)
        for table_locations in lake["before"].values():
            assert all(loc.startswith(SCHEME) for loc in table_locations.values()), table_locations

    def test_an_interrupted_purge_is_accounted_and_the_next_one_finishes(self, project, spark, lake):
        from dbt.adapters.factory import FACTORY

        original = Journal.record_intent

        def intent_then_cancel(journal: Any, intent: Any) -> None:
            original(journal, intent)
            if intent.table == "b":
                FACTORY.adapters["lakehouse"].cancellation.request("SIGINT")

        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(Journal, "record_intent", intent_then_cancel)
            log = run("purge", expect_pass=False)
        self.logs.append(log)
        assert "purge: cancelled (SIGINT) after 1 of" in log
        assert listed_rows(spark, f"{DB}.a") == 0 and listed_rows(spark, f"{DB}.b") == 2
        # the journal is on the warehouse's filesystem, an intent and an outcome per table begun
        journal = [f for f in warehouse_fs.files(spark, f"{WAREHOUSE}/{JOURNAL_DIR}") if f.endswith(".json")]
        assert journal and all(f.startswith(SCHEME) for f in journal), journal
        assert any(f.endswith(f"{DB}.b.outcome.json") for f in journal), journal

        self.logs.append(run("purge+"))
        for table in ("a", "b", "c", "flat"):
            assert listed_rows(spark, f"{DB}.{table}") == 0, table
        now = locations(spark, f"{DB}.b")
        assert now["ds=d1"] != lake["before"]["b"]["ds=d1"] and now["ds=d1"].startswith(SCHEME)
        assert warehouse_fs.data_files(spark, now["ds=d1"]), "the swapped partition's files are on the store"
        assert now["ds=d3"] == lake["before"]["b"]["ds=d3"], "a partition without listed ids is not rewritten"

    def test_a_restore_brings_the_backup_back_and_a_purge_removes_it_again(self, project, spark, lake):
        run_dbt(
            ["run-operation", "restore", "--args", json.dumps({"table": f"{DB}.a", "partition": "ds=d1"})]
        )
        assert locations(spark, f"{DB}.a")["ds=d1"] == lake["before"]["a"]["ds=d1"]
        assert listed_rows(spark, f"{DB}.a") == 1
        self.logs.append(run("purge+"))
        assert listed_rows(spark, f"{DB}.a") == 0

    def test_retention_deletes_the_copies_on_the_filesystem(self, project, spark, lake):
        old = [lake["before"][t]["ds=d1"] for t in ("b", "c")]
        assert all(warehouse_fs.data_files(spark, loc) for loc in old), "the backups are still there"
        self.logs.append(run("retention", **ZERO))
        for loc in old:
            assert not warehouse_fs.data_files(spark, loc), f"{loc} was not deleted"
        spark.catalog.refreshTable(f"{project.test_schema}.retention_log")
        deleted = spark.sql(
            f"select location, files_deleted from {project.test_schema}.retention_log"
            " where succeeded and files_deleted > 0 and not dry_run"
        ).collect()
        assert deleted and all(r.location.startswith(SCHEME) for r in deleted), deleted
        assert {loc.rstrip("/") for loc in old} <= {r.location.rstrip("/") for r in deleted}

    def test_the_ledger_reaches_erased_and_the_certificate_rechecks(self, project, spark, lake):
        self.logs.append(run("tag:erasure"))
        spark.catalog.clearCache()
        request = spark.sql(f"select * from {project.test_schema}.erasure_requests").collect()
        assert [(r.request_id, r.status) for r in request] == [("FS-1", "erased")]
        log = dbt_log(["run-operation", "erasure_certificate", "--args", '{"request_id": "FS-1"}'])
        assert "status erased" in log
        log = dbt_log(
            ["run-operation", "verify_certificate", "--args", '{"file": "target/erasure/FS-1.json"}']
        )
        assert "verifies: the evidence of request FS-1" in log
        doc = json.loads((Path(project.project_root) / "target" / "erasure" / "FS-1.json").read_text())
        assert all(
            t["location"].startswith(SCHEME) for t in doc["verification"]["live_tables"] if "location" in t
        )

    @pytest.mark.skipif(TEST_FS != "s3a", reason="the committer and the secret concern the object store")
    def test_the_staging_writes_copy_no_byte_on_the_object_store(self, project, spark, lake):
        lines = [line for log in self.logs for line in log.splitlines() if "committer; object store:" in line]
        assert lines, "the purge reported no object-store cost"
        for line in lines:
            assert "magic committer" in line and " 0 bytes copied" in line and " 0 copy requests" in line, (
                line
            )
            assert int(re.search(r"(\d+) bytes put", line).group(1)) > 0, line
            # every counter the purge reports is one S3A keeps (a misspelt name was left out silently)
            assert int(re.search(r"(\d+) put requests", line).group(1)) > 0, line
            assert len(re.findall(r"\d+ [a-z ]+", line.split("object store:", 1)[1])) == len(REPORTED), line

    @pytest.mark.skipif(TEST_FS != "s3a", reason="the committer and the secret concern the object store")
    def test_the_secret_appears_in_no_log_artifact_table_or_certificate(self, project, spark, lake, logs_dir):
        secret = os.environ["AWS_SECRET_ACCESS_KEY"]
        assert len(secret) >= 20
        searched: list[Path] = []
        for root in (Path(project.project_root), Path(logs_dir)):
            for path in root.rglob("*"):
                if path.is_file():
                    assert secret.encode() not in path.read_bytes(), f"the secret is in {path}"
                    searched.append(path)
        names = {p.name for p in searched}
        assert {"dbt.log", "run_results.json", "manifest.json", "FS-1.json", "FS-1.md"} <= names, names
        for log in self.logs:
            assert secret not in log
        for table in spark.sql(f"show tables in {project.test_schema}").collect():
            if table.isTemporary:
                continue
            rows = spark.sql(
                f"select to_json(struct(*)) from {project.test_schema}.{table.tableName}"
            ).collect()
            assert not [r for r in rows if r[0] and secret in r[0]], table.tableName
        for name in spark.sql("show databases").collect():
            assert secret not in str(name)

    @pytest.mark.skipif(TEST_FS != "file", reason="watches Python's file calls on a local-disk warehouse")
    def test_no_python_file_call_touched_the_warehouse(self, project, spark, lake, file_calls):
        """Everything above (purges, a restore, retention, the verification, the certificate)
        reached the warehouse through Hadoop only: a product path that lists, opens or deletes
        the warehouse's files with Python's own calls fails here."""
        assert not file_calls, file_calls[:10]


def test_a_published_file_is_whole_or_absent_and_replaces_only_when_asked(spark):
    """The journal's entries and the result files go through `publish_file`: the bytes under the
    final name, a replace only when asked (an existing file is otherwise an error and stays), no
    temporary name left; on S3 one PUT under the final name, so not one byte is copied."""
    from python_hooks.catalog import files
    from python_hooks.catalog.commit import store_statistics

    directory = warehouse_fs.qualify(spark, f"{WAREHOUSE}/published")
    warehouse_fs.delete(spark, directory)
    folder = spark._jvm.org.apache.hadoop.fs.Path(directory)
    before = store_statistics(spark, directory)
    files.publish_file(spark, folder, "entry.json", b'{"n": 1}')
    with pytest.raises(Exception, match="(?i)exists|rename"):
        files.publish_file(spark, folder, "entry.json", b'{"n": 2}')
    assert warehouse_fs.read_bytes(spark, f"{directory}/entry.json") == b'{"n": 1}'
    files.publish_file(spark, folder, "entry.json", b'{"n": 3}', replace=True)
    assert warehouse_fs.read_bytes(spark, f"{directory}/entry.json") == b'{"n": 3}'
    # a write that fails midway publishes nothing (on S3 its upload is aborted, not completed)
    with pytest.raises(TypeError):
        files.publish_file(spark, folder, "broken.json", None)  # type: ignore[arg-type]
    assert not warehouse_fs.exists(spark, f"{directory}/broken.json")
    assert [name for name in warehouse_fs.listdir(spark, directory) if ".tmp" in name] == []
    if TEST_FS == "s3a":
        after = store_statistics(spark, directory)
        assert after["object_copy_requests"] == before.get("object_copy_requests", 0)
        assert after["files_copied_bytes"] == before.get("files_copied_bytes", 0)
    warehouse_fs.delete(spark, directory)


def test_the_embedded_session_runs_a_task_wherever_its_data_is(spark):
    """An HDFS block is on `127.0.0.1` while the local executor's host is named otherwise: with
    Spark's locality wait a task held back for that host was never offered a core again (the job
    hung for good in make test-hdfs).  The embedded session does not wait; a cluster's executors
    are on many hosts, where the wait buys locality, and it keeps Spark's.  On either, a read of
    the warehouse's files runs every one of its tasks."""
    local = str(spark.sparkContext.master).startswith("local")
    assert spark.sparkContext.getConf().get("spark.locality.wait", None) == ("0s" if local else None)
    location = f"{WAREHOUSE}/locality"
    spark.range(0, 1000, 1, 4).write.mode("overwrite").parquet(location)
    assert spark.read.parquet(location).repartition(3).count() == 1000
    warehouse_fs.delete(spark, location)


def test_a_listed_table_is_answered_from_memory_and_its_footers_read_without_a_probe(spark):
    """Data skipping lists a table's directory once, whole (FileFacts.tree), and takes the
    partitions' listings and the sample from that listing: the same files, hidden ones left out
    and a sub-directory noted as the store's own listing gives them, without asking the store
    again (a file written after the listing is not in it).  A listed file's footer is read with
    the listed size: on S3 one GET per footer and no HEAD, and one LIST for the whole table."""
    import pyarrow as pa

    from python_hooks.catalog.commit import store_statistics
    from python_hooks.catalog.file_facts import FileFacts

    root = warehouse_fs.qualify(spark, f"{WAREHOUSE}/listed")
    warehouse_fs.delete(spark, root)
    for ds in range(3):
        for part in range(2):
            table = pa.table({"guestid": pa.array([ds * 100 + part * 10 + n for n in range(5)], pa.int64())})
            warehouse_fs.write_parquet(spark, f"{root}/ds={ds}/part-{part}.parquet", table)
    warehouse_fs.write_bytes(spark, f"{root}/ds=0/_SUCCESS", b"")
    warehouse_fs.write_bytes(spark, f"{root}/ds=1/nested/part-9.parquet", b"not read by Spark")
    warehouse_fs.write_bytes(spark, f"{root}/ds=2/_temporary/0/part-8.parquet", b"not read either")
    partitions = [f"{root}/ds={ds}" for ds in range(4)]  # ds=3: no directory
    store = FileFacts(spark).list(partitions)
    kept = FileFacts(spark)
    assert kept.tree([f"{root}-missing"]) == {f"{root}-missing": None}  # no root: nothing under it
    assert not kept.list([f"{root}-missing/ds=0"])[f"{root}-missing/ds=0"].exists
    before = store_statistics(spark, root, names=None)
    assert kept.tree([root]) == {root: None}
    listed = kept.list(partitions)
    sampled = kept.samples([(root, 1, 7)], 16, 1)
    paths = [f.path for location in partitions for f in listed[location].files]
    footers = kept.footers(paths, "parquet", "guestid")
    after = store_statistics(spark, root, names=None)
    for location in partitions:
        mine, theirs = listed[location], store[location]
        assert (sorted(mine.files, key=str), mine.subdirectories) == (
            sorted(theirs.files, key=str),
            theirs.subdirectories,
        ), location
    assert [len(listed[p].files) for p in partitions] == [2, 2, 2, 0]
    assert [listed[p].subdirectories for p in partitions] == [False, True, False, False]
    assert sorted(re.search(r"/(ds=\d)/", p).group(1) for p in sampled[0]) == ["ds=0", "ds=1", "ds=2"]
    assert sorted((f.rows, f.groups[0].min, f.groups[0].max) for f in footers.values()) == [
        (5, str(low), str(low + 4)) for low in (0, 10, 100, 110, 200, 210)
    ]
    if TEST_FS == "s3a":
        spent = {name: after.get(name, 0) - before.get(name, 0) for name in after}
        assert spent["object_list_request"] + spent.get("object_continue_list_request", 0) == 1, spent
        assert (spent["action_http_head_request"], spent["action_http_get_request"]) == (0, 6), spent
    # answered from memory: a file written after the listing is not in it; the store has it
    warehouse_fs.write_bytes(spark, f"{root}/ds=0/part-late.parquet", b"late")
    assert len(kept.list([f"{root}/ds=0"])[f"{root}/ds=0"].files) == 2
    assert len(FileFacts(spark).list([f"{root}/ds=0"])[f"{root}/ds=0"].files) == 3
    warehouse_fs.delete(spark, root)
