"""Exploring a learner's own class from a test file through the pytest plugin's fixture."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from lab.scenarios.exploring import ExploreVerdict, ScenarioExploration
from tests.own_code import bank


@pytest.mark.timeout(60)
def test_the_racy_account_fails_with_a_replay_table(lab_explore: Callable[..., ScenarioExploration]) -> None:
    with pytest.raises(AssertionError) as failed:
        lab_explore(
            setup=lambda lab: bank.Account(),
            actors={"alice": lambda acct: acct.deposit(5), "bob": lambda acct: acct.deposit(7)},
            check=lambda acct: {"no deposit lost": acct.balance == 12},
            under_test=[bank],
        )
    text = str(failed.value)
    assert "FAIL" in text and "no deposit lost" in text
    header = next(line for line in text.splitlines() if "alice" in line and "bob" in line)
    assert header.index("alice") < header.index("bob")  # the replay table: one column per actor
    assert "balance" in text  # why: the accesses to the balance whose order decided it
    assert "<" not in text.split("schedule:")[0]  # no raw object dump


@pytest.mark.timeout(60)
def test_the_fixed_twin_passes(lab_explore: Callable[..., ScenarioExploration]) -> None:
    found = lab_explore(
        setup=lambda lab: bank.SafeAccount(),
        actors={"alice": lambda acct: acct.deposit(5), "bob": lambda acct: acct.deposit(7)},
        check=lambda acct: {"no deposit lost": acct.balance == 12},
        under_test=[bank],
    )
    assert found.verdict is ExploreVerdict.PASS and found.schedules >= 2


@pytest.mark.timeout(60)
def test_an_actor_written_as_a_lambda_in_the_test_is_recorded(lab_explore: Callable[..., ScenarioExploration]) -> None:
    """The race lives in the test's own lambdas (no module of the learner's): still found."""
    with pytest.raises(AssertionError, match="FAIL"):
        lab_explore(
            setup=lambda lab: {"n": 0},
            actors={"a": lambda box: box.update(n=box["n"] + 1), "b": lambda box: box.update(n=box["n"] + 1)},
            check=lambda box: {"both counted": box["n"] == 2},
            granularity="instruction",
        )
