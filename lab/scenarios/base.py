"""What a scenario file is made of: a :class:`Scenario` subclass, its ``@actor`` methods, and the :class:`Lab`.

A scenario reads top to bottom like a lesson: the module docstring says what it teaches and where it comes from;
``setup`` builds the session and the latches; one ``@actor`` method per thread says what it does; ``outcomes`` says
what must come out (see :mod:`lab.scenarios.outcomes`). The engine never sees chat sessions, only actors,
primitives and probe points; the scenario wires the two together through :class:`Lab`.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

from lab.engine.core import Granularity, Json, Scheduler, TraceEvent
from lab.engine.sync import Barrier, Event, LabLock, Latch, ProbeHook, Probes
from lab.errors import ScenarioError
from lab.scenarios.outcomes import Outcome, only
from lab.transport.scripted import ScriptedTransport, Step

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])


class Lab:
    """The factory a scenario builds its world with: primitives the scheduler sees, probes, holds, transports.

    Every object gets a name, and that name is what the trace and the deadlock report print. Names are unique
    within a scenario, so a trace line always points at one thing.
    """

    def __init__(self, scheduler: Scheduler, scenario: type[Scenario] | None = None) -> None:
        self._scheduler = scheduler
        self._scenario = scenario
        self._probes = Probes(scheduler)
        self._names: set[str] = set()
        self._transports: list[ScriptedTransport] = []

    def latch(self, name: str, count: int = 1) -> Latch:
        """A count-down latch: ``wait()`` returns after ``count`` calls of ``count_down()``."""
        return Latch(self._scheduler, self._claim(name), count)

    def event(self, name: str) -> Event:
        """A one-shot event: ``set()`` then ``wait()`` returns at once."""
        return Event(self._scheduler, self._claim(name))

    def barrier(self, name: str, parties: int) -> Barrier:
        """A barrier for ``parties`` actors."""
        return Barrier(self._scheduler, self._claim(name), parties)

    def lock(self, name: str) -> LabLock:
        """A lock whose acquire and release are scheduling points; inject it into the session under test."""
        return LabLock(self._scheduler, self._claim(name))

    def probe(self, obj: str) -> ProbeHook:
        """A probe hook for the object named ``obj``; pass it as the session's ``probe=``."""
        return self._probes.hook(obj)

    def wire(self, factory: Callable[..., T], *args: Any, name: str | None = None, **kwargs: Any) -> T:
        """``factory(*args, **kwargs)`` built with this lab's lock ``NAME.lock`` and probe ``NAME``, in one call.

        ``self.lab.wire(VersionedSession, "s1", max_rounds=2)`` is
        ``VersionedSession("s1", max_rounds=2, lock=self.lab.lock("s1.lock"), probe=self.lab.probe("s1"))``: the
        session's every lock operation and probe point shows in the trace. ``name`` defaults to the first argument
        when it is a string (the session id); say it when it is not (``wire(TransactionalChat, model,
        name="chat")``) or when two objects share an id (``wire(self.variant, "s1", store=store, name=who)``).
        """
        if name is None:
            if not args or not isinstance(args[0], str):
                shown = getattr(factory, "__name__", type(factory).__name__)
                raise ScenarioError(f"wire({shown}, ...) needs name=...: the lab names the lock and probe after it")
            name = args[0]
        return factory(*args, lock=self.lock(f"{name}.lock"), probe=self.probe(name), **kwargs)

    def hold(self, actor: str, at: str, *, until: Latch) -> None:
        """Park ``actor`` at probe point ``at`` until ``until`` opens ("hold slow at commit:enter").

        ``at`` must be a point some code under test announces (see :mod:`lab.scenarios.probe_points`): a misspelt
        point is a :class:`ScenarioError` naming the known ones, never a hold that silently does nothing.
        """
        self._check_actor("hold", actor)
        if not isinstance(until, Latch):
            raise ScenarioError(f"hold({actor!r}, {at!r}) needs a lab latch or event to wait for")
        self._check_point("hold", actor, at)
        self._probes.hold(actor, at, until=until)

    def signal(self, actor: str, at: str, *, latch: Latch) -> None:
        """Count ``latch`` down when ``actor`` reaches probe point ``at`` ("open slow-in-flight once slow sent").

        ``at`` is checked as in :meth:`hold`.
        """
        self._check_actor("signal", actor)
        if not isinstance(latch, Latch):
            raise ScenarioError(f"signal({actor!r}, {at!r}) needs a lab latch or event to count down")
        self._check_point("signal", actor, at)
        self._probes.signal(actor, at, latch=latch)

    def transport(
        self, name: str, script: Iterable[Step] = (), *, by_question: Mapping[str, Step] | None = None
    ) -> ScriptedTransport:
        """A scripted transport whose send and return are probe points of the object ``name``."""
        transport = ScriptedTransport(script, by_question=by_question, probe=self.probe(self._claim(name)), name=name)
        self._transports.append(transport)
        return transport

    def note(self, text: str, **detail: Json) -> None:
        """Write a line of the actor's story into the trace ("begin -> ticket v0"); not a scheduling point."""
        self._scheduler.record("note", "", {"text": text, **detail})

    @property
    def trace(self) -> tuple[TraceEvent, ...]:
        """The trace so far: lets ``invariants()`` check *order* ("fast waited for the lock slow held")."""
        return self._scheduler.events()

    @property
    def transports(self) -> Sequence[ScriptedTransport]:
        """The scripted transports made so far, in creation order."""
        return tuple(self._transports)

    def _check_actor(self, what: str, actor: str) -> None:
        if actor not in self._scheduler.actor_names:
            known = ", ".join(self._scheduler.actor_names)
            raise ScenarioError(f"{what}() names actor {actor!r}, which is not one of: {known}")

    def _check_point(self, what: str, actor: str, point: str) -> None:
        """Refuse a probe point that no code under test announces: a misspelt hold would never fire.

        The runner builds the lab for one scenario class; a lab driven by hand (no class) checks against the lab's
        own sessions, mutants and transport.
        """
        from lab.scenarios.probe_points import check_point  # it reads runner.line_files, and runner imports base

        check_point(what, actor, point, self._scenario or Scenario)

    def _claim(self, name: str) -> str:
        if name in self._names:
            raise ScenarioError(f"two lab objects are named {name!r}; give each latch, lock and transport its own name")
        self._names.add(name)
        return name


