"""The one model of a barrier, and its two faces: the lab's :class:`Barrier` and the stand-in
:class:`StandardBarrier` for ``threading.Barrier``.

Why one model: the two were written twice, the lab's on counters of its own and the stand-in on the standard
library's internals. :class:`BarrierModel` drives a real ``threading.Barrier`` (its count, its state: filling,
draining, resetting or broken, its action and default timeout) for both faces, so threads that are not actors wait
on it as on any barrier, and inside actors:

- ``wait()`` writes the barrier at its scheduling point and arrives; the last party runs the action (outside the
  barrier's real lock: it may take scheduling points of its own) and lets everyone through; the others are parked
  until then (or, with a timeout, until it fires on the virtual clock, which breaks the barrier);
- ``reset()`` and ``abort()`` write the barrier.

The lab's face has no action and no timeout.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, ClassVar

from lab.engine.core._footprint import Footprint, writes
from lab.engine.core._scheduler import Scheduler
from lab.engine.sync._latch import _Primitive
from lab.engine.sync._standard_base import (
    _REAL_BARRIER,
    _acting,
    _await,
    _caller_keeps_real,
    _new_name,
    _raw,
    _Run,
    _timed,
)
from lab.errors import UsageError


class BarrierModel:
    """What the scheduler and the explorer see of one barrier, on the real barrier ``barrier``."""

    def __init__(self, name: str, barrier: threading.Barrier) -> None:
        self.name = name
        self.footprint: Footprint = writes("barrier", name)
        self.raw: Any = _raw(barrier)  # its _count, _state, _cond, _action and _timeout are not in the stubs

    def wait(self, scheduler: Scheduler, me: str, run: _Run | None, timeout: float | None) -> int:
        """Arrive and wait for the other parties, as ``threading.Barrier.wait``; returns the arrival index."""
        raw = self.raw
        if timeout is None:
            timeout = raw._timeout
        scheduler.point(_timed(self.footprint, timeout))
        if raw._state in (-1, 1):  # draining or resetting: wait until done, as threading's _enter does
            drained = lambda: f"barrier {self.name!r} to drain"  # noqa: E731
            _await(scheduler, run, me, lambda: raw._state not in (-1, 1), drained, None)
        if raw._state < 0:
            scheduler.record("barrier.broken", self.name)
            raise threading.BrokenBarrierError
        index: int = raw._count
        raw._count += 1
        scheduler.record("barrier.wait", self.name, {"arrived": index + 1, "parties": raw._parties})
        try:
            if index + 1 == raw._parties:
                self._trip()
            else:
                describe = lambda: f"barrier {self.name!r} has {raw._count} of {raw._parties} parties"  # noqa: E731
                if not _await(scheduler, run, me, lambda: raw._state != 0, describe, timeout):
                    with raw._cond:
                        raw._break()
                    scheduler.record("barrier.timeout", self.name, {"clock": run.clock if run is not None else 0.0})
                    raise threading.BrokenBarrierError
                if raw._state < 0:
                    scheduler.record("barrier.broken", self.name)
                    raise threading.BrokenBarrierError
                scheduler.record("barrier.pass", self.name)
            return index
        finally:
            raw._count -= 1
            with raw._cond:
                raw._exit()

    def _trip(self) -> None:
        """Run the action (outside the barrier's real lock: it may take scheduling points), then release all."""
        raw = self.raw
        try:
            if raw._action:
                raw._action()
            with raw._cond:
                raw._state = 1
                raw._cond.notify_all()
        except BaseException:
            with raw._cond:
                raw._break()
            raise

    def change(self, scheduler: Scheduler, op: str, change: Callable[[], None]) -> None:
        """``reset()`` or ``abort()`` from an actor: a scheduling point that writes the barrier, then the change."""
        scheduler.point(self.footprint)
        change()
        scheduler.record(op, self.name)


class Barrier(_Primitive):
    """A reusable barrier: ``wait()`` returns once ``parties`` actors are waiting at it together."""

    kind = "barrier"

    def __init__(self, scheduler: Scheduler, name: str, parties: int) -> None:
        super().__init__(scheduler, name)
        if parties < 1:
            raise UsageError(f"barrier {name!r} needs at least 1 party, not {parties}")
        self.parties = parties
        self._real = _REAL_BARRIER(parties)
        self._model = BarrierModel(name, self._real)

    @property
    def arrived(self) -> int:
        """How many parties are waiting at it now."""
        return int(self._model.raw._count)

    def wait(self) -> int:
        """Arrive and wait for the others; returns this party's arrival index (0 for the first)."""
        me = self._actor()
        if me is None:
            return int(self._real.wait())
        return self._model.wait(self._scheduler, me, None, None)

    def __repr__(self) -> str:
        return f"<Barrier {self.name} {self.arrived}/{self.parties}>"


class StandardBarrier(_REAL_BARRIER):
    """The stand-in for ``threading.Barrier``: ``wait`` is a scheduling point inside actors, and parks them."""

    lab_state_in: ClassVar[str] = "lab_footprint"  # every attribute is the primitive's state (_standard_base)

    def __new__(cls, parties: int, action: Callable[[], None] | None = None, timeout: float | None = None) -> Any:
        if cls is StandardBarrier and _caller_keeps_real(1):
            return _REAL_BARRIER(parties, action, timeout)
        return super().__new__(cls)

    def __init__(self, parties: int, action: Callable[[], None] | None = None, timeout: float | None = None) -> None:
        super().__init__(parties, action, timeout)
        self.lab_name = _new_name("Barrier")
        self._model = BarrierModel(self.lab_name, self)
        self.lab_footprint = self._model.footprint

    def wait(self, timeout: float | None = None) -> int:
        """Arrive and wait for the other parties, as ``threading.Barrier.wait``; returns the arrival index."""
        acting = _acting()
        if acting is None:
            return int(super().wait(timeout))
        run, me = acting
        return self._model.wait(run.scheduler, me, run, timeout)

    def reset(self) -> None:
        """Return to the initial state; parties waiting now get ``BrokenBarrierError``."""
        self._change("barrier.reset", super().reset)

    def abort(self) -> None:
        """Break the barrier: parties waiting now, and later, get ``BrokenBarrierError``."""
        self._change("barrier.abort", super().abort)

    def _change(self, op: str, change: Callable[[], None]) -> None:
        acting = _acting()
        if acting is None:
            change()
            return
        self._model.change(acting[0].scheduler, op, change)

    def __repr__(self) -> str:
        raw = _raw(self)
        return f"<lab stand-in Barrier {self.lab_name!r} {raw._count}/{raw._parties}>"
