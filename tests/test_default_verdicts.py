"""No silent green by default: with nothing declared, a raise, a deadlock and an undeclared outcome all fail.

The default outcome table of :func:`lab.testing.explore_code`, of the ``lab_explore`` fixture and of a scenario
that writes none accepts one thing only: every actor returned and the run finished. Whoever expects something else
says so (``raises=``, an outcome row), and a row that names only some keys never accepts a failure in the others.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from lab import Scenario, actor
from lab.errors import UsageError
from lab.scenarios.exploring import ExploreVerdict, ScenarioExploration, explore_scenario
from lab.scenarios.loader import LoadedScenario
from lab.scenarios.outcomes import Grade, Outcome, acceptable, only, row_for
from lab.testing import ExplorationFailed, explore_code
from tests.own_code import failing


def _withdrawals(**options: object) -> ScenarioExploration:
    return explore_code(
        setup=lambda lab: failing.CheckedAccount(),
        actors={"one": lambda acct: acct.withdraw(), "two": lambda acct: acct.withdraw()},
        under_test=[failing],
        **options,  # type: ignore[arg-type]
    )


def _transfers(**options: object) -> ScenarioExploration:
    return explore_code(
        setup=lambda lab: failing.TwoLocks(),
        actors={"fwd": lambda t: t.forward(), "back": lambda t: t.backward()},
        under_test=[failing],
        **options,  # type: ignore[arg-type]
    )


@pytest.mark.timeout(60)
class TestExploreCodeDefaults:
    def test_an_actor_that_raises_fails_and_is_named(self) -> None:
        with pytest.raises(ExplorationFailed) as failed:
            _withdrawals()
        text = str(failed.value)
        assert "FAIL" in text and "raised AssertionError: balance -1" in text
        assert failed.value.found.verdict is ExploreVerdict.FAIL

    def test_a_failed_exploration_is_an_assertion_error(self) -> None:
        """pytest reports it as a failed test (not an error in the test)."""
        with pytest.raises(AssertionError):
            _withdrawals()

    def test_a_deadlock_fails_and_names_who_waits_for_what(self) -> None:
        with pytest.raises(ExplorationFailed) as failed:
            _transfers()
        text = str(failed.value)
        assert "deadlock" in text and "waits for" in text

    def test_the_correct_twin_passes(self) -> None:
        found = explore_code(
            setup=lambda lab: failing.Ordered(),
            actors={"fwd": lambda t: t.forward(), "again": lambda t: t.forward()},
            check=lambda t: {"both moved": t.moved == 2},
            under_test=[failing],
        )
        assert found.verdict is ExploreVerdict.PASS

    @pytest.mark.slow
    def test_declared_exceptions_are_outcomes(self) -> None:
        found = _withdrawals(raises={"one": AssertionError, "two": AssertionError})
        assert found.verdict is ExploreVerdict.PASS
        assert any("raised AssertionError" in key for key in found.outcomes)

    def test_an_exception_declared_for_one_actor_only_still_fails_the_other(self) -> None:
        """Both actors can be the one whose check fails; declaring one leaves the other failing."""
        with pytest.raises(ExplorationFailed, match="raised AssertionError"):
            _withdrawals(raises={"one": AssertionError})

    def test_a_declared_deadlock_row_accepts_the_deadlock(self) -> None:
        found = _transfers(outcomes=[acceptable("may deadlock", run="DEADLOCK"), acceptable("or finish")])
        assert found.verdict is ExploreVerdict.PASS

    def test_a_catch_all_row_does_not_accept_a_raise(self) -> None:
        """``acceptable("anything")`` names no actor and no run: it cannot admit an actor that raised."""
        with pytest.raises(ExplorationFailed, match="raised AssertionError"):
            _withdrawals(outcomes=[acceptable("anything")])

    def test_an_undeclared_return_value_fails(self) -> None:
        with pytest.raises(ExplorationFailed, match="FAIL"):
            explore_code(
                setup=lambda lab: {"n": 0},
                actors={"a": lambda box: box.setdefault("who", "a"), "b": lambda box: box.setdefault("who", "b")},
                outcomes=[acceptable("a is first", a="a", b="a")],
            )

    @pytest.mark.parametrize(
        ("options", "message"),
        [
            ({"raises": {"nobody": KeyError}}, "names 'nobody'"),
            ({"raises": {"one": "KeyError"}}, "takes exception classes"),
            ({"outcomes": []}, "at least one row"),
            ({"outcomes": ["anything"]}, "not 'anything'"),
            ({"outcomes": [acceptable("x", one="DONE", tow="DONE")]}, "names 'tow'.*did you mean 'two'"),
            ({"raises": {"on": KeyError}}, "names 'on', which is not one of the actors .one, two.; did you mean 'one'"),
        ],
    )
    def test_a_table_that_declares_nothing_real_is_refused(self, options: dict[str, object], message: str) -> None:
        with pytest.raises(UsageError, match=message):
            _withdrawals(**options)


@pytest.mark.timeout(60)
def test_the_fixture_fails_by_default_too(lab_explore: Callable[..., ScenarioExploration]) -> None:
    with pytest.raises(AssertionError, match="raised AssertionError"):
        lab_explore(
            setup=lambda lab: failing.CheckedAccount(),
            actors={"one": lambda acct: acct.withdraw(), "two": lambda acct: acct.withdraw()},
            under_test=[failing],
        )


class NoTable(Scenario):
    """A scenario that writes no outcome table: its default is ``only()``, every actor returned."""

    line_modules = ("tests.own_code.failing",)

    def setup(self) -> None:
        self.account = failing.CheckedAccount()

    @actor
    def one(self) -> None:
        self.account.withdraw()

    @actor
    def two(self) -> None:
        self.account.withdraw()


@pytest.mark.timeout(60)
def test_a_scenario_without_a_table_fails_when_an_actor_raises() -> None:
    loaded = LoadedScenario("NoTable", Path(__file__), NoTable, NoTable.__doc__ or "")
    found = explore_scenario(loaded, granularity="line")
    assert found.verdict is ExploreVerdict.FAIL


class TestRowsAdmitOnlyWhatTheyName:
    actors = ("a", "b")

    def test_a_row_without_run_admits_only_a_finished_run(self) -> None:
        row = Outcome(Grade.ACCEPTABLE, "any", {})
        assert row_for([row], {"run": "FINISHED", "a": 1, "b": 2}, self.actors) is row
        assert row_for([row], {"run": "DEADLOCK", "a": "BLOCKED", "b": 2}, self.actors) is None
        assert row_for([row], {"run": "HUNG", "a": "HUNG", "b": 2}, self.actors) is None

    def test_a_row_without_an_actor_admits_no_raise_by_it(self) -> None:
        row = Outcome(Grade.ACCEPTABLE, "a ok", {"a": 1})
        assert row_for([row], {"run": "FINISHED", "a": 1, "b": "ERROR"}, self.actors) is None
        named = Outcome(Grade.ACCEPTABLE, "b may raise", {"a": 1, "b": "ERROR"})
        assert row_for([row, named], {"run": "FINISHED", "a": 1, "b": "ERROR"}, self.actors) is named

    def test_a_deadlock_row_admits_blocked_actors_but_not_a_raise(self) -> None:
        row = Outcome(Grade.ACCEPTABLE, "deadlock", {"run": "DEADLOCK"})
        assert row_for([row], {"run": "DEADLOCK", "a": "BLOCKED", "b": "BLOCKED"}, self.actors) is row
        assert row_for([row], {"run": "DEADLOCK", "a": "BLOCKED", "b": "ERROR"}, self.actors) is None

    def test_the_scenario_default_admits_returns_only(self) -> None:
        table = only()
        assert row_for(table, {"run": "FINISHED", "a": None, "b": None}, self.actors) is not None
        assert row_for(table, {"run": "FINISHED", "a": None, "b": "ERROR"}, self.actors) is None
