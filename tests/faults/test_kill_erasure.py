"""A purge across many tables killed mid-run (SIGKILL to dbt's process group, its Spark JVM with
it, or SIGINT as Ctrl-C sends it), then the erasure ledger: it never says `live_clean` or
`erased` while a file holds the request's ids (the files are read here directly, with pyarrow),
through the kill, the normal rerun (whose log shows the killed run's swaps as SKIPPED partitions)
and until retention at zero and a fresh verification, after which every request is `erased` and
its certificate verifies.

The kill point is the third table's swaps (one metastore call for its partitions,
`committing.swap_together`): two tables are swapped, with their backups registered, and nothing
of the run reaches purge_log or erasure_request_log.

On a local disk the files are read with the OS's calls; on HDFS and S3 (LAKEHOUSE_TEST_FS)
through the Hadoop FileSystem of this process's own session, whose metastore is the tests' and
never the lake's: pyarrow decodes the bytes either way.
"""

from __future__ import annotations

import json
import re
import signal
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.conftest import TEST_FS, assertion_session
from tests.faults.harness import SCHEMA, Fault, Lake
from tests.functional.erasure.files_scan import Hadoop, LocalDisk, scan
from tests.policies import RETENTION_ZERO

DB = "fe"
ID_TABLE = "fe_ids.ids"
TABLES = [f"t{i}" for i in range(1, 7)]
REQUESTS = {"REQ-A": [1001, 1002], "REQ-B": [1003]}
DESCRIPTOR = '{"complianceSpec": {"identifierField": "guestid"}}'
# the engine's debug line before the third table's swaps (t1 and t2 are swapped by then)
SWAP = r"^event JinjaLogDebug: purge step swap \S+ \(fe\.t3\)"


def variables(**extra: Any) -> str:
    return json.dumps(
        {
            "purge_whitelist": DB,
            "compliance_id_table": ID_TABLE,
            "compliance_id_column": "guestid",
            "erasure_verification_scope": DB,
            "retention_scope": DB,
            "audit_enabled": False,
            "purge_scan_parallelism": 1,
            **extra,
        }
    )


def setup_sql() -> list[str]:
    listed = ", ".join(f"({i}, '{r}')" for r, ids in REQUESTS.items() for i in ids)
    statements = [
        "create database fe_ids",
        f"create table {ID_TABLE} (guestid bigint, request_id string) using parquet",
        f"insert into {ID_TABLE} values {listed}",
        f"create database {DB}",
    ]
    for n, table in enumerate(TABLES):
        statements.append(
            f"create table {DB}.{table} (guestid bigint, page string) partitioned by (ds string) stored as parquet "
            f"tblproperties ('dataset.descriptor' = '{DESCRIPTOR}')"
        )
        # every table: REQ-A's ids in two partitions (a batched swap), REQ-B's in the third
        for ds_value, ids in (("a", [1001, 100 + n]), ("b", [1002, 200 + n]), ("c", [1003, 300 + n])):
            values = ", ".join(f"({i}, 'p{i}')" for i in ids)
            statements.append(f"insert into {DB}.{table} partition (ds = '{ds_value}') values {values}")
    return statements


pytestmark = pytest.mark.slow


def lake_files() -> Hadoop | LocalDisk:
    """The lake's files: the local disk's, or those of HDFS or S3 through this process's session."""
    return LocalDisk() if TEST_FS == "file" else Hadoop(assertion_session())


@pytest.fixture(scope="session")
def erasure_lake() -> Lake:
    lake = Lake("erasure_kill")
    lake.reset()
    lake.sql(setup_sql())
    seeded = lake.dbt("seed", "--vars", variables())
    assert seeded.ok, seeded.output[-3000:]
    lake.save()
    return lake


def ledger(lake: Lake) -> dict[str, dict[str, Any]]:
    """erasure_requests, read from its files (no Spark job beside dbt)."""
    reader = lake_files()
    parts = [
        pq.read_table(pa.BufferReader(reader.read(name)))
        for name, _, size in reader.files(str(lake.warehouse / f"{SCHEMA}.db" / "erasure_requests"))
        if size
    ]
    assert parts, f"no file of erasure_requests under {lake.warehouse}"
    return {r["request_id"]: r for r in pa.concat_tables(parts).to_pylist()}


def live_directories(lake: Lake) -> set[str]:
    """The partitions of the onboarded tables, as the metastore lists them now (the harness's own
    Spark process)."""
    reader = lake_files()
    return {
        reader.from_uri(location)  # the catalog's percent-encoded URIs
        for table in lake.inspect(DB).values()
        if "dataset.descriptor" in (table.get("properties") or {})
        for location in (table.get("partitions") or {}).values()
    }


def files(lake: Lake, ids: list[int], live: set[str] | None = None) -> tuple[dict[str, int], dict[str, int]]:
    """(live files, other files) holding the ids, read directly with pyarrow."""
    return scan(
        lake_files(),
        [str(lake.warehouse / f"{DB}.db")],
        live if live is not None else live_directories(lake),
        set(ids),
    )


