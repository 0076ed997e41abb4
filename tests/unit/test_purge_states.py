"""The partition state machine of a table's purge (python_hooks/purge/states.py): every allowed
transition works, every other (state, step) is refused with an error naming the partition, its
state and the step, and only SWAPPED partitions are committed."""

from __future__ import annotations

import itertools

import pytest

from python_hooks.purge.plan import PartitionRewrite
from python_hooks.purge.states import SETTLED, TRANSITIONS, IllegalTransition, Ledger, State, Step

# how each state is reached from PENDING, by the steps the table's purge runs
PATHS = {
    State.PENDING: [],
    State.REWRITTEN: [Step.REWRITE],
    State.BACKED_UP: [Step.REWRITE, Step.BACKUP],
    State.CHECKED: [Step.REWRITE, Step.BACKUP, Step.COMMIT_CHECK],
    State.SWAPPED: [Step.REWRITE, Step.BACKUP, Step.COMMIT_CHECK, Step.SWAP],
    State.FAILED: [Step.FAIL],
    State.UNDONE: [Step.FAIL, Step.UNDO],
}


def ledger_in(state: State) -> tuple[Ledger, PartitionRewrite]:
    part = PartitionRewrite([("ds", "d01")], "file:/w/t/ds=d01")
    ledger = Ledger("db.t", [part])
    for step in PATHS[state]:
        ledger.move(part, step, reason="why")
    assert ledger.state(part) is state
    return ledger, part


def test_every_state_is_reachable_and_the_line_is_the_issues():
    assert set(PATHS) == set(State)
    state, seen = State.PENDING, []
    for step in PATHS[State.SWAPPED]:
        state = TRANSITIONS[(state, step)]
        seen.append(state)
    assert seen == [State.REWRITTEN, State.BACKED_UP, State.CHECKED, State.SWAPPED]


@pytest.mark.parametrize(("state", "step"), list(itertools.product(State, Step)), ids=lambda v: v.name)
def test_each_state_and_step(state: State, step: Step):
    ledger, part = ledger_in(state)
    if (state, step) in TRANSITIONS:
        assert ledger.move(part, step, reason="r") is TRANSITIONS[(state, step)]
        assert ledger.state(part) is TRANSITIONS[(state, step)]
        return
    with pytest.raises(IllegalTransition) as caught:
        ledger.move(part, step)
    message = str(caught.value)
    assert "db.t partition ds=d01" in message
    assert f"is {state.value}" in message
    assert f"'{step.value}'" in message
    assert ledger.state(part) is state  # a refused step changes nothing


def test_only_failing_and_undoing_leave_the_line():
    off_line = {step for (_, step), after in TRANSITIONS.items() if after in (State.FAILED, State.UNDONE)}
    assert off_line == {Step.FAIL, Step.UNDO}
    # every state before SWAPPED can fail; a settled one cannot
    assert {s for (s, step) in TRANSITIONS if step is Step.FAIL} == set(State) - SETTLED


def test_a_settled_partition_keeps_its_first_reason():
    ledger, part = ledger_in(State.REWRITTEN)
    ledger.step = "check_rows"
    ledger.fail(part, "the row check")
    ledger.step = "swap"
    ledger.fail(part, "the table stopped")
    assert ledger.reason(part) == "the row check (failed in step check_rows, from REWRITTEN)"
    swapped, other = ledger_in(State.SWAPPED)
    swapped.fail(other, "too late")
    assert swapped.state(other) is State.SWAPPED


def test_the_outcome_commits_only_the_swapped_partitions():
    parts = [PartitionRewrite([("ds", d)], f"file:/w/t/ds={d}") for d in ("a", "b", "c")]
    ledger = Ledger("db.t", parts)
    for step in PATHS[State.SWAPPED]:
        ledger.move(parts[0], step)
        ledger.move(parts[2], step)
    ledger.move(parts[1], Step.REWRITE)
    ledger.step = "check_commit"
    ledger.fail(parts[1], "the commit check")
    outcome = ledger.outcome()
    assert outcome.swapped == ["ds=a", "ds=c"]
    assert outcome.failed == {"ds=b": "the commit check (failed in step check_commit, from REWRITTEN)"}
    assert ledger.unsettled() == []


@pytest.mark.parametrize("state", sorted(set(State) - SETTLED, key=lambda s: s.name), ids=lambda s: s.name)
def test_a_failed_partition_names_the_step_and_the_state_it_failed_in(state: State):
    """What an engineer reads first in purge_log and the console: where the partition stopped."""
    ledger, part = ledger_in(state)
    ledger.step = "swap"
    ledger.fail(part, "the location swap failed: boom")
    assert ledger.state(part) is State.FAILED
    assert ledger.reason(part) == f"the location swap failed: boom (failed in step swap, from {state.value})"
    assert ledger.outcome().failed == {"ds=d01": ledger.reason(part)}
