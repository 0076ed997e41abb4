"""The ledger's property over random histories: it never says `live_clean` or `erased` while a
direct scan of the files (tests/functional/erasure/files_scan.py: pyarrow, outside the product's
code) finds the request's ids, and, at the end of any history, a purge, retention at zero and a
fresh verification erase every request.

A history is a random sequence of purges, purges interrupted at a random point of the purge node
(SIGINT to the dbt process at its n-th event after the node started, as Ctrl-C does: the purge
stops at its next safe point, what it committed stays done and logged, the rest of the command
does not run), restores, retention passes at zero, rebuilds (a job writing a purged id back into
an onboarded table), and verifications; after each step the ledger is built again and held to the
files.  Every history ends with FINALE: a rebuild, a purge and a verification (its copy holds an
id: `copies_remaining`), retention at zero (a copy deleted after the last verification:
`live_clean`) and a verification (`erased`), so every history verifies after a purge and the
property is tested where the ledger may say the most; each test asserts that its histories reached
those three statuses between them.  One history runs in `make test`; `make test-property` runs
PROPERTY_EXAMPLES more (default 20, marker `property`).  The SIGKILL of a whole dbt process (its
Spark JVM with it) is tests/faults/test_kill_erasure.py.
"""

from __future__ import annotations

import json
import os
import random
import signal
from typing import Any

import pytest
from dbt.tests.util import run_dbt

from python_hooks.catalog import metastore
from tests.functional.erasure.conftest import ZERO, dbt_log, project_config
from tests.functional.erasure.files_scan import ids_in_files
from tests.functional.purge.conftest import descriptor

DB = "e_prop"
ID_TABLE = "e_prop_ids.ids"
REQUESTS = {"R-1": [4001, 4002], "R-2": [4003], "R-3": [4004, 4005]}
# table -> partitioned; rows: the request ids spread over the tables and partitions, and others
TABLES = {"events": True, "clicks": True, "profiles": False}
PARTITIONS = ("a", "b", "c")
STEPS = ("purge", "interrupted", "restore", "retention", "rebuild", "verify")
# how every history ends: each of the statuses a verification after a purge can give, in turn
FINALE = ("rebuild", "purge", "verify", "retention", "verify")
# what the histories of a test must reach between them, or the property was never put to the test
REACHED = {"copies_remaining", "live_clean", "erased"}
QUICK_SEEDS = (11,)
MANY = int(os.environ.get("PROPERTY_EXAMPLES") or 20)


def base_vars() -> dict[str, Any]:
    return {"purge_whitelist": DB, "retention_scope": DB}


def dbt(*args: str, expect_pass: bool = True, **variables: Any) -> str:
    return dbt_log([*args, "--vars", json.dumps({**base_vars(), **variables})], expect_pass=expect_pass)


@pytest.fixture(scope="class")
def project_config_update() -> dict[str, Any]:
    # the interrupted purge's swaps come in a known order: one table at a time
    return project_config(DB, ID_TABLE, purge_scan_parallelism=1)


def build_lake(spark: Any, rng: random.Random) -> None:
    for database in (DB, "e_prop_ids"):
        spark.sql(f"drop database if exists {database} cascade")
        spark.sql(f"create database {database}")
    pairs = ", ".join(f"({i}, '{r}')" for r, ids in REQUESTS.items() for i in ids)
    spark.sql(f"create table {ID_TABLE} (guestid bigint, request_id string) using parquet")
    spark.sql(f"insert into {ID_TABLE} values {pairs}")
    listed = [i for ids in REQUESTS.values() for i in ids]
    for table, partitioned in TABLES.items():
        spec = "partitioned by (ds string)" if partitioned else ""
        spark.sql(f"""create table {DB}.{table} (guestid bigint, payload string) {spec} stored as parquet
            tblproperties ('dataset.descriptor' = '{descriptor("guestid")}')""")
        for ds in PARTITIONS if partitioned else (None,):
            ids = rng.sample(listed, rng.randint(0, 3)) + [rng.randint(1, 999) for _ in range(3)]
            values = ", ".join(f"({i}, 'p{i}')" for i in ids)
            where = f" partition (ds = '{ds}')" if ds else ""
            spark.sql(f"insert into {DB}.{table}{where} values {values}")


def ledger(spark: Any, schema: str) -> dict[str, Any]:
    spark.catalog.clearCache()
    if not metastore.table_exists(spark, schema, "erasure_requests"):
        return {}
    return {r.request_id: r for r in spark.sql(f"select * from {schema}.erasure_requests").collect()}


