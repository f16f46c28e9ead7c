"""Latches, events, barriers and locks that the scheduler can see (probe holds are in :mod:`lab.engine.sync._probes`).

Under a run, each operation is a scheduling point: the scheduler may switch actors before it, records it in the
trace, and parks an actor that must wait instead of letting the operating system decide who wakes. Called from a
thread that is not an actor of the run (setup code, a plain test), each primitive behaves like its ``threading``
counterpart, built on a ``threading.Condition``.
"""

from __future__ import annotations

import threading

from lab.engine.core._footprint import EVERYTHING, Footprint, writes
from lab.engine.core._scheduler import Scheduler
from lab.errors import ScheduleError, UsageError


class _Primitive:
    kind = "primitive"

    def __init__(self, scheduler: Scheduler, name: str) -> None:
        if not name.strip():
            raise UsageError(f"a {self.kind} needs a non-blank name")
        self._scheduler = scheduler
        self.name = name
        self._condition = threading.Condition()
        self.footprint: Footprint = writes(self.kind, name)

    def _actor(self) -> str | None:
        return self._scheduler.current()


class Latch(_Primitive):
    """A count-down latch (Java's CountDownLatch): ``wait()`` returns once ``count_down()`` ran ``count`` times.

    >>> from lab.engine.core._scheduler import Scheduler
    >>> latch = Latch(Scheduler(), "fast-committed", 1)
    >>> latch
    <Latch fast-committed 1 left>
    >>> latch.count_down(); latch.is_open()
    True
    """

    kind = "latch"

    def __init__(self, scheduler: Scheduler, name: str, count: int = 1) -> None:
        super().__init__(scheduler, name)
        if count < 0:
            raise UsageError(f"latch {name!r} needs a count >= 0, not {count}")
        self.count = count

    def is_open(self) -> bool:
        """True once the count reached zero."""
        return self.count == 0

    def count_down(self) -> None:
        """Lower the count by one (never below zero); at zero every waiter may go on."""
        if self._actor() is None:
            with self._condition:
                self.count = max(self.count - 1, 0)
                self._condition.notify_all()
            return
        self._scheduler.point(self.footprint)
        self.count = max(self.count - 1, 0)
        self._scheduler.record("latch.count_down", self.name, {"remaining": self.count})

    def wait(self) -> None:
        """Return once the latch is open; under a run, the actor is parked and other actors go on meanwhile."""
        if self._actor() is None:
            with self._condition:
                self._condition.wait_for(self.is_open)
            return
        self._scheduler.point(self.footprint)
        if self.is_open():
            self._scheduler.record("latch.wait", self.name, {"remaining": 0})
            return
        self._scheduler.record("latch.wait", self.name, {"remaining": self.count, "blocked": True})
        self._scheduler.block(_LatchOpen(self))
        self._scheduler.record("latch.open", self.name)

    def __repr__(self) -> str:
        return f"<Latch {self.name} {self.count} left>"


class _LatchOpen:
    def __init__(self, latch: Latch) -> None:
        self._latch = latch

    def ready(self) -> bool:
        return self._latch.is_open()

    def describe(self) -> str:
        n = self._latch.count
        return f"latch {self._latch.name!r} still needs {n} count_down{'s' if n != 1 else ''}"


class Event(Latch):
    """A one-shot event: ``set()`` opens it for every present and future ``wait()``."""

    kind = "event"

    def __init__(self, scheduler: Scheduler, name: str) -> None:
        super().__init__(scheduler, name, 1)

    def set(self) -> None:
        """Open the event (setting it twice is harmless)."""
        self.count_down()

    def is_set(self) -> bool:
        """True once ``set()`` was called."""
        return self.is_open()

    def __repr__(self) -> str:
        return f"<Event {self.name} {'set' if self.is_set() else 'unset'}>"


class Barrier(_Primitive):
    """A reusable barrier: ``wait()`` returns once ``parties`` actors are waiting at it together."""

    kind = "barrier"

    def __init__(self, scheduler: Scheduler, name: str, parties: int) -> None:
        super().__init__(scheduler, name)
        if parties < 1:
            raise UsageError(f"barrier {name!r} needs at least 1 party, not {parties}")
        self.parties = parties
        self.arrived = 0
        self.generation = 0

    def wait(self) -> int:
        """Arrive and wait for the others; returns this party's arrival index (0 for the first)."""
        if self._actor() is None:
            with self._condition:
                index, generation = self._arrive()
                self._condition.notify_all()
                self._condition.wait_for(lambda: self.generation != generation)
            return index
        self._scheduler.point(self.footprint)
        index, generation = self._arrive()
        self._scheduler.record("barrier.wait", self.name, {"arrived": index + 1, "parties": self.parties})
        if self.generation == generation:
            self._scheduler.block(_BarrierTripped(self, generation))
            self._scheduler.record("barrier.pass", self.name)
        return index

    def _arrive(self) -> tuple[int, int]:
        index, generation = self.arrived, self.generation
        self.arrived += 1
        if self.arrived == self.parties:
            self.arrived = 0
            self.generation += 1
        return index, generation

    def __repr__(self) -> str:
        return f"<Barrier {self.name} {self.arrived}/{self.parties}>"


