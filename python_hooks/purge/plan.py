"""The purge's typed plan: what the catalog and the files say, before anything is written.

One purge node is three calls from its materialization (macros/purge/purge_materialization.sql):

    plan = adapter.purge_plan(config)               # planning.py: a PurgePlan, the catalog's and the files' facts
    plan = adapter.purge_scan(plan, scans)          # scanning.py: a new ScannedPlan, the rendered scans run
    adapter.purge_execute(plan, statements)         # execution.py: the rendered statements (statements.py), run

Between them Jinja renders every statement from the plan with the dispatchable clause macros
of macros/purge/purge_sql.sql (rendering runs nothing).  The objects below pass through Jinja
unchanged: macros read their attributes, Python gets the same objects back.  The scan does not
change the PurgePlan it is given: its ScannedPlan holds new table plans, with their partitions
to rewrite.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from python_hooks.catalog.column_types import INTEGRAL
from python_hooks.catalog.metastore import Partition
from python_hooks.catalog.patterns import TablePattern

# INTEGRAL and TablePattern are the catalog's, named here for the purge's modules
__all__ = ["INTEGRAL", "TablePattern"]
DEFAULT_PARTITION = "__HIVE_DEFAULT_PARTITION__"


@dataclass
class PurgeConfig:
    """The node's settings, checked by the materialization's first step (vars parsed there)."""

    invocation_id: str
    run_ts: int
    target_schema: str  # stale_data_records' (macros/common/stale_data.sql)
    whitelist: list[TablePattern]
    blacklist: list[TablePattern]
    id_table: str
    id_column: str
    dry_run: bool = False
    file_level: bool = True
    allow_empty: bool = False
    scan_parallelism: int = 4
    log_schema: str = ""  # purge_log's: the purge node's own schema

    def __post_init__(self) -> None:
        self.log_schema = self.log_schema or self.target_schema

    @classmethod
    def of(cls, given: dict[str, Any]) -> PurgeConfig:
        values = dict(given)
        values["whitelist"] = [TablePattern.of(p) for p in values.get("whitelist") or []]
        values["blacklist"] = [TablePattern.of(p) for p in values.get("blacklist") or []]
        values["run_ts"] = int(values["run_ts"])
        return cls(**values)


@dataclass(frozen=True)
class IdSource:
    """The validated id table; `bounds` the smallest and largest listed id (integral ids only)."""

    database: str
    table: str
    column: str
    type: str
    bounds: tuple[int, int] | None = None

    @property
    def name(self) -> str:
        return f"{self.database}.{self.table}"


@dataclass(frozen=True)
class Identifier:
    field: str
    path: list[str]
    type: str


@dataclass
class PartitionRewrite(Partition):
    """A partition (catalog/metastore.py; no values for an unpartitioned table) and its rewrite:
    where it goes and what it removes.  The purge keys its work by `path`, the escaped directory
    name (`ds=10%3A00`), as purge_log and the journal record it."""

    new_location: str = ""
    rows_purged: int = 0
    rows_before: int | None = None

    @property
    def values(self) -> list[list[str]]:
        """[[column, unescaped value]], as the macros and the journal take them."""
        return [[k, v] for k, v in self.pairs]

    @property
    def label(self) -> str:
        return self.path or "(unpartitioned)"


@dataclass
class Narrowed:
    """What the footers left to scan: the files that may hold an id, per partition."""

    files_read: int
    files_left: int
    partitions: list[PartitionRewrite]  # those with files left, `files` below keyed by path
    files: dict[str, list[str]] = field(default_factory=dict)


@dataclass
class TablePlan:
    database: str
    table: str
    location: str
    database_location: str
    partition_columns: list[str]
    partition_types: list[str]
    data_columns: list[str]
    storage_format: str | None  # parquet / orc when its footers can be read, else None
    bucketed: bool
    write_properties: dict[str, str] = field(default_factory=dict)  # parquet.* / orc.* of the table
    # "hive" (the staging table, backup and swap), "delta" (a delete and, with deletion
    # vectors, a REORG ... APPLY (PURGE): python_hooks/purge/delta.py) or "iceberg" (a delete and
    # the rewrites of the files delete files apply to: python_hooks/purge/iceberg.py)
    table_format: str = "hive"
    catalog: str | None = None  # the session's catalog of an Iceberg table (`iceberg`)
    deletion_vectors: bool = False  # a Delta table whose deletes only mark rows
    # an Iceberg table with delete files outside the partitions the scan found ids in (a run
    # stopped between its delete and its rewrites left them, its rows still in the bytes): its
    # rewrites cover the whole table
    rewrite_whole_table: bool = False
    # a Delta table's delta.logRetentionDuration in hours (None when Delta's text is not a plain
    # "interval <n> <unit>"): how long its log keeps an entry after a checkpoint
    log_retention_hours: float | None = None
    identifier: Identifier | None = None
    error: str | None = None  # refused (a bad descriptor): the table's FAILED row
    # the data skipping: "none" (no file can hold an id), "files" (scan the `narrowed` files),
    # "table" (scan the table)
    scan: str = "table"
    narrowed: Narrowed | None = None
    listing: list[PartitionRewrite] | None = None  # every partition, when known
    todo: list[PartitionRewrite] = field(default_factory=list)  # the partitions to rewrite
    staging: str = ""
    staging_location: str = ""
    backup: str = ""
    backup_location: str = ""
    candidate_view: str = ""
    scan_view: str = ""

    @property
    def name(self) -> str:
        return f"{self.database}.{self.table}"

    @property
    def partitioned(self) -> bool:
        return bool(self.partition_columns)


@dataclass
class PurgePlan:
    config: PurgeConfig
    ids: IdSource | None
    tables: list[TablePlan] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    recovered: list[dict[str, Any]] = field(default_factory=list)  # result rows completed from the journal
    delta: list[TablePlan] = field(default_factory=list)  # the onboarded Delta Lake tables

    @property
    def scanned(self) -> list[TablePlan]:
        """The tables to scan: not refused, and not ruled out by their footers."""
        return [t for t in self.tables if t.error is None and t.scan != "none"]


@dataclass(frozen=True)
class ScannedPlan:
    """A PurgePlan after its scans (scanning.py): each table's partitions to rewrite (`todo`,
    with rows_purged) and its listing, or the error its scan ended in."""

    config: PurgeConfig
    ids: IdSource | None
    tables: list[TablePlan]
    notices: list[str]
    recovered: list[dict[str, Any]]
    # the Delta Lake and Iceberg tables, with `todo` once purge_scan ran (delta.py, iceberg.py)
    delta: list[TablePlan] = field(default_factory=list)

    @classmethod
    def of(cls, plan: PurgePlan | ScannedPlan, tables: list[TablePlan]) -> ScannedPlan:
        return cls(plan.config, plan.ids, tables, list(plan.notices), list(plan.recovered), list(plan.delta))

    @property
    def rewriting(self) -> list[TablePlan]:
        """The tables with partitions to rewrite."""
        return [t for t in self.tables if t.error is None and t.todo]
