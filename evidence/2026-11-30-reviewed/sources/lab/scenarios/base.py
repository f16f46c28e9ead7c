"""What a scenario file is made of: a :class:`Scenario` subclass, and the :class:`Lab` it builds its world with.

A scenario reads top to bottom like a lesson: the module docstring says what it teaches and where it comes from;
``setup`` builds the session and the latches; one method per actor says what each thread does; class attributes say
what must come out. The engine never sees chat sessions, only actors, primitives and probe points; the scenario
wires the two together through :class:`Lab`.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from types import FrameType
from typing import Any, ClassVar

from lab.engine.primitives import Barrier, Event, LabLock, Latch, ProbeHook, Probes
from lab.engine.scheduler import Scheduler
from lab.engine.trace import Json, TraceEvent
from lab.errors import ScenarioError
from lab.sessions.transactional import TransactionalChat
from lab.sessions.versioned import VersionedSession
from lab.transport.scripted import ScriptedTransport, Step


class Lab:
    """The factory a scenario builds its world with: primitives the scheduler sees, probes, holds, transports.

    Every object gets a name, and that name is what the trace and the deadlock report print. Names are unique
    within a scenario, so a trace line always points at one thing.
    """

    def __init__(self, scheduler: Scheduler) -> None:
        self._scheduler = scheduler
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

        The lab is handed to the scenario after it is built, so it learns which scenario it serves from the
        caller: the nearest frame whose ``self`` is a :class:`Scenario` (``setup`` or a helper it calls). Without
        one (a lab driven by hand) only the lab's own sessions, mutants and transport count.
        """
        from lab.scenarios.probe_points import check_point  # it reads runner.line_files, and runner imports base

        frame: FrameType | None = sys._getframe(2)
        cls: type = Scenario
        for _ in range(16):
            if frame is None:
                break
            owner = frame.f_locals.get("self")
            if isinstance(owner, Scenario):
                cls = type(owner)
                break
            frame = frame.f_back
        check_point(what, actor, point, cls)

    def _claim(self, name: str) -> str:
        if name in self._names:
            raise ScenarioError(f"two lab objects are named {name!r}; give each latch, lock and transport its own name")
        self._names.add(name)
        return name


class Grade(StrEnum):
    """How an outcome is judged, the way jcstress grades results."""

    ACCEPTABLE = "ACCEPTABLE"
    """Allowed, and expected."""
    INTERESTING = "INTERESTING"
    """Allowed, but worth a look: a lesson in itself."""
    FORBIDDEN = "FORBIDDEN"
    """Must never happen: reaching it fails the scenario."""


@dataclass(frozen=True)
class Outcome:
    """One row of an outcome table: what was observed (only the keys given are compared), its grade, and why.

    Keys are actor names (their outcome), keys of ``observe()`` (final state), or ``run`` (FINISHED, DEADLOCK,
    HUNG). A hang is HUNG, never STALE: STALE is a commit status.
    """

    grade: Grade
    reason: str
    expect: Mapping[str, Json] = field(default_factory=dict)

    def matches(self, observed: Mapping[str, Json]) -> bool:
        """True when every key of this row has the observed value."""
        return all(key in observed and observed[key] == value for key, value in self.expect.items())

    def describe(self) -> str:
        """The row's keys as ``slow=STALE, fast=COMMITTED, version=1``."""
        return ", ".join(f"{key}={value}" for key, value in self.expect.items()) or "(anything)"


def acceptable(reason: str, **expect: Json) -> Outcome:
    """An ACCEPTABLE row: ``acceptable("fast committed first", fast="COMMITTED", slow="STALE")``."""
    return Outcome(Grade.ACCEPTABLE, reason, expect)


def interesting(reason: str, **expect: Json) -> Outcome:
    """An INTERESTING row: allowed, and worth a look."""
    return Outcome(Grade.INTERESTING, reason, expect)


def forbidden(reason: str, **expect: Json) -> Outcome:
    """A FORBIDDEN row: reaching it fails the scenario."""
    return Outcome(Grade.FORBIDDEN, reason, expect)


def versioned_state(session: VersionedSession) -> dict[str, Json]:
    """What most scenarios observe of a versioned session: its version and the contents of its history."""
    version, history = session.snapshot()
    return {"version": version, "history": [message.content for message in history]}


def chat_state(chat: TransactionalChat) -> dict[str, Json]:
    """What most scenarios observe of a transactional chat: the contents of its committed history."""
    return {"history": [message.content for message in chat.snapshot()]}


class Scenario:
    """Base class of a lesson. Subclass it once per file under ``scenarios/``.

    Fill in:

    - ``actors``: the names of the methods that run as actors, in order (the first is actor 0);
    - ``setup(self)``: build the world with ``self.lab``; store what the actors share on ``self``;
    - one method per actor; what it returns is its outcome (a status such as ``CommitStatus.STALE``);
    - ``expect``: the outcome each actor must get;
    - ``observe(self)`` and ``expect_state``: the final state to compare (``{"version": 1}``);
    - ``invariants(self)``: ``(name, bool)`` pairs that must all hold at the end (a mutant lists in
      ``expect_broken`` the ones it is meant to break);
    - ``expect_run``: ``"FINISHED"`` (the default) or ``"DEADLOCK"`` when the deadlock is the lesson, with
      ``expect_blocked`` saying what each stuck actor waits for.

    A *race* scenario leaves the order to the explorer: instead of latches and ``expect`` it declares ``outcomes``,
    a table of :class:`Outcome` rows, and may list ``variants``, the session classes it can be run over (the first
    is the correct one; ``self.variant`` is the class chosen for this run). ``line_modules`` names extra modules
    whose every line is a scheduling point at line granularity.

    A *pinned* scenario (see :func:`lab.scenarios.pinning.pinned_scenario`) replays one recorded ``schedule`` of a
    race scenario at its ``granularity`` and ``variant_name``: a counterexample kept as a lesson.
    """

    source: ClassVar[str] = ""
    actors: ClassVar[Sequence[str]] = ()
    expect: ClassVar[Mapping[str, str]] = {}
    expect_state: ClassVar[Mapping[str, Json]] = {}
    expect_run: ClassVar[str] = "FINISHED"
    expect_blocked: ClassVar[Mapping[str, str]] = {}
    mutant: ClassVar[bool] = False
    outcomes: ClassVar[Sequence[Outcome]] = ()
    variants: ClassVar[Mapping[str, Any]] = {}
    line_modules: ClassVar[Sequence[str]] = ()
    expect_broken: ClassVar[Sequence[str]] = ()
    schedule: ClassVar[str] = ""
    granularity: ClassVar[str] = "probe"
    variant_name: ClassVar[str] = ""

    lab: Lab
    variant: Any = None

    @classmethod
    def outcome_table(cls) -> tuple[Outcome, ...]:
        """The declared table, or for a latch-ordered scenario the one outcome its latches must leave."""
        if cls.outcomes:
            return tuple(cls.outcomes)
        expect: dict[str, Json] = {"run": cls.expect_run, **cls.expect, **cls.expect_state}
        return (Outcome(Grade.ACCEPTABLE, "the one outcome this scenario's latches teach", expect),)

    def setup(self) -> None:
        """Build the world: sessions, transports, latches, holds."""

    def observe(self) -> Mapping[str, Json]:
        """The final state to record and compare with ``expect_state``."""
        return {}

    def invariants(self) -> Iterable[tuple[str, bool]]:
        """Named conditions that must hold once every actor is done."""
        return ()
