"""Primitives made before the run are scheduler-aware for it: a correct program that takes a lock made at import is
a PASS, never HUNG with the actor blamed, and the real objects are back in place after each run."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from lab.scenarios.exploring import ExploreVerdict
from lab.testing import ExplorationFailed, explore_code
from tests.own_code import made_before
from tests.own_code.made_before import Account


def _explore(deposit: Callable[[Account], None]) -> ExploreVerdict:
    found = explore_code(
        setup=lambda lab: Account(),
        actors={"a": deposit, "b": deposit},
        check=lambda account: {"both deposits kept": account.balance == 12 or account.balance == 10},
        under_test=[made_before],
        mode="prove",
        strategy="dpor",
    )
    return found.verdict


@pytest.mark.timeout(120)
@pytest.mark.parametrize(
    "deposit",
    [
        lambda account: account.deposit_module_lock(5),
        lambda account: account.deposit_class_lock(5),
        lambda account: account.deposit_rlock(5),
        lambda account: account.deposit_when_ready(5),
    ],
    ids=["module lock", "class lock", "rlock taken twice", "set event and semaphore"],
)
def test_a_correct_use_of_a_primitive_made_at_import_passes(deposit: Callable[[Account], None]) -> None:
    assert _explore(deposit) is ExploreVerdict.PASS


@pytest.mark.timeout(120)
def test_a_queue_made_at_import_keeps_its_items_for_every_run() -> None:
    """Each run takes the two jobs (5 and 7) the queue held at import: 12 every time, under a condition made then."""
    found = explore_code(
        setup=lambda lab: Account(),
        actors={"a": Account.deposit_a_job, "b": Account.deposit_a_job},
        check=lambda account: {"both jobs kept": account.balance == 12},
        under_test=[made_before],
        mode="prove",
        strategy="dpor",
    )
    assert found.verdict is ExploreVerdict.PASS
    assert made_before.JOBS.qsize() == 2  # the real queue was never drained: runs used its twin


@pytest.mark.timeout(120)
def test_the_racy_twin_still_fails() -> None:
    with pytest.raises(ExplorationFailed, match="invariant broken"):
        _explore(lambda account: account.deposit_racy(5))


def test_the_real_objects_are_back_after_a_run() -> None:
    before = (made_before.LOCK, made_before.RLOCK, made_before.READY, made_before.JOBS, Account.__dict__["lock"])
    _explore(lambda account: account.deposit_class_lock(5))
    after = (made_before.LOCK, made_before.RLOCK, made_before.READY, made_before.JOBS, Account.__dict__["lock"])
    assert all(x is y for x, y in zip(before, after, strict=True))
    assert not made_before.LOCK.locked()
