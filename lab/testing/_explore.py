"""``explore_code``: a test's actors, setup and checks made into a scenario and explored, with nothing declared
accepting nothing but every actor returning (see :mod:`lab.testing`)."""

from __future__ import annotations

import difflib
import inspect
import types
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from lab.engine.record import instrumented_function
from lab.engine.search import DEFAULT_MAX_SCHEDULES
from lab.errors import UsageError
from lab.scenarios import (
    ExploreVerdict,
    Lab,
    LoadedScenario,
    Outcome,
    Scenario,
    ScenarioExploration,
    acceptable,
    actor,
    explore_scenario,
)
from lab.scenarios import (
    cross_check as run_cross_check,
)
from lab.testing._failures import ExplorationFailed, failure_text, replay_saved

Check = Callable[[Any], Mapping[str, bool] | Iterable[tuple[str, bool]]]
Raises = Mapping[str, type[BaseException] | tuple[type[BaseException], ...]]

DEFAULT_SECONDS = 60.0
"""The time budget of :func:`explore_code` unless a test gives its own (``None``: only the schedule budget)."""

DEFAULT_OUTCOMES = (acceptable("every actor returned and the run finished"),)
"""The table of an exploration that names none: a row that names no key admits only a run that FINISHED with
every actor returned, so an actor that raises, a deadlock, a hang is a failure (see
:meth:`lab.scenarios.outcomes.Outcome.admits`) and ``check`` decides the rest."""


def explore_code(
    *,
    setup: Callable[[Lab], Any],
    actors: Mapping[str, Callable[[Any], object]],
    check: Check | None = None,
    under_test: Sequence[types.ModuleType | str] = (),
    granularity: str = "line",
    max_schedules: int = DEFAULT_MAX_SCHEDULES,
    name: str = "",
    outcomes: Sequence[Outcome] = DEFAULT_OUTCOMES,
    raises: Raises | None = None,
    mode: str = "find",
    strategy: str = "portfolio",
    seed: int = 0,
    seconds: float | None = DEFAULT_SECONDS,
    replay_first: str = "",
    cross_check: int = 0,
) -> ScenarioExploration:
    """Explore ``actors`` over the state ``setup`` builds; raise :class:`ExplorationFailed` (an AssertionError),
    readably, unless every schedule ended well.

    ``check(state)`` returns named conditions (a mapping or ``(name, held)`` pairs) that must hold once every actor
    is done. Failing too, each named in the message: an actor that raises, a deadlock, a hang, an outcome no row of
    ``outcomes`` admits. Say what you expect instead, explicitly: ``raises={"bob": KeyError}`` lets bob raise a
    KeyError (its outcome is then ``"raised KeyError"``, which ``outcomes`` rows may name), and ``outcomes=[...]``
    rows (:func:`acceptable`, :func:`interesting`, :func:`forbidden`, keyed by actor, ``run`` or nothing) replace
    the default table, e.g. ``acceptable("may deadlock", run="DEADLOCK")``. ``under_test`` lists the modules whose
    code the actors run (the module calling this function is always included).

    The search (:mod:`lab.engine.search`) finds by default: it stops at the first failing execution, shrinks it
    (fewest preemptions) and confirms it by replay, with the ``portfolio`` of strategies (DPOR interleaved with
    PCT, random walks and delay bounding; ``seed`` fixes their draws). ``mode="prove"`` runs the whole budget and
    counts every outcome; ``strategy="dpor"`` (or ``pct``, ``random``, ``ipb``, ``idb``) runs one strategy. Only a
    search that covered every schedule passes: a sampler that found nothing is INCOMPLETE and says what it covered.
    ``max_schedules`` and ``seconds`` are the budgets: by default a minute, so that a test of a program whose
    executions are slow (a hundred threads) ends, INCOMPLETE and saying so, rather than after an hour;
    ``seconds=None`` lifts it.

    ``cross_check=N`` then runs the actors N times on fresh real threads (:mod:`lab.scenarios.cross_check`): an
    outcome they reach that no explored schedule reached is a MODEL GAP (the lab's model of this program is wrong),
    and the exploration fails with it.

    ``replay_first`` is a schedule that failed before (the pytest plugin keeps each failing test's schedule, as
    Hypothesis keeps its examples): it is replayed before any search, and if it still fails, that is the failure,
    at once. A schedule that no longer replays (the code changed) or now passes is passed over, and the search runs.
    """
    __tracebackhide__ = True
    found, loaded = _explore(
        setup=setup,
        actors=actors,
        check=check,
        under_test=under_test,
        granularity=granularity,
        max_schedules=max_schedules,
        name=name,
        outcomes=tuple(outcomes),
        raises=dict(raises or {}),
        caller=2,
        search=(mode, strategy, seed, seconds),
        replay_first=replay_first,
    )
    if found.verdict is not ExploreVerdict.PASS:
        raise ExplorationFailed(failure_text(found, loaded), found)
    if cross_check:  # real threads check the model: an outcome they reach that no schedule did is a MODEL GAP
        gaps = run_cross_check(loaded, cross_check).describe_gaps(found)
        if gaps:
            head = f"{found.name}: not PASS: real threads reached what the exploration never did ({found.granularity})"
            raise ExplorationFailed("\n".join([head, *gaps]), found)
    return found


