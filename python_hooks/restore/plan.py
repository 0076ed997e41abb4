"""Restore: choose the backup a partition goes back to, and check everything before anything changes.

`plan_restore` only reads the metastore and the filesystem; the `restore` macro
(macros/restore/restore.sql) then runs the DDL: the partition's current data becomes
`<table>_trash_<ts>`, the partition points at the backup's data, and a stale-data record is written.
"""

from __future__ import annotations

from typing import Any

from python_hooks.catalog import filesystem, metastore
from python_hooks.catalog.clock import retention_clock
from python_hooks.catalog.partitions import unescape_path_name
from python_hooks.catalog.side_tables import named_side_tables
from python_hooks.errors import ConfigError, NotFoundError, RefusedError, did_you_mean
from python_hooks.restore import delta, iceberg

# a registered backup: (its timestamp, its table)
Backup = tuple[int, metastore.Table]


def parse_partition(spec: str, columns: list[str], table: str) -> list[tuple[str, str]]:
    """`k=v/k2=v2` as typed by a user into pairs in the table's column order (the values as
    typed: `_as_known` reads a path-escaped spec)."""
    given: dict[str, str] = {}
    for part in str(spec or "").strip().strip("/").split("/"):
        key, sep, value = part.partition("=")
        if not sep or not key.strip():
            raise ConfigError(
                f"Partition {spec!r} of {table} is not of the form "
                f"{'/'.join(c + '=<value>' for c in columns)}."
            )
        if value.strip() in (".", "..") or any(ord(ch) < 32 for ch in value):
            raise RefusedError(
                f"Partition {spec!r} of {table}: the value {value!r} of {key.strip()} is refused (a path step such as"
                " '..' or a control character could point the partition outside the table). Nothing was changed."
            )
        given[key.strip().lower()] = value
    lowered = {c.lower(): c for c in columns}
    if set(given) != set(lowered):
        unknown = sorted(set(given) - set(lowered))
        hint = "".join(f" {name}{did_you_mean(name, columns)}" for name in unknown)
        raise ConfigError(
            f"Partition {spec!r} of {table} names the columns {sorted(given)}, but the table is partitioned by "
            f"{columns}: give a value for each, as {'/'.join(c + '=<value>' for c in columns)}."
            + (f" Not a partition column:{hint}." if unknown else "")
        )
    return [(lowered[k], given[k]) for k in lowered]


def _as_known(
    pairs: list[tuple[str, str]], live: metastore.Table, backups: list[Backup]
) -> list[tuple[str, str]]:
    """The partition as typed, or, when neither the table nor a backup has it but they have its
    values unescaped, those: a spec copied from `purge_log` or `show partitions` is path-escaped
    (`ds=2024-01-01 10%3A00`), and restores the partition it names.  A value that exists as typed
    always wins, so a value holding a literal `%3A` is never read as a colon."""
    known = {tuple(p.pairs) for p in live.partitions} | {
        tuple(p.pairs) for _, backup in backups for p in backup.partitions
    }
    if tuple(pairs) in known:
        return pairs
    unescaped = [(column, unescape_path_name(value)) for column, value in pairs]
    return unescaped if tuple(unescaped) in known else pairs


def _table_not_found(spark: Any, database: str, name: str) -> NotFoundError:
    """The table, or its database, does not exist: the nearest names that do."""
    databases = metastore.databases(spark)
    if database.lower() not in {d.lower() for d in databases}:
        return NotFoundError(
            f"Cannot restore {database}.{name}: the database {database} does not exist"
            f"{did_you_mean(database, databases)}. Nothing was changed."
        )
    tables = [f"{database}.{t}" for t in metastore.table_names(spark, database)]
    return NotFoundError(
        f"Cannot restore {database}.{name}: the table does not exist"
        f"{did_you_mean(f'{database}.{name}', tables)}. Nothing was changed."
    )


def _describe(backups: list[tuple[int, metastore.Table]], spec: str) -> str:
    if not backups:
        return "no backups exist"
    names = []
    for _ts, table in sorted(backups, key=lambda b: -b[0]):
        has = any(p.spec == spec for p in table.partitions)
        names.append(f"{table.qualified} ({'holds' if has else 'does not hold'} this partition)")
    return "backups that exist: " + ", ".join(names)


