"""The scenarios the kill tests share: their tables, rows and the commands that prepare them."""

from __future__ import annotations

import json
from typing import Any

from tests.faults.harness import SCHEMA, Lake, describe_difference, multiset
from tests.policies import RETENTION_ZERO

IDS = [1001, 1002, 1003]
ID_TABLE = "fk_ids.ids"
DESCRIPTOR = '{"complianceSpec": {"identifierField": "guestid"}}'
COLUMNS = "guestid bigint, name string, amount double, info struct<city: string, n: int>"

# kind -> (table, DDL after the column list, partitioned)
KINDS = {
    "hive_parquet": ("fk.hive_parquet", "partitioned by (ds string) stored as parquet", True),
    "hive_orc": ("fk.hive_orc", "partitioned by (ds string) stored as orc", True),
    "datasource": ("fk.ds_parquet", "using parquet partitioned by (ds)", True),
    "unpartitioned": ("fk.flat", "stored as parquet", False),
}
# two partitions with ids (the batched path: one rewrite, one backup DDL, one swap), one without
PARTITIONS = {"2024-01-01": [1001, 1002], "2024-01-02": [1003], "2024-01-03": []}


def row(guestid: int, tag: str, ds: str | None) -> dict[str, Any]:
    found = {"guestid": guestid, "name": f"n{guestid}-{tag}", "amount": guestid * 1.5,
             "info": {"city": f"c'{guestid % 3}", "n": guestid % 7}}  # fmt: skip
    if ds is not None:
        found["ds"] = ds
    return found


def purge_rows(kind: str) -> list[dict[str, Any]]:
    """The seeded rows of a kind's table: per partition five clean rows, one of them twice, and its ids."""
    _, _, partitioned = KINDS[kind]
    rows = []
    for index, (ds, ids) in enumerate(PARTITIONS.items() if partitioned else [(None, IDS)]):
        base = 100 * (index + 1)
        clean = [row(base + i, kind, ds) for i in range(5)]
        rows += clean + [clean[0]] + [row(i, kind, ds) for i in ids]
    return rows


def values(rows: list[dict[str, Any]]) -> str:
    def literal(value: Any) -> str:
        return "'" + str(value).replace("\\", "\\\\").replace("'", "\\'") + "'"

    return ", ".join(
        f"({r['guestid']}, {literal(r['name'])}, {r['amount']}, "
        f"named_struct('city', {literal(r['info']['city'])}, 'n', {r['info']['n']}))"
        for r in rows
    )


def purge_setup_sql() -> list[str]:
    statements = [
        "create database fk_ids",
        f"create table {ID_TABLE} (guestid bigint) using parquet",
        f"insert into {ID_TABLE} values " + ", ".join(f"({i})" for i in IDS) + ", (null)",
        "create database fk",
    ]
    for kind, (table, ddl, partitioned) in KINDS.items():
        statements.append(
            f"create table {table} ({COLUMNS}{', ds string' if 'using' in ddl else ''}) {ddl} "
            f"tblproperties ('dataset.descriptor' = '{DESCRIPTOR}')"
        )
        rows = purge_rows(kind)
        if partitioned:
            for ds in PARTITIONS:
                statements.append(
                    f"insert into {table} partition (ds = '{ds}') values "
                    + values([r for r in rows if r["ds"] == ds])
                )
        else:
            statements.append(f"insert into {table} values " + values(rows))
    return statements


def check_tables(seen: dict, finished: bool) -> list[str]:
    """Every kind's table reads, and each partition holds its seeded rows or its purged rows,
    whole and once (`finished`: the purged rows only)."""
    problems = []
    for kind, (table, _, partitioned) in KINDS.items():
        found = seen.get(table)
        if found is None:
            problems.append(f"{table} is gone")
            continue
        if "read_error" in found or "describe_error" in found:
            problems.append(
                f"{table} does not read: {found.get('read_error') or found.get('describe_error')}"
            )
            continue
        if found["count"] != len(found["rows"]):
            problems.append(
                f"{table}: count(*) {found['count']} but a full scan returns {len(found['rows'])} rows"
            )
        seeded = purge_rows(kind)
        groups = sorted({r.get("ds") for r in seeded}, key=str)
        for group in groups:
            before = multiset([r for r in seeded if r.get("ds") == group])
            after = multiset([r for r in seeded if r.get("ds") == group and r["guestid"] not in IDS])
            actual = multiset([r for r in found["rows"] if r.get("ds") == group])
            if actual == after or (actual == before and not finished):
                continue
            label = f"{table}" + (f" ds={group}" if partitioned else "")
            problems.append(
                f"{label} holds neither its seeded nor its purged rows:\n{describe_difference(after, actual)}"
            )
        strays = [r for r in found["rows"] if r.get("ds") not in groups]
        if strays:
            problems.append(f"{table}: rows in no seeded partition: {strays[:3]}")
    return problems


