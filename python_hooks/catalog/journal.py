"""The purge's journal: every table's swap, before and after, on the warehouse's own filesystem.

The metastore swap is the purge's commit; `purge_log` is its record.  Between the two lies the
end of the node, which a Ctrl-C, a SIGTERM or a SIGKILL can cut.  So before a table's swap (before
its staging table and backup are even made) the purge writes the table's *intent*: the partitions,
their old and new locations, the staging table and the backup.  After the swap it writes the
*outcome*: which partitions it swapped, which failed and why.  Once the rows reached `purge_log`
it writes *logged*.  An entry without *logged* is open: the next purge node completes `purge_log`
from it before anything else (python_hooks/purge/recovery.py), whatever the interrupted run managed to write.

The journal lives under the warehouse directory, so it works with a shared metastore and from
any host that sees the warehouse, through the session's Hadoop FileSystem (local disk, HDFS,
object stores):

    <warehouse>/_lakehouse_journal/purge/<purge_ts>-<invocation_id>/<database>.<table>.intent.json
                                                                    <database>.<table>.outcome.json
                                                                    <database>.<table>.logged

Each file is written whole (a hidden temporary name, then a rename), never changed.  The
journal holds table names, partitions, locations and counts, never an id.  The erasure verifier
reads every entry's locations (`read_entries`): a pre-purge copy the journal names is read even
when no log names it.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from typing import Any

from python_hooks.catalog import files
from python_hooks.catalog.jvm import jvm as jvm_view

JOURNAL_DIR = "_lakehouse_journal"
VERSION = 1


@dataclass
class PartitionSwap:
    """One partition (or the unpartitioned table, spec '') the purge swaps to its rewrite."""

    partition_spec: str
    values: list[list[str]]
    old_location: str
    new_location: str
    rows_before: int | None = None
    rows_purged: int | None = None


@dataclass
class Intent:
    """What one table's purge is about to do; written before its staging table is made."""

    invocation_id: str
    purge_ts: int
    database: str
    table: str
    identifier_field: str
    staging_table: str
    staging_location: str
    backup_table: str
    partitions: list[PartitionSwap]
    started_at: str = ""
    version: int = VERSION

    @property
    def run(self) -> str:
        return f"{self.purge_ts}-{self.invocation_id}"

    @property
    def name(self) -> str:
        return f"{self.database}.{self.table}"


@dataclass
class Outcome:
    """What it did: the partitions swapped, the others with the reason (none swapped: undone)."""

    swapped: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    recorded_at: str = ""


@dataclass
class Entry:
    intent: Intent
    outcome: Outcome | None
    logged: bool


def now_text() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f")


class Journal:
    """The journal of one warehouse (`spark.sql.warehouse.dir`, or `root`)."""

    def __init__(self, spark: Any, root: str | None = None) -> None:
        self.spark = spark
        warehouse = root or str(spark.conf.get("spark.sql.warehouse.dir"))
        path_class = jvm_view(spark).org.apache.hadoop.fs.Path
        self.root = path_class(path_class(warehouse, JOURNAL_DIR), "purge")
        self.fs = self.root.getFileSystem(spark._jsc.hadoopConfiguration())

    def _directory(self, intent: Intent) -> Any:
        return jvm_view(self.spark).org.apache.hadoop.fs.Path(self.root, intent.run)

    def _write(self, intent: Intent, kind: str, document: dict[str, Any] | None) -> None:
        data = b"" if document is None else json.dumps(document, sort_keys=True).encode("utf-8")
        files.publish_file(self.spark, self._directory(intent), f"{intent.name}.{kind}", data)

    def record_intent(self, intent: Intent) -> None:
        intent.started_at = intent.started_at or now_text()
        self._write(intent, "intent.json", asdict(intent))

    def record_outcome(self, intent: Intent, outcome: Outcome) -> None:
        outcome.recorded_at = outcome.recorded_at or now_text()
        self._write(intent, "outcome.json", asdict(outcome))

    def mark_logged(self, intent: Intent) -> None:
        self._write(intent, "logged", None)

    def read_entries(self, open_only: bool = False) -> list[Entry]:
        """Every entry (or only those not yet logged), oldest run first."""
        if not self.fs.exists(self.root):
            return []
        entries = []
        for run in sorted(self.fs.listStatus(self.root), key=lambda s: str(s.getPath().getName())):
            if not run.isDirectory():
                continue
            names = {str(s.getPath().getName()): s.getPath() for s in self.fs.listStatus(run.getPath())}
            for name in sorted(names):
                if not name.endswith(".intent.json") or name.startswith("."):
                    continue
                table = name[: -len(".intent.json")]
                logged = f"{table}.logged" in names
                if open_only and logged:
                    continue
                intent = _intent(json.loads(self._read(names[name])))
                outcome_path = names.get(f"{table}.outcome.json")
                outcome = (
                    Outcome(**json.loads(self._read(outcome_path))) if outcome_path is not None else None
                )
                entries.append(Entry(intent, outcome, logged))
        return entries

    def _read(self, path: Any) -> str:
        stream = self.fs.open(path)
        try:
            return str(jvm_view(self.spark).org.apache.commons.io.IOUtils.toString(stream, "UTF-8"))
        finally:
            stream.close()


def _intent(document: dict[str, Any]) -> Intent:
    partitions = [PartitionSwap(**p) for p in document.pop("partitions", [])]
    return Intent(**document, partitions=partitions)


def read_entries(spark: Any) -> list[Entry]:
    """Every entry of the warehouse's journal (the erasure verifier reads their locations)."""
    return Journal(spark).read_entries()