def _existing_table(spark: Any, table: str) -> tuple[str, str, metastore.Table]:
    """(database, name, table); raises when `table` is not `database.table` or does not exist."""
    if not table or "." not in str(table):
        raise ConfigError(f"restore needs `table` as `database.table`; got {table!r}.")
    database, name = str(table).split(".", 1)
    live = metastore.get_table(spark, database, name)
    if live is None:
        raise _table_not_found(spark, database, name)
    return database, name, live


def _live_table(
    spark: Any, table: str, partition: str | None, found: tuple[str, str, metastore.Table]
) -> tuple[str, str, metastore.Table]:
    """(database, name, table) of the partitioned Hive-format table to restore into; raises when it
    is not partitioned or `partition` is missing."""
    database, name, live = found
    if not live.is_partitioned:
        raise RefusedError(
            f"Cannot restore {table}: it is not partitioned. The backup of an unpartitioned table holds the live "
            "directory inside it, so pointing the table back at it would read both; restore it by hand "
            "(`alter table ... set location`) after moving the live directory out."
        )
    if not partition:
        raise ConfigError(
            f"restore of {table} needs `partition`, e.g. {'/'.join(live.partition_columns)}=<value>."
        )
    return database, name, live


def _registered_backups(spark: Any, database: str, name: str) -> tuple[list[Backup], list[str]]:
    """(backups, look-alikes): the registered backups of this table only (catalog.side_tables),
    newest first, and the lower-cased names of the database's unregistered tables."""
    backups, lookalikes = [], []
    for found, side in named_side_tables(spark, database):
        if side and side[0].lower() == name.lower() and side[1] == "backup":
            backups.append((side[2], found))
        elif side is None:
            lookalikes.append(found.qualified.lower())
    backups.sort(key=lambda b: -b[0])
    return backups, lookalikes


def _partition_in(entry: Backup, pairs: list[tuple[str, str]]) -> metastore.Partition | None:
    """The backup's partition with these values, if it holds one."""
    return next((p for p in entry[1].partitions if p.pairs == pairs), None)


def _named_backup(
    spark: Any,
    table: str,
    database: str,
    spec: str,
    pairs: list[tuple[str, str]],
    backup: str,
    backups: list[Backup],
    lookalikes: list[str],
    current_location: str | None,
) -> tuple[Backup, str]:
    """(backup, location) of the partition in the backup the user named; raises when that is not
    a registered backup of the table, does not hold the partition, or holds the live data."""
    wanted = str(backup) if "." in str(backup) else f"{database}.{backup}"
    chosen = next((b for b in backups if b[1].qualified.lower() == wanted.lower()), None)
    if chosen is None and wanted.lower() in lookalikes:
        raise RefusedError(
            f"Cannot restore {table} partition {spec} from {wanted}: it is named like a backup but is not registered"
            " as a backup of this table (it lacks the lakehouse.side_table properties that purge gives its backups)."
            " If the purge made it before side tables were registered, adopt it with"
            " `dbt run-operation adopt_side_tables`. Nothing was changed."
        )
    if chosen is None:
        raise NotFoundError(
            f"Cannot restore {table} partition {spec} from {wanted}: no such backup"
            f"{did_you_mean(wanted, [b[1].qualified for b in backups])}; {_describe(backups, spec)}."
        )
    part = _partition_in(chosen, pairs)
    if part is None:
        raise NotFoundError(
            f"Cannot restore {table} partition {spec} from {wanted}: that backup does not hold the partition"
            f"{did_you_mean(spec, [p.spec for p in chosen[1].partitions])}; {_describe(backups, spec)}."
        )
    location = filesystem.qualify(spark, part.location)
    if location == current_location:
        raise RefusedError(
            f"Cannot restore {table} partition {spec} from {wanted}: its data is the live location "
            f"{location} already."
        )
    return chosen, location


