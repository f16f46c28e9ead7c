"""Any number of actors: schedule strings past 36 actors, and a 100-actor program explored and replayed end to end.

Up to 36 actors a schedule string numbers actors one character each, exactly as it always did (the docs, the tests,
pinned scenarios and archived evidence hold such strings); past that it writes decimal numbers separated by '.'.
These tests hold both spellings to a round trip, the length the explorer picks examples by to the written string,
and a malformed string to one clear line; then a program of 100 actors must explore without crashing, and a
counterexample it finds must replay.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pytest

from lab.engine.core import Decision, ReplayPolicy, parse_schedule, read_schedule, schedule_length, schedule_string
from lab.errors import UsageError
from lab.evidence.report.timeline import build_strip
from lab.scenarios.base import Scenario, actor
from lab.scenarios.exploring import ExploreVerdict, explore_scenario, replay_scenario
from lab.scenarios.loader import LoadedScenario
from lab.scenarios.outcomes import acceptable
from lab.testing import ExplorationFailed, explore_code

CROWD = tuple(f"a{i}" for i in range(100))


def _actors(count: int) -> tuple[str, ...]:
    return tuple(f"t{i}" for i in range(count))


def _decisions(actors: Sequence[str], count: int, seed: int) -> list[Decision]:
    """Random decisions over ``actors``, some without a choice (those are not written)."""
    rng = random.Random(seed)
    found: list[Decision] = []
    for _ in range(count):
        runnable = tuple(sorted(rng.sample(actors, rng.randint(1, min(len(actors), 6))), key=actors.index))
        found.append(Decision(runnable, rng.choice(runnable)))
    return found


def _with_choice(decisions: Iterable[Decision]) -> list[tuple[str, tuple[str, ...]]]:
    return [(d.chosen, d.runnable) for d in decisions if len(d.runnable) > 1]


@pytest.mark.timeout(60)
class TestBothSpellings:
    @pytest.mark.parametrize("count", [2, 3, 10, 36, 37, 40, 100, 1000])
    def test_round_trip_and_length(self, count: int) -> None:
        """Written, measured without writing, and parsed back, for either spelling: the explorer picks examples
        by :func:`schedule_length`, so it must be the written length exactly, not an estimate."""
        actors = _actors(count)
        for seed in range(20):
            decisions = _decisions(actors, 30, seed)
            text = schedule_string(decisions, actors)
            assert schedule_length(decisions, actors) == len(text)
            assert parse_schedule(text, actors) == _with_choice(decisions)
            assert ("." in text) == (count > 36) or not text

    def test_the_one_character_spelling_is_unchanged(self) -> None:
        """Up to 36 actors nothing moves: the strings already written keep their exact spelling and meaning."""
        actors = _actors(36)
        decisions = [Decision(("t0", "t1"), "t0"), Decision(("t1",), "t1"), Decision(("t10", "t35"), "t35")]
        assert schedule_string(decisions, actors) == "0:01-z:az"
        assert schedule_string(decisions[:2], ("t0", "t1")) == "0:01"
        assert parse_schedule("0:01-1:01", ("a", "b")) == [("a", ("a", "b")), ("b", ("a", "b"))]
        assert schedule_length(decisions) == len("0:01-z:az")  # the older call, without actors, still exact here

    def test_many_actors_with_small_numbers_still_use_decimal(self) -> None:
        """The spelling follows the program, not the numbers in the string: 40 actors choosing among the first two
        still write '.', so the string cannot be mistaken for the one-character spelling, and it round-trips."""
        actors = _actors(40)
        decisions = [Decision(("t0", "t1"), "t1"), Decision(("t0", "t1"), "t0")]
        text = schedule_string(decisions, actors)
        assert text == "1:0.1-0:0.1"
        assert schedule_length(decisions, actors) == len(text)
        assert parse_schedule(text, actors) == _with_choice(decisions)

    def test_big_numbers(self) -> None:
        """Numbers of more than one digit are written whole, and their runnable sets in the actors' order."""
        actors = _actors(41)
        decisions = [Decision(("t3", "t12", "t40"), "t12"), Decision(("t12", "t40"), "t40")]
        text = schedule_string(decisions, actors)
        assert text == "12:3.12.40-40:12.40"
        assert schedule_length(decisions, actors) == len(text)
        assert parse_schedule(text, actors) == _with_choice(decisions)

    def test_no_choice_is_an_empty_string(self) -> None:
        """A run without a real choice has the empty schedule in either spelling, and it replays as such."""
        for actors in (_actors(2), _actors(100)):
            decisions = [Decision((actors[0],), actors[0])]
            assert schedule_string(decisions, actors) == "" and schedule_length(decisions, actors) == 0
            assert parse_schedule("", actors) == []
            assert ReplayPolicy("", actors).finished