def moved_partitions(before: dict, after: dict) -> dict[tuple[str, str], str]:
    """{(table, partition or ''): location now} of the purge scenario's partitions (and
    unpartitioned tables) whose location changed between two inspections."""
    moved = {}
    for table, _, partitioned in KINDS.values():
        if partitioned:
            old, new = before[table].get("partitions") or {}, after[table].get("partitions") or {}
            moved.update({(table, spec): place for spec, place in new.items() if old.get(spec) != place})
        elif before[table].get("location") != after[table].get("location"):
            moved[(table, "")] = after[table]["location"]
    return moved


def unaccounted(moved: dict[tuple[str, str], str], seen: dict) -> list[str]:
    """The moved partitions without exactly one COMMITTED purge_log row that moved them there."""
    log = seen.get(f"{SCHEMA}.purge_log", {}).get("rows") or []
    problems = []
    for (table, spec), place in moved.items():
        rows = [
            r for r in log
            if r["state"] == "COMMITTED" and f"{r['database_name']}.{r['table_name']}" == table
            and (r["partition_spec"] or "") == spec and str(r["new_location"]).rstrip("/") == place.rstrip("/")
        ]  # fmt: skip
        if len(rows) != 1:
            problems.append(
                f"{table} {spec or '(unpartitioned)'} moved to {place}: {len(rows)} COMMITTED row(s)"
            )
    return problems


def purge_vars(**extra: Any) -> str:
    return json.dumps(
        {
            "purge_whitelist": "fk",
            "compliance_id_table": ID_TABLE,
            "compliance_id_column": "guestid",
            "audit_enabled": False,
            **RETENTION_ZERO,
            **extra,
        }  # fmt: skip
    )


def prepare_purge(lake: Lake) -> None:
    """The four kinds of table, the ids, and the retention policy seed."""
    lake.reset()
    lake.sql(purge_setup_sql())
    seeded = lake.dbt("seed", "--vars", purge_vars())
    assert seeded.ok, seeded.output[-3000:]
    lake.save()


__all__ = ["SCHEMA"]


def prepare_purged(prepared: Lake, lake: Lake) -> None:
    """The purge scenario (`prepared`'s template) after one purge without retention: backups,
    stale records, purged tables; saved as `lake`'s template (`Lake.variant`)."""
    prepared.restore()
    done = lake.dbt("run", "--select", "purge", "purge_log", "--vars", purge_vars())
    assert done.ok, done.output[-3000:]
    lake.save()


# ---- compaction ---------------------------------------------------------------------------------
NOW = "2024-01-10 12:00:00"
HOURS = [("2024-01-10", 9), ("2024-01-10", 10)]


def hour_rows(ds: str, hr: int) -> list[tuple]:
    """Six records: event 1 twice byte for byte, event 2 re-sent later, event 3 tied on event_ts."""
    at = f"{ds} {hr:02d}"
    return [
        (1, "a", f"{at}:00:01", f"{at}:30:00"),
        (1, "a", f"{at}:00:01", f"{at}:30:00"),
        (2, "b", f"{at}:00:02", f"{at}:30:00"),
        (2, "b2", f"{at}:00:05", f"{at}:40:00"),
        (3, "c", f"{at}:00:03", f"{at}:31:00"),
        (3, "c-tie", f"{at}:00:03", f"{at}:45:00"),
    ]


def hour_sql(ds: str, hr: int) -> list[str]:
    rows = ", ".join(
        f"({e}, 7, '{page}', timestamp'{ts}', timestamp'{ing}')" for e, page, ts, ing in hour_rows(ds, hr)
    )
    return [
        f"insert into kafka.page_view_hourly_staging partition (ds = '{ds}', hr = {hr}) values {rows}",
        f"insert into kafka.ingestion_counts values ('{ds}', {hr}, 6)",
    ]


def expected_hour(ds: str, hr: int) -> list[tuple]:
    """The deduplicated hour: per event the latest event_ts, then the latest ingested_at."""
    best: dict[int, tuple] = {}
    for record in hour_rows(ds, hr):
        if record[0] not in best or (record[2], record[3]) > (best[record[0]][2], best[record[0]][3]):
            best[record[0]] = record
    return sorted((e, page, ts, ing, ds, hr) for e, page, ts, ing in best.values())