def holds_to_the_files(
    lake: Lake, moment: str, directories: set[str] | None = None
) -> dict[str, dict[str, Any]]:
    """The ledger, each request held to the files (`directories`: the live ones, when known)."""
    found = ledger(lake)
    directories = live_directories(lake) if directories is None else directories
    for request_id, ids in REQUESTS.items():
        live, copies = files(lake, ids, directories)
        row = found[request_id]
        where = f"{request_id} {moment}: ledger {row['progress']}/{row['status']} ({row['missing']}); live {live}; copies {copies}"
        if live:
            assert row["progress"] not in ("live_clean", "copies_remaining", "erased"), where
        if live or copies:
            assert row["progress"] != "erased", where
    return found


def run(lake: Lake, *args: str, **extra: Any) -> str:
    done = lake.dbt(*args, "--vars", variables(**extra))
    assert done.ok, done.output[-4000:]
    return done.output


def killed_and_verified(lake: Lake, how: int) -> None:
    """The purge killed at its third table's swap, then a verification: every request `pending`,
    the tables the run never reached named, the ledger held to the files."""
    lake.restore()
    killed = lake.dbt("run", "--select", "purge+", "--vars", variables(), fault=Fault(SWAP), stop_with=how)
    assert "purge step swap" in killed.killed_at

    # straight after the kill: the verification finds the tables the run never reached
    run(lake, "run", "--select", "tag:erasure")
    directories = live_directories(lake)
    found = holds_to_the_files(lake, "after the kill", directories)
    for request_id in REQUESTS:
        assert found[request_id]["progress"] == "pending", found[request_id]
        assert f"{DB}.t6" in (found[request_id]["live_holding"] or "")
    # the killed run swapped two tables: their backups hold REQ-A's ids, read by the verifier
    live, copies = files(lake, REQUESTS["REQ-A"], directories)
    assert copies and live


def killed_then_rerun(lake: Lake, how: int) -> None:
    """`killed_and_verified`, then the normal rerun and another verification: the ledger holds to
    the files at each step, and the killed run's backups keep REQ-A from `erased`."""
    killed_and_verified(lake, how)

    # the normal rerun: the killed run's swaps are SKIPPED; its backups still hold the ids
    output = run(lake, "run", "--select", "purge+")
    assert re.search(r", [1-9]\d* skipped,", output), output[-3000:]  # the killed run's tables, clean now
    run(lake, "run", "--select", "tag:erasure")
    found = holds_to_the_files(lake, "after the rerun")
    one = found["REQ-A"]
    assert (one["progress"], one["live_rows"]) == ("copies_remaining", 0)
    assert f"backup {DB}.t1 " in one["copies_holding"]  # the killed run's backup of t1
    assert one["status"] != "erased"


def test_a_killed_purge_leaves_every_request_pending(erasure_lake: Lake) -> None:
    """CI's erasure kill case (`make test-kills`): SIGKILL at a swap, then a verification."""
    killed_and_verified(erasure_lake, signal.SIGKILL)


def test_a_killed_purge_is_not_certified_by_the_next_verifications(erasure_lake: Lake) -> None:
    """`make test-long`'s erasure kill case (about 6 minutes: four dbt commands after the lake's seed):
    SIGKILL at a swap, then verification, rerun and verification."""
    killed_then_rerun(erasure_lake, signal.SIGKILL)


@pytest.mark.parametrize(
    "how",
    [
        # about 11 minutes each (nine dbt commands, each its own Spark): `make test-faults` and
        # `make test-property`; `make test` runs the first half, SIGKILL only (above)
        pytest.param(signal.SIGKILL, id="sigkill", marks=pytest.mark.faults),
        pytest.param(signal.SIGINT, id="sigint", marks=pytest.mark.faults),
    ],
)
def test_an_interrupted_purge_is_never_certified(erasure_lake: Lake, how: int) -> None:
    lake = erasure_lake
    killed_then_rerun(lake, how)

    # retention at zero, then a fresh verification: erased, and nothing holds an id
    run(lake, "run", "--select", "retention+", **RETENTION_ZERO)
    found = holds_to_the_files(lake, "after retention")
    assert found["REQ-A"]["progress"] == "live_clean"  # deleted after the last verification
    run(lake, "run", "--select", "tag:erasure")
    found = holds_to_the_files(lake, "after the last verification")
    directories = live_directories(lake)
    for request_id, ids in REQUESTS.items():
        assert found[request_id]["status"] == "erased", found[request_id]
        assert files(lake, ids, directories) == ({}, {})

    run(lake, "run-operation", "erasure_certificate", "--args", '{"request_id": "REQ-A"}')
    certificate = lake.root / "target" / "erasure" / "REQ-A.json"
    assert json.loads(certificate.read_text())["document"] == "erasure certificate"
    output = run(
        lake, "run-operation", "verify_certificate", "--args", json.dumps({"file": str(certificate)})
    )
    assert "verifies: the evidence of request REQ-A" in output


@pytest.mark.faults
def test_the_test_reads_the_files_it_says_it_reads(erasure_lake: Lake) -> None:
    """The direct scan itself: on the untouched lake every table holds the ids live."""
    lake = erasure_lake
    lake.restore()
    live, copies = files(lake, REQUESTS["REQ-A"])
    assert len(live) == 2 * len(TABLES) and not copies
    # the lake's own files (not the tests' warehouse), in its tables' partitions a and b
    root = lake_files().name(str(lake.warehouse / f"{DB}.db"))
    assert {path.rsplit("/", 3)[0] for path in live} == {root}, (root, sorted(live))
    assert {path.rsplit("/", 2)[1] for path in live} == {"ds=a", "ds=b"}, sorted(live)