@pytest.mark.timeout(60)
class TestMalformed:
    @pytest.mark.parametrize(
        "bad",
        [
            "0:01",  # the one-character spelling, with too many actors for it
            "0",
            "0:",
            ":0.1",
            "x:0.1",
            "00:0.1",  # one spelling per number: no leading zeros
            "0:00.1",
            "0:0..1",
            "0:0.1.",
            "0:0.40",  # there is no actor 40
            "40:0.1",
            "2:0.1",  # not runnable
            "1:0.1-0:0.\u0661",  # an Arabic-Indic digit: only ASCII digits are numbers
        ],
    )
    def test_decimal_spelling(self, bad: str) -> None:
        """A malformed string over 40 actors is a UsageError of one line that names the step."""
        with pytest.raises(UsageError, match=r"^schedule step \d") as raised:
            ReplayPolicy(bad, _actors(40))
        assert "\n" not in str(raised.value)
        assert read_schedule(bad, _actors(40)) is None

    @pytest.mark.parametrize("bad", ["0:0.1", "1:01-0:0.1", "10:0.1"])
    def test_decimal_spelling_with_few_actors(self, bad: str) -> None:
        """A '.' in a schedule of at most 36 actors is refused, not guessed at, and the line says why."""
        with pytest.raises(UsageError, match=r"^schedule step \d .*'\.'") as raised:
            parse_schedule(bad, ("a", "b"))
        assert "\n" not in str(raised.value)

    def test_no_limit_on_actors(self) -> None:
        """The "at most 36 actors" refusal is gone: a schedule over 1000 actors parses."""
        actors = _actors(1000)
        assert parse_schedule("999:0.998.999", actors) == [("t999", ("t0", "t998", "t999"))]


@pytest.mark.timeout(60)
class TestReports:
    def test_strip_reads_both_spellings(self) -> None:
        """The report's strip reads schedules with the engine's parser: both spellings, and a malformed string is
        drawn as unreadable (a report shows what it can) rather than raising."""
        few = build_strip("0:01-1:01", ("a", "b"))
        assert few.readable and [c.chosen for c in few.choices] == ["a", "b"] and few.choices[1].preempts == "a"
        many = build_strip("12:3.12.40-40:12.40", _actors(41))
        assert many.readable and [c.chosen for c in many.choices] == ["t12", "t40"]
        assert many.choices[0].runnable == ("t3", "t12", "t40")
        assert not build_strip("0:01", _actors(41)).readable
        assert not build_strip("0:0.1", ("a", "b")).readable
        assert not build_strip("9:01", ("a", "b")).readable


def _crowd_state(lab: Any) -> dict[str, Any]:
    return {"order": [], "lock": threading.Lock()}


def _append(me: str) -> Any:
    def step(state: dict[str, Any]) -> None:
        with state["lock"]:
            state["order"].append(me)

    return step


def _crowd_scenario() -> type[Scenario]:
    """A scenario of 100 actors, each appending its name under one lock, that claims the last one always comes last:
    false under some order, so the explorer finds a counterexample within a few schedules."""

    def setup(self: Any) -> None:
        self.state = _crowd_state(self.lab)

    def invariants(self: Any) -> list[tuple[str, bool]]:
        return [("a99 comes last", self.state["order"][-1] == "a99")]

    namespace: dict[str, Any] = {
        "__module__": __name__,
        "__doc__": "crowd: 100 actors append their names under one lock.",
        "source": "tests/test_many_actors.py",
        "outcomes": (acceptable("every actor returned and the run finished"),),
        "setup": setup,
        "invariants": invariants,
    }
    for name in CROWD:
        namespace[name] = actor(lambda self, name=name: _append(name)(self.state))
    return type("crowd", (Scenario,), namespace)


@pytest.mark.timeout(60)
class TestHundredActors:
    @pytest.mark.slow
    def test_exploring_does_not_crash(self) -> None:
        """100 actors explore within a small budget: INCOMPLETE (the budget, never a PASS it cannot claim)."""
        with pytest.raises(ExplorationFailed) as failed:
            explore_code(
                setup=_crowd_state,
                actors={name: _append(name) for name in CROWD},
                max_schedules=5,
                granularity="probe",
            )
        assert failed.value.found.verdict is ExploreVerdict.INCOMPLETE
        assert failed.value.found.schedules == 5

    @pytest.mark.slow
    def test_a_counterexample_replays(self) -> None:
        """A failing 100-actor program: its counterexample is written in the decimal spelling, replayed during the
        exploration (``replayed``), and replays again by itself to the same broken invariant."""
        cls = _crowd_scenario()
        loaded = LoadedScenario(cls.__name__, Path(__file__), cls, cls.__doc__ or "")
        found = explore_scenario(loaded, granularity="probe", max_schedules=10)
        assert found.verdict is ExploreVerdict.FAIL
        example = found.counterexample
        assert example is not None and example.replayed
        assert "." in example.schedule
        assert len(parse_schedule(example.schedule, cls.actors)) == example.schedule.count("-") + 1
        replayed = replay_scenario(loaded, example.schedule, granularity="probe")
        assert replayed.run_status == "FINISHED"
        assert [check.name for check in replayed.checks if not check.passed] == ["a99 comes last"]

    @pytest.mark.slow
    def test_explore_code_reports_the_failure(self) -> None:
        """The same failure through :func:`explore_code`: its message names the check and the decimal schedule,
        and holds the replayed table (written with :func:`lab.testing.replay_code`). Slow (some 5 s): the replay
        table first measures a 101-column grid before it falls back to one event per line."""
        with pytest.raises(ExplorationFailed) as failed:
            explore_code(
                setup=_crowd_state,
                actors={name: _append(name) for name in CROWD},
                check=lambda state: {"a99 comes last": state["order"][-1] == "a99"},
                max_schedules=5,
                granularity="probe",
            )
        found = failed.value.found
        assert found.verdict is ExploreVerdict.FAIL and found.counterexample is not None
        assert found.counterexample.replayed
        message = str(failed.value)
        assert "a99 comes last" in message and f"schedule: {found.counterexample.schedule}" in message
