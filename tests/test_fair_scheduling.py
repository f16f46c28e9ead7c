"""A spin wait neither hangs the exploration nor passes it: the scheduler is fair past FAIR_STREAK steps (and says
so in the trace), an exploration whose runs met that rule is never a proof, and a spinner that waits for nobody ends
its run HUNG after MAX_DECISIONS scheduling points instead of running for ever."""

from __future__ import annotations

import pytest

from lab.engine.core import _handoff as scheduler
from lab.scenarios.exploring import ExploreVerdict
from lab.testing import ExplorationFailed, explore_code
from tests.own_code import spinning


@pytest.fixture(autouse=True)
def _short_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same rules with smaller numbers, so each test takes a second, not a minute."""
    monkeypatch.setattr(scheduler, "FAIR_STREAK", 50)
    monkeypatch.setattr(scheduler, "MAX_DECISIONS", 3_000)


@pytest.mark.timeout(60)
def test_a_correct_spin_wait_ends_and_is_not_called_a_proof() -> None:
    with pytest.raises(ExplorationFailed) as failed:
        explore_code(
            setup=lambda lab: spinning.Flag(),
            actors={"consumer": lambda f: f.consume(), "producer": lambda f: f.publish()},
            under_test=[spinning],
            strategy="dpor",
            mode="prove",
            max_schedules=300,
        )
    found = failed.value.found
    assert found.verdict is ExploreVerdict.INCOMPLETE
    assert "raised" not in str(failed.value)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("strategy", ["portfolio", "dpor", "pct", "random", "idb"])
def test_a_buggy_spin_wait_fails(strategy: str) -> None:
    with pytest.raises(ExplorationFailed) as failed:
        explore_code(
            setup=lambda lab: spinning.Flag(),
            actors={"consumer": lambda f: f.consume(), "producer": lambda f: f.publish_too_early()},
            under_test=[spinning],
            strategy=strategy,
            max_schedules=2_000,
        )
    assert failed.value.found.verdict is ExploreVerdict.FAIL
    assert "saw the flag before the data" in str(failed.value)


@pytest.mark.timeout(60)
def test_a_spinner_nobody_releases_ends_hung_and_named() -> None:
    with pytest.raises(ExplorationFailed) as failed:
        explore_code(
            setup=lambda lab: spinning.Flag(),
            actors={"consumer": lambda f: f.consume()},
            under_test=[spinning],
            max_schedules=10,
        )
    text = str(failed.value)
    assert failed.value.found.verdict is ExploreVerdict.FAIL
    assert "hung" in text and "did not end within 3,000 scheduling points" in text and "consumer" in text
