"""What the steps of a purge share: the node's run (`NodeRun`) and one table's (`TableRun`).

The steps themselves are functions of a TableRun (rewriting.py, committing.py), run in the fixed
order of table_purge.STEPS; what each partition may go through next is states.py's.
"""

from __future__ import annotations

from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from python_hooks.catalog import commit, console
from python_hooks.catalog.file_facts import FileFacts
from python_hooks.catalog.journal import Intent, Journal
from python_hooks.catalog.work import Pool
from python_hooks.purge.plan import PartitionRewrite, PurgeConfig, ScannedPlan, TablePlan
from python_hooks.purge.progress import Progress
from python_hooks.purge.statements import TableStatements
from python_hooks.purge.states import Ledger


@dataclass
class NodeRun:
    """One purge node's run: its session, plan and cancellation, and the records of its tables."""

    spark: Any
    plan: ScannedPlan
    cancellation: Any
    journal: Journal
    facts: FileFacts
    stale: list[dict[str, Any]] = field(default_factory=list)  # old locations of COMMITTED partitions
    recorded: list[Intent] = field(default_factory=list)  # the journal entries whose outcome is written

    @classmethod
    def of(cls, spark: Any, plan: ScannedPlan, cancellation: Any) -> NodeRun:
        return cls(spark, plan, cancellation, Journal(spark), FileFacts(spark))


@dataclass
class TableRun:
    """One table's purge in flight: its statements, its partitions' ledger, what its steps found."""

    node: NodeRun
    table: TablePlan
    sql: TableStatements
    pool: Pool
    progress: Progress
    ledger: Ledger = field(init=False)
    rows: list[dict[str, Any]] = field(default_factory=list)
    # file-level rewrite: {spec: (files that may hold an id, files copied unchanged)}
    file_level: dict[str, tuple[list[str], list[str]]] | None = None
    intent: Intent | None = None
    backup: Future | None = None  # the backup table and partitions, made in the background

    def __post_init__(self) -> None:
        self.ledger = Ledger(self.table.name, self.table.todo)

    @property
    def spark(self) -> Any:
        return self.node.spark

    @property
    def config(self) -> PurgeConfig:
        return self.node.plan.config

    def execute(self, sql: str, step: str) -> list[Any]:
        console.debug(f"purge step {step} ({self.table.name}):\n{sql}")
        return [list(row) for row in self.spark.sql(sql).collect()]

    def execute_staging_write(self, statement: str, step: str) -> None:
        """A write into the staging table, committed without renames on an object store; what
        it cost the store is reported there (S3A's own counters)."""
        location = self.table.location
        before = commit.store_statistics(self.spark, location)
        with commit.staging_commit(self.spark, location) as committer:
            self.execute(statement, step)
        if before:
            cost = commit.describe_cost(before, commit.store_statistics(self.spark, location))
            console.say(f"purge: {self.table.name}: {step}: {committer} committer; object store: {cost}")

    def check_cancelled(self) -> None:
        self.node.cancellation.check(f"{self.table.name} was undone before its swap")

    def partition_sql(self, part: PartitionRewrite) -> Any:
        return self.sql.partitions[part.path]