_ACTOR = "__lab_actor__"
_RESERVED = frozenset({"setup", "observe", "invariants"})
_RETIRED = {
    "actors": "decorate each actor method with @actor (actor 0 is the first defined)",
    "expect": "write the one outcome in the table: outcomes = only(slow='STALE', version=1, ...)",
    "expect_state": "write the final state in the table: outcomes = only(slow='STALE', version=1, ...)",
    "expect_run": "write outcomes = only(run='DEADLOCK', ...)",
    "expect_blocked": "write outcomes = only(run='DEADLOCK', blocked_on={'slow': ...}, ...)",
    "schedule": "write pin = Pin(schedule=..., granularity=..., variant=...)",
    "granularity": "write pin = Pin(schedule=..., granularity=..., variant=...)",
    "variant_name": "write pin = Pin(schedule=..., granularity=..., variant=...)",
}
"""Attributes of the older scenario API, and what replaces each (a scenario that still sets one gets this line)."""


def actor(method: F) -> F:
    """Mark a method of a :class:`Scenario` as an actor: it runs on its own thread, and what it returns is its
    outcome. Actors are numbered in the order they are defined: actor 0 is the first ``@actor`` method."""
    if not inspect.isfunction(method):
        raise ScenarioError(f"@actor decorates a method (def name(self): ...), not {type(method).__name__}")
    setattr(method, _ACTOR, True)
    return method


def is_actor(value: object) -> bool:
    """True for a function marked with :func:`actor`."""
    return inspect.isfunction(value) and bool(getattr(value, _ACTOR, False))


@dataclass(frozen=True)
class Pin:
    """One recorded schedule of a race scenario, replayed as it was recorded: a counterexample kept as a lesson.

    ``granularity`` and ``variant`` are those the schedule was recorded at (see
    :func:`lab.scenarios.pinning.pinned_scenario`); ``race`` is the race scenario's name.
    """

    schedule: str
    granularity: Granularity = Granularity.PROBE
    variant: str = ""
    race: str = ""


