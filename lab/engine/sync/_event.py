"""The one model of an event, and its two faces: the lab's one-shot :class:`Event` and the stand-in
:class:`StandardEvent` for ``threading.Event``.

Why one model: the two used to be written twice (the lab's as a latch of one, the stand-in on the standard
library's internals), with the same footprints by luck and one difference by accident: the lab's ``is_set()`` read
the flag without telling the explorer. :class:`EventModel` decides for both faces:

- ``set()`` and ``clear()`` write the event (``event``, its name) at their scheduling point;
- ``wait()`` writes it too (it is where a waiter's order against a set is decided), and a waiter that must wait is
  parked until a ``set()`` runs *after it began waiting* (as CPython's: a ``clear()`` before it runs again does not
  put it back to waiting);
- ``is_set()`` is a read of the event, added to the running step.

The lab's face is one-shot (no ``clear``) and is a :class:`~lab.engine.sync._latch.Latch` of one, so a scenario may
hold an actor at a probe point until it is set (``self.lab.hold(..., until=event)``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from lab.engine.core._footprint import Footprint, writes
from lab.engine.core._scheduler import Scheduler
from lab.engine.sync._latch import Latch, _Primitive
from lab.engine.sync._standard_base import (
    _REAL_EVENT,
    _acting,
    _await,
    _caller_keeps_real,
    _new_name,
    _raw,
    _Run,
    _timed,
)


class EventModel:
    """What the scheduler and the explorer see of one event: its flag, how many sets ran, its footprints.

    ``on_change`` is told each new flag value, so a face built on the standard library's own event keeps that one in
    step (threads that are not actors wait on it).
    """

    def __init__(self, name: str, on_change: Callable[[bool], None] | None = None) -> None:
        self.name = name
        self.footprint: Footprint = writes("event", name)
        self.read_footprint: Footprint = frozenset({("event", name, "r")})
        self.flag = False
        self.sets = 0  # how many times set() ran: a waiter present at one returns True, even if cleared since
        self._on_change = on_change

    def change(self, flag: bool) -> None:
        """Set (``True``) or clear the flag, outside any scheduling point."""
        if flag:
            self.sets += 1
        self.flag = flag
        if self._on_change is not None:
            self._on_change(flag)

    def read(self, scheduler: Scheduler) -> bool:
        """``is_set()`` from an actor: a read of the event."""
        scheduler.touch(self.read_footprint)
        return self.flag

    def flip(self, scheduler: Scheduler, flag: bool) -> None:
        """``set()`` or ``clear()`` from an actor: a scheduling point that writes the event, then the change."""
        scheduler.point(self.footprint)
        self.change(flag)
        scheduler.record("event.set" if flag else "event.clear", self.name)

    def wait(self, scheduler: Scheduler, me: str, run: _Run | None, timeout: float | None) -> bool:
        """``wait()`` from an actor: True once set, or once a set ran while it waited; False when it timed out.

        ``run`` is the active run of the standard library's stand-ins (its virtual clock serves the timeout); the
        lab's face, which has no timeout, may have none.
        """
        scheduler.point(_timed(self.footprint, timeout))
        if self.flag:
            scheduler.record("event.wait", self.name, {"set": True})
            return True
        scheduler.record("event.wait", self.name, {"set": False})
        sets = self.sets
        describe = lambda: f"event {self.name!r} to be set"  # noqa: E731
        signaled = _await(scheduler, run, me, lambda: self.sets != sets, describe, timeout)
        if signaled:
            scheduler.record("event.wake", self.name)
        else:
            scheduler.record("event.timeout", self.name, {"clock": run.clock if run is not None else 0.0})
        return signaled


class Event(Latch):
    """A one-shot event: ``set()`` opens it for every present and future ``wait()``."""

    kind = "event"

    def __init__(self, scheduler: Scheduler, name: str) -> None:
        _Primitive.__init__(self, scheduler, name)
        self.count = 1  # as a latch of one: 1 until set, then 0
        self._model = EventModel(name, self._opened)

    def _opened(self, flag: bool) -> None:
        self.count = 0 if flag else 1

    def set(self) -> None:
        """Open the event (setting it twice is harmless)."""
        if self._actor() is None:
            with self._condition:
                self._model.change(True)
                self._condition.notify_all()
            return
        self._model.flip(self._scheduler, True)

    def count_down(self) -> None:
        """As a latch of one: the same as :meth:`set` (a probe signal counts an event down)."""
        self.set()

    def is_set(self) -> bool:
        """True once ``set()`` was called (for the explorer, a read of the event)."""
        if self._actor() is None:
            return self._model.flag
        return self._model.read(self._scheduler)

    def is_open(self) -> bool:
        """The same as :meth:`is_set`, as a latch says it."""
        return self.is_set()

    def reads(self) -> Footprint:
        """What reading the flag touches (a hold at a probe point until the event is set reads it)."""
        return self._model.read_footprint

    def wait(self) -> None:
        """Return once the event is set; under a run, the actor is parked and other actors go on meanwhile."""
        me = self._actor()
        if me is None:
            with self._condition:
                self._condition.wait_for(lambda: self._model.flag)
            return
        self._model.wait(self._scheduler, me, None, None)

    def __repr__(self) -> str:
        return f"<Event {self.name} {'set' if self._model.flag else 'unset'}>"


class StandardEvent(_REAL_EVENT):
    """The stand-in for ``threading.Event``: set, clear and wait are scheduling points inside actors."""

    lab_state_in: ClassVar[str] = "lab_footprint"  # every attribute is the primitive's state (_standard_base)

    def __new__(cls) -> Any:
        if cls is StandardEvent and _caller_keeps_real(1):
            return _REAL_EVENT()
        return super().__new__(cls)

    def __init__(self) -> None:
        super().__init__()
        self.lab_name = _new_name("Event")
        self._model = EventModel(self.lab_name, self._real_change)
        self.lab_footprint = self._model.footprint

    def _real_change(self, flag: bool) -> None:
        (_REAL_EVENT.set if flag else _REAL_EVENT.clear)(self)

    def is_set(self) -> bool:
        """True once set (a read of the event, for the explorer)."""
        acting = _acting()
        if acting is None:
            return bool(_raw(self)._flag)
        acting[0].scheduler.touch(self._model.read_footprint)
        return bool(_raw(self)._flag)

    def set(self) -> None:
        """Set the flag and wake every waiter."""
        self._flip(True)

    def clear(self) -> None:
        """Reset the flag."""
        self._flip(False)

    def _flip(self, flag: bool) -> None:
        acting = _acting()
        if acting is None:
            self._model.change(flag)
            return
        self._model.flip(acting[0].scheduler, flag)

    def wait(self, timeout: float | None = None) -> bool:
        """Return True once the flag is set, or a set() ran while waiting; False when the timeout passed first."""
        acting = _acting()
        if acting is None:
            return super().wait(timeout)
        run, me = acting
        return self._model.wait(run.scheduler, me, run, timeout)

    def __repr__(self) -> str:
        return f"<lab stand-in Event {self.lab_name!r} {'set' if _raw(self)._flag else 'unset'}>"