def check(spark: Any, schema: str, history: list[str]) -> set[str]:
    """The property, against the files; returns the progress of every request."""
    found = ledger(spark, schema)
    for request_id, ids in REQUESTS.items():
        row = found.get(request_id)
        if row is None:
            continue
        live, copies = ids_in_files(spark, [DB], set(ids))
        where = f"{request_id} after {history}: ledger {row.progress}/{row.status}, files live {live} copies {copies}"
        assert (row.status == "erased") == (row.progress == "erased"), where
        if live:
            assert row.progress not in ("live_clean", "copies_remaining", "erased"), where
        if live or copies:
            assert row.progress != "erased", where
    return {row.progress for row in found.values()}


class Interrupt:
    """A dbt callback that interrupts the command at the n-th event after the purge node started
    (whatever the engine does there: a random cut through its work), as Ctrl-C does: SIGINT to this
    process.  The adapter's handler turns it into a cancellation: the purge stops at its next safe
    point, writes what it committed, and the command ends (tests/faults/test_interrupt_purge.py
    sends the real signal to a real dbt process)."""

    def __init__(self, nth: int) -> None:
        self.nth, self.seen, self.started = nth, 0, False
        self.at: str | None = None

    def __call__(self, event: Any) -> None:
        name = event.info.name
        if name == "NodeStart" and event.data.node_info.node_name == "purge":
            self.started = True
        if not self.started or self.at is not None:
            return
        self.seen += 1
        if self.seen == self.nth:
            self.at = f"{name}: {event.info.msg[:120]}"
            os.kill(os.getpid(), signal.SIGINT)


def step(name: str, spark: Any, rng: random.Random) -> str:
    """Run one step; returns what it did (for the failure message)."""
    if name == "purge":
        dbt("run", "--select", "purge+")
        return "purge"
    if name == "interrupted":
        interrupt = Interrupt(rng.randint(1, 150))
        dbt_log(["run", "--select", "purge+", "--vars", json.dumps(base_vars())], None, [interrupt])
        return f"purge interrupted at event {interrupt.nth} ({interrupt.at})"
    if name == "restore":
        backups = [
            t
            for t in metastore.table_names(spark, DB)
            if "_backup_" in t and metastore.get_table(spark, DB, t).partitions
        ]
        if not backups:
            return "restore (no backup)"
        backup = rng.choice(sorted(backups))
        part = rng.choice(metastore.get_table(spark, DB, backup).partitions)
        base = backup.split("_backup_")[0]
        arguments = {"table": f"{DB}.{base}", "partition": part.spec, "backup": f"{DB}.{backup}"}
        dbt_log(["run-operation", "restore", "--args", json.dumps(arguments)])
        dbt("run", "--select", "erasure_requests")
        return f"restore {base} {part.spec} from {backup}"
    if name == "retention":
        dbt("run", "--select", "retention+", **ZERO)
        return "retention at zero"
    if name == "rebuild":
        request_id = rng.choice(sorted(REQUESTS))
        table = rng.choice(sorted(TABLES))
        where = " partition (ds = 'a')" if TABLES[table] else ""
        spark.sql(f"insert into {DB}.{table}{where} values ({REQUESTS[request_id][0]}, 'rebuilt')")
        dbt("run", "--select", "erasure_requests")
        return f"rebuild: {request_id}'s id into {table}"
    dbt("run", "--select", "tag:erasure")
    return "verify"


def history(seed: int, spark: Any, schema: str, length: int = 4) -> set[str]:
    """One random history of `length` steps and the FINALE, the ledger held to the files after
    each step; returns every request progress the ledger gave on the way."""
    rng = random.Random(seed)
    # each history starts from nothing: no log, ledger or verification of an earlier one
    for table in spark.catalog.listTables(schema):
        if table.name != "retention_policies" and not table.isTemporary:
            kind = "view" if table.tableType == "VIEW" else "table"
            spark.sql(f"drop {kind} if exists {schema}.{table.name}")
    build_lake(spark, rng)
    done: list[str] = [f"seed {seed}"]
    reached: set[str] = set()
    for name in [rng.choice(STEPS) for _ in range(length)] + list(FINALE):
        done.append(step(name, spark, rng))
        reached |= check(spark, schema, done)
    # whatever happened, the FINALE's purge, retention at zero and verification erased every request
    found = ledger(spark, schema)
    for request_id, ids in REQUESTS.items():
        assert ids_in_files(spark, [DB], set(ids)) == ({}, {}), (request_id, done)
        assert found[request_id].status == "erased", (request_id, found[request_id].missing, done)
    return reached


@pytest.fixture(scope="class")
def seeded(project: Any) -> None:
    run_dbt(["seed"])


class TestLedgerProperty:
    def test_random_histories(self, project, spark, seeded):
        reached = set().union(*(history(seed, spark, project.test_schema, length=2) for seed in QUICK_SEEDS))
        assert reached >= REACHED, reached

    @pytest.mark.property
    def test_many_random_histories(self, project, spark, seeded):
        reached: set[str] = set()
        for seed in range(1000, 1000 + MANY):
            reached |= history(seed, spark, project.test_schema, length=8)
        assert reached >= REACHED, reached
