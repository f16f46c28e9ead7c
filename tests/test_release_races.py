"""A race between a standard lock's release and another actor's acquisition is reversed where it can be: at the
holder's acquisition. The standard stand-in once gave the lock up before its release point, so the explorer saw
the lock free there, planned the waiter at the release (where it could only block), and lost the reversal: it
said PASS on a program whose bug naive enumeration finds."""

from __future__ import annotations

import pytest

from lab.scenarios.exploring import ExploreVerdict
from lab.testing import ExplorationFailed, explore_code
from tests.own_code import conditions


@pytest.mark.timeout(60)
@pytest.mark.parametrize("granularity", ["probe", "line"])
def test_dpor_finds_the_woken_consumer_taking_a_missing_item(granularity: str) -> None:
    with pytest.raises(ExplorationFailed) as failed:
        explore_code(
            setup=lambda lab: conditions.Items(),
            actors={
                "producer": lambda s: s.produce_two(),
                "one": lambda s: s.consume(),
                "two": lambda s: s.consume(),
            },
            under_test=[conditions],
            granularity=granularity,
            strategy="dpor",
            mode="prove",
        )
    found = failed.value.found
    assert found.verdict is ExploreVerdict.FAIL
    assert found.counterexample is not None and found.counterexample.replayed
    assert "took an item that was not there" in found.counterexample.why
    assert found.executions == found.classes  # still optimal
