"""The lab's count-down latch, and what every lab primitive shares (probe holds are in :mod:`lab.engine.sync._probe`).

Under a run, each operation is a scheduling point: the scheduler may switch actors before it, records it in the
trace, and parks an actor that must wait instead of letting the operating system decide who wakes. Called from a
thread that is not an actor of the run (setup code, a plain test), each primitive behaves like its ``threading``
counterpart, built on a ``threading.Condition``.
"""

from __future__ import annotations

import threading

from lab.engine.core._footprint import Footprint, writes
from lab.engine.core._scheduler import Scheduler
from lab.errors import UsageError


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
