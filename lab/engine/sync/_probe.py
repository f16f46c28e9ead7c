"""Probe points made scheduling points: where a session announces ``commit:enter``, the scheduler may switch actors,
and a scenario may hold an actor there until a latch opens (or count a latch down each time one gets there)."""

from __future__ import annotations

import threading

from lab.engine.core._footprint import EVERYTHING, NOTHING
from lab.engine.core._scheduler import Scheduler
from lab.engine.sync._latch import Latch, _LatchOpen
from lab.errors import ScenarioError


class Probes:
    """Turns session probe points into scheduling points, and holds actors at them until a latch opens.

    ``probes.hold("slow", "commit:enter", until=fast_committed)`` parks ``slow`` when it reaches
    ``commit:enter`` of any object, until ``fast_committed`` is open. The engine knows no session, so it takes any
    point name; :meth:`lab.scenarios.base.Lab.hold` checks the name against the points the code under test
    announces before it gets here. A second hold (or signal) of one actor at one point is a scenario mistake.
    """

    def __init__(self, scheduler: Scheduler) -> None:
        self._scheduler = scheduler
        self._holds: dict[tuple[str, str], Latch] = {}
        self._signals: dict[tuple[str, str], Latch] = {}

    def hold(self, actor: str, point: str, *, until: Latch) -> None:
        """Park ``actor`` at probe ``point`` until ``until`` is open."""
        if (actor, point) in self._holds:
            raise ScenarioError(f"{actor!r} is already held at {point!r}; one hold per actor and point")
        self._holds[(actor, point)] = until

    def signal(self, actor: str, point: str, *, latch: Latch) -> None:
        """Count ``latch`` down each time ``actor`` reaches probe ``point`` ("slow is now in flight")."""
        if (actor, point) in self._signals:
            raise ScenarioError(f"{actor!r} already signals at {point!r}; one signal per actor and point")
        self._signals[(actor, point)] = latch

    def hook(self, obj: str) -> ProbeHook:
        """A probe hook for the object named ``obj``, to pass to a session's ``probe=`` parameter."""
        return ProbeHook(self, obj)

    def _reach(self, obj: str, point: str) -> None:
        me = self._scheduler.current()
        if me is None:
            free = getattr(FREE_ACTOR, "name", None)
            if free is not None:
                self._reach_freely(free, point)
            return
        # What the step after a probe touches is unknown until it runs: announce "anything", execute nothing; the
        # accesses recorded while the step runs say what it really did.
        self._scheduler.point(EVERYTHING, executes=NOTHING)
        self._scheduler.record("probe", obj, {"point": point})
        signal = self._signals.get((me, point))
        if signal is not None:
            signal.count_down()
        latch = self._holds.get((me, point))
        if latch is not None and latch.count == 0:
            # Going on past a hold reads its latch: this step depends on the count-down that opened it (the
            # explorer must not reorder the two, and the atomicity check must see the hand-off).
            self._scheduler.touch(latch.reads())
        elif latch is not None:
            self._scheduler.record("hold", obj, {"point": point, "until": latch.name})
            self._scheduler.block(_HeldAt(point, latch), executes=latch.reads())
            self._scheduler.record("unhold", obj, {"point": point})

    def _reach_freely(self, me: str, point: str) -> None:
        """The same signals and holds for an actor on a free thread (a cross-check's real run): the latch's own
        ``threading`` behaviour does the waiting, and no scheduler is involved."""
        signal = self._signals.get((me, point))
        if signal is not None:
            signal.count_down()
        latch = self._holds.get((me, point))
        if latch is not None:
            latch.wait()


FREE_ACTOR = threading.local()
"""``FREE_ACTOR.name``: the actor a free thread runs as, outside any scheduled run (a cross-check of the model on
real threads), so that probe holds and signals still apply to it; unset everywhere else."""


class ProbeHook:
    """A callable probe for one object; sessions call it with a point name."""

    def __init__(self, probes: Probes, obj: str) -> None:
        self._probes, self.obj = probes, obj

    def __call__(self, point: str) -> None:
        self._probes._reach(self.obj, point)

    def __repr__(self) -> str:
        return f"<ProbeHook {self.obj}>"


class _HeldAt:
    def __init__(self, point: str, latch: Latch) -> None:
        self._point, self._latch = point, latch

    def ready(self) -> bool:
        return self._latch.count == 0

    def describe(self) -> str:
        return f"held at {self._point!r} until {_LatchOpen(self._latch).describe()}"
