"""lab.engine.execute: one run of some actors under a policy, the engine's one entry, and its settings contract."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

import pytest

import lab.engine
from lab.engine.core import (
    Actors,
    ReplayPolicy,
    RunResult,
    RunSettings,
    RunStatus,
    Scheduler,
    execute,
    schedule_string,
    trace_digest,
)
from lab.errors import UsageError
from lab.testing import ExplorationFailed, explore_code

RACE = "0:01-0:01-1:01-1:01-0:01"
"""a reads, b reads the same value, a writes, then b writes what it read: a lost update."""


def _racers(scheduler: Scheduler, shared: dict[str, int]) -> dict[str, Callable[[], object]]:
    """Two actors that each add one to ``shared["n"]`` in two steps (read, then write), a point between."""

    def add_one() -> int:
        scheduler.point()
        seen = shared["n"]
        scheduler.record("read", "n", {"seen": seen})
        scheduler.point()
        shared["n"] = seen + 1
        scheduler.record("write", "n", {"value": seen + 1})
        return seen + 1

    return {"a": add_one, "b": add_one}


def _by_hand(schedule: str) -> tuple[RunResult, int]:
    """The same run assembled by hand, as callers did before execute."""
    shared = {"n": 0}
    scheduler = Scheduler(policy=ReplayPolicy(schedule, ("a", "b")))
    for name, body in _racers(scheduler, shared).items():
        scheduler.add_actor(name, body)
    return scheduler.run(), shared["n"]


def _ops(run: RunResult) -> list[str]:
    return [f"{event.actor} {event.op} {event.obj}".strip() for event in run.trace]


@pytest.mark.timeout(30)
class TestOneRun:
    def test_a_race_under_a_replay_policy_is_the_run_assembled_by_hand(self) -> None:
        """The same trace, decisions and outcomes as the scheduler driven by hand, and the lost update it replays."""
        shared = {"n": 0}
        run = execute(lambda s: _racers(s, shared), ReplayPolicy(RACE, ("a", "b")))
        by_hand, n_by_hand = _by_hand(RACE)
        assert (run.status, dict(run.outcomes), shared["n"]) == (RunStatus.FINISHED, {"a": "1", "b": "1"}, 1)
        assert trace_digest(run.trace) == trace_digest(by_hand.trace) and n_by_hand == 1
        assert run.decisions == by_hand.decisions
        assert schedule_string(run.decisions, ("a", "b")) == RACE
        assert _ops(run) == [
            "a start",
            "a read n",
            "b start",
            "b read n",
            "a write n",
            "a end",
            "b write n",
            "b end",
        ]

    def test_actors_given_as_a_mapping_run_under_the_default_policy(self) -> None:
        """Actors that need no scheduler are a plain mapping; the default policy runs each in turn."""
        run = execute({"first": lambda: "one", "second": lambda: None})
        assert dict(run.outcomes) == {"first": "one", "second": "DONE"}
        assert _ops(run) == ["first start", "first end", "second start", "second end"]

    def test_the_facade_exports_it(self) -> None:
        assert lab.engine.execute is execute and lab.engine.RunSettings is RunSettings

    def test_installs_wrap_setup_and_run_around_run_only_the_actors(self) -> None:
        """Installs are entered in order before the actors are made and left in reverse after the run; setup runs
        once the actors are known (a primitive may name them); around_run holds only while the actors run."""
        events: list[str] = []

        def install(name: str) -> Callable[[Scheduler], contextlib.AbstractContextManager[object]]:
            @contextlib.contextmanager
            def entered(scheduler: Scheduler) -> Iterator[None]:
                events.append(f"enter {name}")
                yield
                events.append(f"leave {name}")

            return entered

        def make(scheduler: Scheduler) -> Actors:
            events.append("make actors")
            return {"solo": lambda: events.append("solo runs")}

        def setup() -> None:
            events.append("setup")

        settings = RunSettings(installs=(install("stand-ins"), install("modules")), around_run=(install("record"),))
        run = execute(make, settings=settings, setup=setup)
        assert run.status is RunStatus.FINISHED
        assert events == [
            "enter stand-ins",
            "enter modules",
            "make actors",
            "setup",
            "enter record",
            "solo runs",
            "leave record",
            "leave modules",
            "leave stand-ins",
        ]

    def test_a_setup_that_raises_runs_nothing_and_takes_the_installs_down(self) -> None:
        events: list[str] = []

        @contextlib.contextmanager
        def install(scheduler: Scheduler) -> Iterator[None]:
            events.append("enter")
            try:
                yield
            finally:
                events.append("leave")

        def setup() -> None:
            raise KeyError("no table")

        with pytest.raises(KeyError, match="no table"):
            execute({"a": lambda: events.append("ran")}, settings=RunSettings(installs=(install,)), setup=setup)
        assert events == ["enter", "leave"]


class TestBadArguments:
    @pytest.mark.parametrize(
        ("call", "message"),
        [
            (lambda: execute(["a"]), "execute(actors=...) takes a mapping"),  # type: ignore[arg-type]
            (lambda: execute({"a": 1}), "actor 'a' must be a callable"),  # type: ignore[dict-item]
            (lambda: execute({"": print}), "an actor's name is a non-empty string"),
            (lambda: execute({"a": print}, policy="0:01"), "execute(policy=...) takes a policy"),  # type: ignore[arg-type]
            (lambda: execute({"a": print}, settings={}), "takes a RunSettings, not dict"),  # type: ignore[arg-type]
            (lambda: execute({"a": print}, setup=3), "execute(setup=...) takes a function"),  # type: ignore[arg-type]
            (lambda: execute(lambda s: [print]), "must be a mapping, not list"),  # type: ignore[arg-type, return-value]
            (lambda: RunSettings(watchdog_seconds=0), "watchdog_seconds=...) must be more than 0"),
            (lambda: RunSettings(watchdog_seconds="5"), "takes a finite number of seconds"),  # type: ignore[arg-type]
            (lambda: RunSettings(leak_grace_seconds=float("nan")), "takes a finite number of seconds"),
            (lambda: RunSettings(installs=[print]), "installs=...) takes a tuple of functions"),  # type: ignore[arg-type]
            (lambda: RunSettings(outcome_text="x"), "outcome_text=...) takes a function"),  # type: ignore[arg-type]
        ],
    )
    def test_each_is_one_clear_line(self, call: Callable[[], object], message: str) -> None:
        with pytest.raises(UsageError) as raised:
            call()
        assert message in str(raised.value) and "\n" not in str(raised.value)

    def test_an_install_that_returns_no_context_manager_is_named(self) -> None:
        def not_a_manager(scheduler: Scheduler) -> contextlib.AbstractContextManager[object]:
            return 42  # type: ignore[return-value]

        with pytest.raises(UsageError, match="not_a_manager must return a context manager, not int"):
            execute({"a": print}, settings=RunSettings(installs=(not_a_manager,)))


class _Stop(BaseException):
    """A user's own way to unwind past every ``except Exception``."""


def _stops(state: object) -> None:
    raise _Stop("enough")


@pytest.mark.timeout(60)
def test_a_base_exception_in_your_own_code_is_a_failure_named_at_once() -> None:
    """Through lab.testing: an actor raising a BaseException subclass fails the exploration naming it, rather than
    every schedule waiting for the watchdog and ending HUNG (issue 23, point 5)."""
    with pytest.raises(ExplorationFailed) as failed:
        explore_code(setup=lambda lab: None, actors={"stops": _stops, "fine": lambda state: None}, granularity="probe")
    assert "stops raised tests.test_execute._Stop: enough" in str(failed.value)
    assert "hung" not in str(failed.value).lower()
