"""The scenarios the kill tests share: their tables, rows and the commands that prepare them."""

from __future__ import annotations

import json
from typing import Any

from tests.faults.harness import SCHEMA, Lake

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

# retention at zero: everything that is not live is past its policy
RETENTION_ZERO = {
    "backup_retention_days": 0,
    "backup_retention_versions": 0,
    "trash_retention_days": 0,
    "staging_retention_hours": 0,
    "stale_retention_days": 0,
    "retention_allow_short": True,
}


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