class _BarrierTripped:
    def __init__(self, barrier: Barrier, generation: int) -> None:
        self._barrier, self._generation = barrier, generation

    def ready(self) -> bool:
        return self._barrier.generation != self._generation

    def describe(self) -> str:
        b = self._barrier
        return f"barrier {b.name!r} has {b.arrived} of {b.parties} parties"


class LabLock(_Primitive):
    """A non-reentrant mutual-exclusion lock whose acquire and release are scheduling points.

    Inject it into the session under test (``VersionedSession(..., lock=lab.lock("session"))``) and every contended
    acquire shows in the trace, with the holder named in a deadlock report.
    """

    kind = "lock"

    def __init__(self, scheduler: Scheduler, name: str) -> None:
        super().__init__(scheduler, name)
        self.holder: str | None = None
        # Acquisitions race with each other; a release only lets a waiter in. Since a waiter is not offered as a
        # choice until the lock is free (the acquire is gated), no order is lost by letting a release commute with
        # every acquisition and release, and the race the explorer must reverse is the one between the two
        # acquisitions. Only a query (locked()) sees a release: each actor's releases write an entry of their own,
        # which no other release or acquisition touches, and a query reads them all.
        self._release_footprints: dict[str, Footprint] = {}

    def locked(self) -> bool:
        """True while some thread holds the lock (for the explorer, a read of its acquisitions and releases)."""
        if self._actor() is not None:
            names = self._scheduler.actor_names
            self._scheduler.touch(
                frozenset(
                    {("lock", self.name, "r"), *(("lock-release", _released_by(self.name, who), "r") for who in names)}
                )
            )
        return self.holder is not None

    def acquire(self) -> bool:
        """Take the lock, waiting while another actor holds it; acquiring it twice deadlocks, as a Lock does."""
        me = self._actor()
        if me is None:
            if self.holder in self._scheduler.actor_names:
                raise ScheduleError(f"lock {self.name!r} is still held by actor {self.holder}, which did not finish")
            with self._condition:
                self._condition.wait_for(lambda: self.holder is None)
                self.holder = threading.current_thread().name
            return True
        if self.holder is not None:  # the trace says so; the actor is not offered as a choice until the lock is free
            self._scheduler.record("lock.wait", self.name, {"holder": self.holder})
        self._scheduler.point(self.footprint, gate=_LockFree(self))
        if self.holder is not None:  # only when the run is being stopped
            self._scheduler.block(_LockFree(self))
        self.holder = me
        self._scheduler.lock_taken(self.name)
        self._scheduler.record("lock.acquire", self.name)
        return True

    def release(self) -> None:
        """Give the lock up; only its holder may."""
        me = self._actor()
        if me is None:
            with self._condition:
                self.holder = None
                self._condition.notify_all()
            return
        if self.holder != me:  # RuntimeError, as threading.Lock.release raises: code under test may catch that
            raise RuntimeError(f"{me} cannot release lock {self.name!r}: it is held by {self.holder}")
        if self._scheduler.aborted:  # unwinding a stopped run: free it quietly
            self._scheduler.lock_given(self.name)
            self.holder = None
            return
        try:
            executes = self._release_footprints.get(me)
            if executes is None:
                executes = self._release_footprints[me] = writes("lock-release", _released_by(self.name, me))
            self._scheduler.point(EVERYTHING, executes=executes)
        finally:  # a run stopped at this point still frees the lock, so no one is left holding it
            self.holder = None
            # given once the release runs, not before its point: there the actor still holds it, and the explorer
            # moves a race whose reversal takes it to the holder's acquisition (a waiter cannot take it there)
            self._scheduler.lock_given(self.name)
        self._scheduler.record("lock.release", self.name)

    def __enter__(self) -> LabLock:
        self.acquire()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.release()

    def __repr__(self) -> str:
        return f"<LabLock {self.name} {'held by ' + self.holder if self.holder else 'free'}>"


def _released_by(lock: str, actor: str) -> str:
    """The key of ``actor``'s releases of ``lock`` (a ``lock-release`` entry: no acquisition, and no synchronisation
    for the atomicity check, only what a query reads)."""
    return f"{lock}@{actor}"


class _LockFree:
    def __init__(self, lock: LabLock) -> None:
        self._lock = lock

    def ready(self) -> bool:
        return self._lock.holder is None

    def describe(self) -> str:
        return f"lock {self._lock.name!r} held by {self._lock.holder}"