def _newest_backup(
    spark: Any,
    table: str,
    spec: str,
    pairs: list[tuple[str, str]],
    live: metastore.Table,
    current: metastore.Partition | None,
    backups: list[Backup],
    current_location: str | None,
) -> tuple[Backup, str]:
    """(backup, location) of the newest backup holding a non-empty copy of the partition other
    than the live location; raises when none does."""
    for entry in backups:
        part = _partition_in(entry, pairs)
        if part is None:
            continue
        loc = filesystem.qualify(spark, part.location)
        if loc != current_location and filesystem.summary(spark, loc)["files"] > 0:
            return entry, loc
    known = {p.spec for p in live.partitions} | {p.spec for _, b in backups for p in b.partitions}
    hint = "" if current is not None else did_you_mean(spec, known)
    raise NotFoundError(
        f"Cannot restore {table} partition {spec}: no backup holds a non-empty copy of it other than the "
        f"live location{hint}; {_describe(backups, spec)}."
    )


# the formats whose tables go back whole to a version, never a partition to a backup: how the
# refusal of a `partition` or `backup` names each (its kind, its copies, what to give, an example)
WHOLE_TABLES = {
    "delta": ("a Delta Lake table", "its versions", "`version`", "<n>"),
    "iceberg": ("an Apache Iceberg table", "its snapshots", "`version` (a snapshot id)", "<snapshot id>"),
}


def plan_restore(
    spark: Any,
    table: str,
    partition: str | None = None,
    backup: str | None = None,
    now: Any = None,
    allow_future: Any = False,
    version: Any = None,
) -> dict[str, Any]:
    """What `restore` will do (raises a LakehouseError, changing nothing, when it cannot): a table,
    partition or backup that does not exist is a NotFoundError naming the nearest that do.  `now`
    (var retention_now) names and dates the trash table; in the future it is refused unless
    `allow_future` (clock.retention_clock).  A Delta Lake table goes back whole to `version`
    (python_hooks/restore/delta.py); the plan then has `format` `delta`."""
    clock = retention_clock(now, allow_future)
    found = _existing_table(spark, table)
    database, name, live = found
    if live.format in WHOLE_TABLES and (partition or backup):
        kind, copies, give, example = WHOLE_TABLES[live.format]
        given = " and ".join(f"`{k}`" for k, v in (("partition", partition), ("backup", backup)) if v)
        raise ConfigError(
            f"restore of {database}.{name}: it is {kind}, which goes back whole to one of {copies};"
            f" {given} is for Hive-format tables. Give {give} instead, e.g."
            f" `dbt run-operation restore --args '{{table: {database}.{name}, version: {example}}}'`."
            " Nothing was changed."
        )
    if live.format == "delta":
        return delta.plan_delta_restore(spark, database, name, live.location, version)
    if live.format == "iceberg":
        return iceberg.plan_iceberg_restore(spark, database, name, version)
    if version is not None:
        raise ConfigError(
            f"restore of {database}.{name}: `version` is for Delta Lake and Iceberg tables, and this one is a"
            f" Hive-format table; give `partition` (and optionally `backup`). Nothing was changed."
        )
    database, name, live = _live_table(spark, table, partition, found)
    backups, lookalikes = _registered_backups(spark, database, name)
    pairs = _as_known(parse_partition(partition, live.partition_columns, table), live, backups)
    spec = "/".join(f"{k}={v}" for k, v in pairs)
    current = next((p for p in live.partitions if p.pairs == pairs), None)
    current_location = filesystem.qualify(spark, current.location) if current else None
    if backup:
        chosen, location = _named_backup(
            spark, table, database, spec, pairs, backup, backups, lookalikes, current_location
        )
    else:
        chosen, location = _newest_backup(spark, table, spec, pairs, live, current, backups, current_location)
    ts = clock.ms
    while metastore.table_exists(spark, database, f"{name}_trash_{ts}"):
        ts += 1
    return {
        "database": database,
        "table": name,
        "pairs": [list(p) for p in pairs],
        "partition_spec": spec,
        "partition_exists": current is not None,
        "current_location": current_location,
        "backup_table": chosen[1].name,
        "backup_location": location,
        "trash_table": f"{name}_trash_{ts}",
        "format": "hive",
    }