class Scenario:
    """Base class of a lesson. Subclass it once per file under ``scenarios/``.

    Fill in:

    - ``source``: the article section the lesson comes from;
    - ``setup(self)``: build the world with ``self.lab``; store what the actors share on ``self``;
    - one ``@actor`` method per thread, in the order they are numbered; what it returns is its outcome (a status
      such as ``CommitStatus.STALE``);
    - ``outcomes``: the outcome table. A latch-ordered scenario writes its one outcome with ``only(...)``
      (actor outcomes, ``observe()`` keys, ``run="DEADLOCK"`` and ``blocked_on`` when the deadlock is the
      lesson); a *race* scenario leaves the order to the explorer and lists ``acceptable``, ``interesting`` and
      ``forbidden`` rows;
    - ``observe(self)``: the final state the table's keys are compared with;
    - ``invariants(self)``: ``(name, bool)`` pairs that must all hold at the end (a mutant lists in
      ``expect_broken`` the ones it is meant to break, and sets ``mutant = True``).

    A race scenario may list ``variants``, the session classes it can be run over (the first is the correct one;
    ``self.variant`` is the class chosen for this run). ``line_modules`` names extra modules whose every line is a
    scheduling point at line granularity. ``not_cross_checked`` says why real threads cannot check the model of a
    scenario whose outcome only the lab's run can give (a time on its virtual clock). A *pinned* scenario (see
    :func:`lab.scenarios.pinning.pinned_scenario`) replays its ``pin``, one recorded schedule of a race scenario.
    """

    source: ClassVar[str] = ""
    outcomes: ClassVar[Sequence[Outcome]] = only()
    mutant: ClassVar[bool] = False
    variants: ClassVar[Mapping[str, Any]] = {}
    line_modules: ClassVar[Sequence[str]] = ()
    expect_broken: ClassVar[Sequence[str]] = ()
    pin: ClassVar[Pin | None] = None
    not_cross_checked: ClassVar[str] = ""
    """Why real threads cannot check this scenario's model (``--cross-check``), in words; empty: they can."""
    actors: ClassVar[tuple[str, ...]] = ()
    """The ``@actor`` methods' names, in order (derived from the class: never set it)."""

    lab: Lab
    variant: Any = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        own = dict(cls.__dict__)
        for old, new in _RETIRED.items():
            if old in own:
                raise ScenarioError(f"{cls.__name__}.{old} is gone: {new}")
        for name, value in own.items():
            # what a static or class method or a property wraps, told by type (no learner's __getattr__ runs)
            wrapped = value.__func__ if isinstance(value, staticmethod | classmethod) else None
            wrapped = value.fget if isinstance(value, property) else wrapped
            if not inspect.isfunction(value) and is_actor(wrapped):
                raise ScenarioError(f"@actor {cls.__name__}.{name} is not a plain method (def {name}(self): ...)")
            if not is_actor(value):
                continue
            if name in _RESERVED or name.startswith("_"):
                raise ScenarioError(f"@actor {cls.__name__}.{name}: an actor needs a public name of its own")
            required = [p for p in inspect.signature(value).parameters.values() if p.default is p.empty]
            if len(required) != 1 or required[0].kind not in (
                required[0].POSITIONAL_ONLY,
                required[0].POSITIONAL_OR_KEYWORD,
            ):
                raise ScenarioError(f"@actor {cls.__name__}.{name} must take self and nothing else")
        found: list[str] = []  # the bases' actors first (a mixin's too), then this class's, each in definition order
        for klass in reversed(cls.__mro__):
            found += [name for name, value in vars(klass).items() if is_actor(value) and name not in found]
        cls.actors = tuple(found)

    def setup(self) -> None:
        """Build the world: sessions, transports, latches, holds."""

    def observe(self) -> Mapping[str, Json]:
        """The final state the outcome table's keys are compared with."""
        return {}

    def invariants(self) -> Iterable[tuple[str, bool]]:
        """Named conditions that must hold once every actor is done."""
        return ()
