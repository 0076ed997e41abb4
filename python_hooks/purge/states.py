"""The state of each partition of a table's purge, and what may happen after what, written once.

    PENDING --rewrite--> REWRITTEN --backup--> BACKED_UP --commit check--> CHECKED --swap--> SWAPPED
       |                    |                     |                           |
       +--------------------+------- fail --------+---------------------------+--> FAILED --undo--> UNDONE

A partition (or the unpartitioned table) starts PENDING.  Each step of the table's purge
(table_purge.py) moves the partitions it worked on along one row of TRANSITIONS; a partition
leaves the line only by `fail` (its reason kept, ending with the step that failed it and the
state it was in: "(failed in step swap, from CHECKED)"), and a failed partition is undone (its
backup partition dropped, its rewritten copy deleted) after the journal's outcome is written,
unless it failed from CHECKED and the catalog does not have it at its old location (table_purge).
SWAPPED is the only state that is committed: `Ledger.outcome` is the one place that decides it.  Any
other move raises IllegalTransition, naming the partition, its state and the step.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from python_hooks.catalog.file_facts import DataFile
from python_hooks.catalog.journal import Outcome
from python_hooks.errors import LakehouseError
from python_hooks.purge.plan import PartitionRewrite


class State(Enum):
    PENDING = "PENDING"
    REWRITTEN = "REWRITTEN"
    BACKED_UP = "BACKED_UP"
    CHECKED = "CHECKED"
    SWAPPED = "SWAPPED"
    FAILED = "FAILED"
    UNDONE = "UNDONE"


class Step(Enum):
    REWRITE = "rewrite"
    BACKUP = "backup"
    COMMIT_CHECK = "commit check"
    SWAP = "swap"
    FAIL = "fail"
    UNDO = "undo"


# (state, step) -> the state the step leaves the partition in; nothing else is allowed
TRANSITIONS: dict[tuple[State, Step], State] = {
    (State.PENDING, Step.REWRITE): State.REWRITTEN,
    (State.REWRITTEN, Step.BACKUP): State.BACKED_UP,
    (State.BACKED_UP, Step.COMMIT_CHECK): State.CHECKED,
    (State.CHECKED, Step.SWAP): State.SWAPPED,
    (State.PENDING, Step.FAIL): State.FAILED,
    (State.REWRITTEN, Step.FAIL): State.FAILED,
    (State.BACKED_UP, Step.FAIL): State.FAILED,
    (State.CHECKED, Step.FAIL): State.FAILED,
    (State.FAILED, Step.UNDO): State.UNDONE,
}
# the states a table's purge ends in: nothing more happens to a partition in them
SETTLED = frozenset({State.SWAPPED, State.FAILED, State.UNDONE})


class IllegalTransition(LakehouseError):
    """A step was asked of a partition in a state it may not follow (a bug of the engine)."""


@dataclass
class Entry:
    part: PartitionRewrite
    state: State = State.PENDING
    reason: str | None = None  # why it FAILED
    # its files before the rewrite, each with its size, time and version (the commit check's reference)
    files: list[DataFile] = field(default_factory=list)
    backup_partition: bool = False  # its backup partition exists (undo drops it)
    failed_from: State | None = None  # the state it FAILED from (CHECKED: it may have moved)


class Ledger:
    """The partitions of one table's purge, each with its state, in the plan's order."""

    def __init__(self, table: str, parts: list[PartitionRewrite]) -> None:
        self.table = table
        self.entries = {p.path: Entry(p) for p in parts}
        self.step = "start"  # the step of table_purge.STEPS running now (table_purge.run_table)

    def entry(self, part: PartitionRewrite) -> Entry:
        return self.entries[part.path]

    def state(self, part: PartitionRewrite) -> State:
        return self.entries[part.path].state

    def move(self, part: PartitionRewrite, step: Step, reason: str | None = None) -> State:
        """`part` through `step`: its new state, or IllegalTransition."""
        entry = self.entries[part.path]
        after = TRANSITIONS.get((entry.state, step))
        if after is None:
            allowed = ", ".join(s.value for (s, t) in TRANSITIONS if t is step)
            raise IllegalTransition(
                f"purge: {self.table} partition {part.label} is {entry.state.value}: the step"
                f" '{step.value}' may not run on it (it runs on {allowed})"
            )
        if step is Step.FAIL:
            entry.reason = f"{reason} (failed in step {self.step}, from {entry.state.value})"
            entry.failed_from = entry.state
        entry.state = after
        return after

    def fail(self, part: PartitionRewrite, reason: str) -> None:
        """`part` FAILED with `reason`, unless it already settled (the first reason stays)."""
        if self.state(part) not in SETTLED:
            self.move(part, Step.FAIL, reason)

    def fail_all(self, state: State, reason: str) -> None:
        for part in self.parts(state):
            self.move(part, Step.FAIL, reason)

    def parts(self, *states: State) -> list[PartitionRewrite]:
        return [e.part for e in self.entries.values() if e.state in states]

    def unsettled(self) -> list[PartitionRewrite]:
        return [e.part for e in self.entries.values() if e.state not in SETTLED]

    def reason(self, part: PartitionRewrite) -> str:
        return self.entries[part.path].reason or ""

    def outcome(self) -> Outcome:
        """What is committed: the SWAPPED partitions; every other one failed, with its reason."""
        return Outcome(
            swapped=[p.path for p in self.parts(State.SWAPPED)],
            failed={
                e.part.path: e.reason or "" for e in self.entries.values() if e.state is not State.SWAPPED
            },
        )