def compaction_vars() -> str:
    return json.dumps({"compaction_now": NOW, "audit_enabled": False, **RETENTION_ZERO})


def prepare_compaction(lake: Lake) -> None:
    """Hour 9 compacted by a first run; hour 10 landed since."""
    lake.reset()
    lake.sql(
        [
            "create database kafka",
            "create table kafka.page_view_hourly_staging (event_id bigint, member_id bigint, page string,"
            " event_ts timestamp, ingested_at timestamp) partitioned by (ds string, hr int) stored as parquet",
            "create table kafka.ingestion_counts (ds string, hr int, expected_count bigint) using parquet",
            *hour_sql(*HOURS[0]),
        ]
    )
    first = lake.dbt("run", "--select", "page_view_hourly", "--vars", compaction_vars())
    assert first.ok, first.output[-3000:]
    seeded = lake.dbt("seed", "--vars", compaction_vars())
    assert seeded.ok, seeded.output[-3000:]
    lake.sql(hour_sql(*HOURS[1]))
    lake.save()


# ---- snapshot -----------------------------------------------------------------------------------
CRM = [
    "create database crm",
    """create table crm.member_snapshot using parquet as select * from values
        (1, 'a', 'a@x', 'free', timestamp'2024-01-01 00:00:00'),
        (2, 'b', 'b@x', 'free', timestamp'2024-01-01 00:00:00'),
        (3, 'c', 'c@x', 'basic', timestamp'2024-01-01 00:00:00')
        as t(member_id, name, email, plan, updated_at)""",
    """create table crm.member_delta_1 using parquet as select * from values
        (2, 'b1', 'b1@x', 'basic', 'US', timestamp'2024-02-01 00:00:00'),
        (4, 'd', 'd@x', 'free', 'DE', timestamp'2024-02-01 00:00:00')
        as t(member_id, name, email, plan, country, updated_at)""",
    """create table crm.member_delta_2 using parquet as select * from values
        (5, 'e', 'e@x', 'free', 'BR', timestamp'2024-03-01 00:00:00')
        as t(member_id, name, email, plan, country, updated_at)""",
]
# the next pull: member 4 changes, member 6 arrives
CRM_NEXT = [
    """insert into crm.member_delta_2 values
        (4, 'd2', 'd2@x', 'basic', 'IN', timestamp'2024-03-02 00:00:00'),
        (6, 'f', 'f@x', 'free', 'US', timestamp'2024-03-02 00:00:00')""",
]
SNAPSHOT_VOLATILE = ("dbt_scd_id", "dbt_updated_at", "dbt_valid_from", "dbt_valid_to")


def snapshot_version(rows: list[dict[str, Any]]) -> list[str]:
    """A snapshot's rows without the columns that hold the time of the run (whether a version is
    current stays)."""
    found = []
    for r in rows:
        kept = {k: v for k, v in r.items() if k not in SNAPSHOT_VOLATILE}
        kept["current"] = r.get("dbt_valid_to") is None
        found.append(json.dumps(kept, sort_keys=True, default=str))
    return sorted(found)


def snapshot_vars() -> str:
    return json.dumps({"audit_enabled": False, **RETENTION_ZERO})


def prepare_snapshot(lake: Lake) -> dict[str, list[str]]:
    """member_merged and its snapshot, then the next pull merged; returns the snapshot's versions
    before and after the next `dbt snapshot` (run once here, on a copy)."""
    lake.reset()
    lake.sql(CRM)
    for command in (("seed",), ("run", "--select", "+member_merged"), ("snapshot",)):
        done = lake.dbt(*command, "--vars", snapshot_vars())
        assert done.ok, done.output[-3000:]
    lake.sql(CRM_NEXT)
    done = lake.dbt("run", "--select", "member_merged", "--vars", snapshot_vars())
    assert done.ok, done.output[-3000:]
    before = lake.inspect(SCHEMA)[f"{SCHEMA}.member_history"]["rows"]
    lake.save()
    done = lake.dbt("snapshot", "--vars", snapshot_vars())
    assert done.ok, done.output[-3000:]
    after = lake.inspect(SCHEMA)[f"{SCHEMA}.member_history"]["rows"]
    lake.restore()
    versions = {"before": snapshot_version(before), "after": snapshot_version(after)}
    assert versions["before"] != versions["after"]
    return versions