def _explore(
    *,
    setup: Callable[[Lab], Any],
    actors: Mapping[str, Callable[[Any], object]],
    check: Check | None,
    under_test: Sequence[types.ModuleType | str],
    granularity: str,
    max_schedules: int,
    name: str,
    outcomes: tuple[Outcome, ...],
    raises: dict[str, type[BaseException] | tuple[type[BaseException], ...]],
    caller: int,
    search: tuple[str, str, int, float | None] = ("find", "portfolio", 0, None),
    replay_first: str = "",
) -> tuple[ScenarioExploration, LoadedScenario]:
    __tracebackhide__ = True
    if not actors:
        raise UsageError("explore_code needs at least one actor")
    _check_table(actors, outcomes, raises)
    frame = next(
        (
            f
            for f in inspect.stack()[caller:]
            if not str(f.frame.f_globals.get("__name__")).startswith(("lab.testing", "lab.pytest_plugin"))
        ),
        inspect.stack()[caller],
    )  # the test that asked, not the fixture in between
    home = str(frame.frame.f_globals.get("__name__", "__main__"))
    names = [m.__name__ if isinstance(m, types.ModuleType) else str(m) for m in under_test]
    cls = _scenario_class(setup, actors, check, home, names, name or f"explore_{frame.function}", outcomes, raises)
    loaded = LoadedScenario(cls.__name__, Path(frame.filename), cls, cls.__doc__ or "")
    if replay_first:
        replay_saved(loaded, replay_first, granularity)
    mode, strategy, seed, seconds = search
    found = explore_scenario(
        loaded,
        granularity=granularity,
        max_schedules=max_schedules,
        mode=mode,
        strategy=strategy,
        seed=seed,
        seconds=seconds,
    )
    return found, loaded


def _scenario_class(
    setup: Callable[[Lab], Any],
    actors: Mapping[str, Callable[[Any], object]],
    check: Check | None,
    home: str,
    under_test: list[str],
    name: str,
    outcomes: tuple[Outcome, ...],
    raises: dict[str, type[BaseException] | tuple[type[BaseException], ...]],
) -> type[Scenario]:
    def _setup(self: Any) -> None:
        self.state = setup(self.lab)

    def _invariants(self: Any) -> Iterable[tuple[str, bool]]:
        if check is None:
            return ()
        held = check(self.state)
        return list(held.items()) if isinstance(held, Mapping) else list(held)

    namespace: dict[str, Any] = {
        "__module__": home,
        "__doc__": f"{name}: actors {', '.join(actors)} explored from a test.",
        "source": "a test, through lab.testing.explore_code",
        "outcomes": outcomes,
        "line_modules": tuple(under_test),
        "setup": _setup,
        "invariants": _invariants,
    }
    for who, body in actors.items():  # actor 0 is the first named
        namespace[who] = actor(_actor(body, raises.get(who, ())))
    return type(name, (Scenario,), namespace)


def _actor(
    body: Callable[[Any], object], expected: type[BaseException] | tuple[type[BaseException], ...]
) -> Callable[[Any], object]:
    def act(self: Any) -> object:
        # A lambda written inside the test was made before its module's code was rewritten: run its rewritten
        # twin, so that what it touches is recorded too.
        try:
            return instrumented_function(body)(self.state)
        except expected as error:  # declared with raises=: an outcome, named by the exception's class
            return f"raised {type(error).__name__}"

    return act


def _check_table(
    actors: Mapping[str, object],
    outcomes: tuple[Outcome, ...],
    raises: Mapping[str, type[BaseException] | tuple[type[BaseException], ...]],
) -> None:
    """Refuse a table or a ``raises=`` that names no actor of this exploration: a misspelt name would accept
    nothing, and the user would believe they had declared something."""
    if not outcomes:
        raise UsageError("explore_code(outcomes=...) needs at least one row (or leave it out for the default)")
    for row in outcomes:
        if not isinstance(row, Outcome):
            raise UsageError(f"explore_code(outcomes=...) takes acceptable/interesting/forbidden rows, not {row!r}")
        for key in row.expect:  # no observe() here: a key is an actor or run, and anything else is a mistake
            if key != "run" and key not in actors:
                raise UsageError(f"explore_code(outcomes=...) names {key!r}, {_not_an_actor(key, actors)}")
    for who, kinds in raises.items():
        if who not in actors:
            raise UsageError(f"explore_code(raises=...) names {who!r}, {_not_an_actor(who, actors)}")
        for kind in kinds if isinstance(kinds, tuple) else (kinds,):
            if not (isinstance(kind, type) and issubclass(kind, BaseException)):
                raise UsageError(f"explore_code(raises={{{who!r}: ...}}) takes exception classes, not {kind!r}")


def _not_an_actor(name: str, actors: Mapping[str, object]) -> str:
    """``which is not one of the actors (a, b); did you mean 'b'?``"""
    near = difflib.get_close_matches(name, list(actors), n=1, cutoff=0.6)
    return f"which is not one of the actors ({', '.join(actors)})" + (f"; did you mean {near[0]!r}?" if near else "")
