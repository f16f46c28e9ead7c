"""One run of some actors under a policy, from the caller's settings to its :class:`RunResult`: the engine's entry.

Every caller used to assemble a run by hand (make a scheduler, build the world its actors share, install the
standard-library stand-ins and the recording around the right part, add the actors, run, take everything down in
the right order), each its own way. :func:`execute` is that sequence once, and :class:`RunSettings` is everything a
caller may say about it, in one frozen object, as Hypothesis passes one data object to its engine.

The core names no other package of the lab: what a run installs is the caller's, passed in as :data:`Install`
callables. Each is given the run's scheduler and returns a context manager (it may also set the scheduler's actor
hooks or end watcher, as line tracing does); ``installs`` hold from before the actors are made (a scenario's
setup runs inside them) to the end of the run, ``around_run`` only while the actors run. They are entered in order
and left in reverse, whatever happens.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass

from lab.engine.core._actor import OutcomeText, default_outcome
from lab.engine.core._policies import Policy
from lab.engine.core._run import RunResult
from lab.engine.core._scheduler import Scheduler
from lab.engine.core._watchdog import DEFAULT_WATCHDOG_SECONDS, LEAK_GRACE_SECONDS
from lab.errors import UsageError

Actors = Mapping[str, Callable[[], object]]
"""The actors of a run, by name, in the order they are numbered (actor 0 first): each a callable of no argument
whose return value becomes its outcome."""

MakeActors = Callable[[Scheduler], Actors]
"""Actors that need the run's scheduler (their primitives are made with it): called once it exists, inside the
run's ``installs``; whatever it raises goes to the caller of :func:`execute` unchanged, with nothing run."""

Install = Callable[[Scheduler], AbstractContextManager[object]]
"""Something a run installs: given the run's scheduler, a context manager to enter (and leave) around the run."""


@dataclass(frozen=True, slots=True)
class RunSettings:
    """How one run is made, besides its actors and its policy. The defaults are a bare run: nothing installed."""

    watchdog_seconds: float = DEFAULT_WATCHDOG_SECONDS
    """How long the run may make no progress before it is HUNG (an actor blocked outside the lab)."""
    leak_grace_seconds: float = LEAK_GRACE_SECONDS
    """How long an actor being unwound may take to end before it is reported as leaked."""
    outcome_text: OutcomeText = default_outcome
    """How an actor's return value becomes its outcome."""
    installs: tuple[Install, ...] = ()
    """Entered once the scheduler exists, before the actors are made; left after the run: what must hold from a
    scenario's setup to the end of its run (the standard-library stand-ins, the rewritten modules)."""
    around_run: tuple[Install, ...] = ()
    """Entered once the actors are made, just before they start; left when the run is over (the recording of
    accesses, line events)."""

    def __post_init__(self) -> None:
        for name in ("watchdog_seconds", "leak_grace_seconds"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
                raise UsageError(f"RunSettings({name}=...) takes a finite number of seconds, not {value!r}")
        if self.watchdog_seconds <= 0:
            raise UsageError(f"RunSettings(watchdog_seconds=...) must be more than 0, not {self.watchdog_seconds!r}")
        if self.leak_grace_seconds < 0:
            raise UsageError(f"RunSettings(leak_grace_seconds=...) must be 0 or more, not {self.leak_grace_seconds!r}")
        if not callable(self.outcome_text):
            raise UsageError(f"RunSettings(outcome_text=...) takes a function, not {self.outcome_text!r}")
        for name in ("installs", "around_run"):
            value = getattr(self, name)
            if not isinstance(value, tuple) or not all(callable(item) for item in value):
                raise UsageError(
                    f"RunSettings({name}=...) takes a tuple of functions of the scheduler that each return a "
                    f"context manager, not {value!r}"
                )


BARE = RunSettings()
"""The settings of a bare run: the default watchdog, nothing installed."""


def execute(
    actors: Actors | MakeActors,
    policy: Policy | None = None,
    settings: RunSettings = BARE,
    *,
    setup: Callable[[], None] | None = None,
) -> RunResult:
    """Run ``actors`` once under ``policy`` (by default the current actor keeps running until it blocks) and return
    what happened: how it ended, its trace, its decisions, what each step touched.

    ``actors`` is a mapping of names to callables, or a function of the run's :class:`Scheduler` that returns one
    (for actors whose primitives need it). ``setup`` runs once the actors are known to the scheduler (a primitive
    made then may name them), inside ``settings.installs``, before ``settings.around_run``; what it raises goes to
    the caller unchanged, and nothing runs. A bad argument is a :class:`~lab.errors.UsageError` naming it, raised
    before any actor runs (and after what was installed is taken down again).
    """
    _check_policy(policy)
    if setup is not None and not callable(setup):
        raise UsageError(f"execute(setup=...) takes a function of no argument, not {type(setup).__name__}")
    if not isinstance(settings, RunSettings):
        raise UsageError(f"execute(settings=...) takes a RunSettings, not {type(settings).__name__}")
    if not isinstance(actors, Mapping) and not callable(actors):
        raise UsageError(
            "execute(actors=...) takes a mapping of names to callables, or a function of the scheduler that returns "
            f"one, not {type(actors).__name__}"
        )
    scheduler = Scheduler(
        policy=policy,
        watchdog_seconds=settings.watchdog_seconds,
        outcome_text=settings.outcome_text,
        leak_grace_seconds=settings.leak_grace_seconds,
    )
    with contextlib.ExitStack() as installed:
        for install in settings.installs:
            installed.enter_context(_entered(install, scheduler))
        made = actors(scheduler) if not isinstance(actors, Mapping) else actors
        for name, body in _checked(made):
            scheduler.add_actor(name, body)
        if setup is not None:
            setup()
        with contextlib.ExitStack() as running:
            for install in settings.around_run:
                running.enter_context(_entered(install, scheduler))
            return scheduler.run()


def _check_policy(policy: object) -> None:
    if policy is not None and not callable(getattr(policy, "choose", None)):
        raise UsageError(
            f"execute(policy=...) takes a policy (an object with choose(point) -> name), not {type(policy).__name__}"
        )


def _checked(actors: object) -> list[tuple[str, Callable[[], object]]]:
    """The actors as (name, body) pairs, once each is known to be one."""
    if not isinstance(actors, Mapping):
        raise UsageError(f"execute: the actors made for the run must be a mapping, not {type(actors).__name__}")
    pairs: list[tuple[str, Callable[[], object]]] = []
    for name, body in actors.items():
        if not isinstance(name, str) or not name:
            raise UsageError(f"execute: an actor's name is a non-empty string, not {name!r}")
        if not callable(body):
            raise UsageError(f"execute: actor {name!r} must be a callable of no argument, not {type(body).__name__}")
        pairs.append((name, body))
    return pairs


def _entered(install: Install, scheduler: Scheduler) -> AbstractContextManager[object]:
    manager = install(scheduler)
    if not (hasattr(manager, "__enter__") and hasattr(manager, "__exit__")):
        raise UsageError(f"execute: {_named(install)} must return a context manager, not {type(manager).__name__}")
    return manager


def _named(install: object) -> str:
    return str(getattr(install, "__qualname__", None) or type(install).__name__)
