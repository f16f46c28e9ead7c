"""The search strategies (``lab.engine.search``) against naive enumeration, and the find mode's promises.

Every strategy runs real schedules of the program, so none may report an outcome a naive enumeration of every
schedule cannot reach; only a search that covered everything may PASS; the same seed runs the same executions; and
find mode stops at the first failing execution, shrinks it and confirms it by replay.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from lab import Scenario, actor
from lab.engine.search import STRATEGIES
from lab.errors import UsageError
from lab.scenarios.exploring import ExploreVerdict, ScenarioExploration, explore_scenario
from lab.scenarios.loader import LoadedScenario
from lab.scenarios.outcomes import acceptable
from lab.testing import ExplorationFailed, explore_code
from tests.own_code import searched

pytestmark = pytest.mark.timeout(120)


class TwoBumps(Scenario):
    """Two actors bump a counter with no lock: what each read is its outcome (a lost update among them)."""

    line_modules = ("tests.own_code.searched",)
    outcomes = (acceptable("any count"),)

    def setup(self) -> None:
        self.counter = searched.Counter()

    @actor
    def a(self) -> int:
        return self.counter.bump()

    @actor
    def b(self) -> int:
        return self.counter.bump()

    def observe(self) -> dict[str, object]:
        return {"n": self.counter.n}


class TwoLockedBumps(TwoBumps):
    """The same under a lock: every outcome counts both."""

    def setup(self) -> None:
        self.counter = searched.LockedCounter()

    def invariants(self) -> list[tuple[str, bool]]:
        return [("both counted", self.counter.n == 2)]


def _loaded(cls: type[Scenario]) -> LoadedScenario:
    return LoadedScenario(cls.__name__, Path(__file__), cls, cls.__doc__ or "")


@pytest.fixture(scope="module")
def naive() -> ScenarioExploration:
    """Every schedule of TwoBumps at line granularity, with no reduction."""
    found = explore_scenario(_loaded(TwoBumps), granularity="line", reduction=False)
    assert found.verdict is ExploreVerdict.PASS and found.naive_count == found.schedules
    return found


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_no_strategy_reaches_an_outcome_naive_enumeration_cannot(strategy: str, naive: ScenarioExploration) -> None:
    found = explore_scenario(
        _loaded(TwoBumps), granularity="line", strategy=strategy, mode="prove", max_schedules=400, seed=3
    )
    assert set(found.outcomes) <= set(naive.outcomes)
    assert found.executions <= 400
    assert sum(found.outcomes.values()) == found.schedules


@pytest.mark.parametrize("strategy", ["dpor", "ipb", "idb", "portfolio"])
def test_a_systematic_search_that_ends_reaches_every_outcome(strategy: str, naive: ScenarioExploration) -> None:
    found = explore_scenario(
        _loaded(TwoBumps), granularity="line", strategy=strategy, mode="prove", max_schedules=20_000
    )
    assert found.verdict is ExploreVerdict.PASS, found.problem
    assert set(found.outcomes) == set(naive.outcomes)


@pytest.mark.parametrize("strategy", ["ipb", "idb"])
def test_a_bounded_search_that_skipped_nothing_ran_every_schedule_once(
    strategy: str, naive: ScenarioExploration
) -> None:
    found = explore_scenario(
        _loaded(TwoBumps), granularity="line", strategy=strategy, mode="prove", max_schedules=20_000
    )
    assert found.schedules == naive.schedules  # each schedule counted once, the re-runs of lower bounds apart
    assert found.outcomes == naive.outcomes


def test_dpor_still_runs_one_execution_per_class() -> None:
    found = explore_scenario(_loaded(TwoBumps), granularity="line", strategy="dpor", mode="prove")
    assert found.executions == found.classes == found.schedules


@pytest.mark.parametrize("strategy", ["pct", "random"])
def test_a_sampler_never_passes(strategy: str) -> None:
    found = explore_scenario(
        _loaded(TwoLockedBumps), granularity="line", strategy=strategy, mode="find", max_schedules=50
    )
    assert found.verdict is ExploreVerdict.INCOMPLETE
    assert "sampled schedules" in found.problem and "50 executions" in found.problem


def test_a_bounded_search_cut_by_the_budget_states_its_bound() -> None:
    found = explore_scenario(_loaded(TwoLockedBumps), granularity="line", strategy="idb", mode="find", max_schedules=5)
    assert found.verdict is ExploreVerdict.INCOMPLETE
    assert "delays" in found.problem


def test_the_portfolio_proves_a_small_correct_program() -> None:
    found = explore_scenario(_loaded(TwoLockedBumps), granularity="line", strategy="portfolio", mode="find")
    assert found.verdict is ExploreVerdict.PASS
    assert found.by_strategy["dpor"] >= found.executions // 2


def _flags(n: int, **options: object) -> ScenarioExploration:
    actors: dict[str, object] = {f"s{i}": searched.Flags.set for i in range(n - 1)}
    actors["check"] = searched.Flags.check
    with pytest.raises(ExplorationFailed) as failed:
        explore_code(
            setup=lambda lab: searched.Flags(),
            actors=actors,  # type: ignore[arg-type]
            under_test=[searched],
            **options,  # type: ignore[arg-type]
        )
    return failed.value.found


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_find_mode_stops_at_the_first_failure_and_replays_it(strategy: str) -> None:
    found = _flags(3, strategy=strategy, max_schedules=2_000)
    assert found.verdict is ExploreVerdict.FAIL
    assert found.first_failure is not None and found.executions == found.first_failure
    example = found.counterexample
    assert example is not None and example.replayed and "half written" in example.why


def test_the_same_seed_runs_the_same_search() -> None:
    first = _flags(6, strategy="random", seed=11)
    again = _flags(6, strategy="random", seed=11)
    assert (first.first_failure, first.counterexample) == (again.first_failure, again.counterexample)


def test_the_counterexample_is_shrunk_and_replays_strictly() -> None:
    found = _flags(6, strategy="random", seed=5)
    example = found.counterexample
    assert example is not None
    assert example.replayed
    assert example.preemptions <= 2  # a half-written pair needs one switch into the checker, one back


@pytest.mark.slow
def test_many_actors_in_one_order_are_found_by_the_default_portfolio() -> None:
    """Nine setters and a checker: the failing order lies where depth-first search arrives last."""
    found = _flags(10, max_schedules=10_000)
    assert found.verdict is ExploreVerdict.FAIL and found.first_failure is not None


def test_a_time_budget_cuts_the_search_and_says_so() -> None:
    found = explore_scenario(
        _loaded(TwoLockedBumps),
        granularity="line",
        strategy="random",
        mode="find",
        seconds=0.2,
        max_schedules=1_000_000,
    )
    assert found.verdict is ExploreVerdict.INCOMPLETE and found.time_hit
    assert "time budget" in found.problem


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"strategy": "bfs"}, "strategy must be one of"),
        ({"mode": "hunt"}, "mode must be"),
        ({"seed": -1}, "seed must be"),
        ({"seconds": 0}, "seconds must be"),
    ],
)
def test_a_search_it_cannot_run_is_refused(options: dict[str, object], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        explore_scenario(_loaded(TwoBumps), **options)  # type: ignore[arg-type]
