"""The lab's count-down latch, and what every lab primitive shares (probe holds are in :mod:`lab.engine.sync._probe`).

Under a run, each operation is a scheduling point: the scheduler may switch actors before it, records it in the
trace, and parks an actor that must wait instead of letting the operating system decide who wakes. Called from a
thread that is not an actor of the run (setup code, a plain test), each primitive behaves like its ``threading``
counterpart, built on a ``threading.Condition``.
"""

from __future__ import annotations

import threading
from typing import ClassVar

from lab.engine.core._footprint import NOTHING, Footprint, writes
from lab.engine.core._scheduler import Scheduler
from lab.errors import UsageError


class _Primitive:
    kind = "primitive"
    lab_state_in: ClassVar[str] = "footprint"  # every attribute is the primitive's state (_standard_base)

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
    lab_state_in: ClassVar[str] = "reads"  # reading ``count`` reads every actor's count-downs

    def __init__(self, scheduler: Scheduler, name: str, count: int = 1) -> None:
        super().__init__(scheduler, name)
        if count < 0:
            raise UsageError(f"latch {name!r} needs a count >= 0, not {count}")
        self.count = count
        # Count-downs commute with each other (the count only goes down, to zero at the least), so each actor's
        # count-downs write an entry of their own, which no other actor's count-down touches; what reads the count
        # (a wait, is_open(), a hold at a probe point) reads them all.
        self._downs: dict[str, Footprint] = {}
        self._reads: Footprint | None = None

    def reads(self) -> Footprint:
        """What reading the count touches: every actor's count-downs (for the explorer, a read of each)."""
        if self._reads is None:
            names = self._scheduler.actor_names
            self._reads = frozenset(
                {(self.kind, self.name, "r"), *((self.kind, _down(self.name, who), "r") for who in names)}
            )
        return self._reads

    def is_open(self) -> bool:
        """True once the count reached zero (from an actor, a read of the count)."""
        if self._actor() is not None:
            self._scheduler.touch(self.reads())
        return self.count == 0

    def count_down(self) -> None:
        """Lower the count by one (never below zero); at zero every waiter may go on."""
        me = self._actor()
        if me is None:
            with self._condition:
                self.count = max(self.count - 1, 0)
                self._condition.notify_all()
            return
        footprint = self._downs.get(me)
        if footprint is None:
            footprint = self._downs[me] = writes(self.kind, _down(self.name, me))
        self._scheduler.point(footprint)
        self.count = max(self.count - 1, 0)
        self._scheduler.record("latch.count_down", self.name, {"remaining": self.count})

    def wait(self) -> None:
        """Return once the latch is open; under a run, the actor is parked and other actors go on meanwhile.

        A wait that finds the latch closed does nothing before it parks (its step touches nothing, so it commutes
        with every other step); the step that resumes it reads the count, so it comes after every count-down
        before it, as a wait that finds the latch open does.
        """
        if self._actor() is None:
            with self._condition:
                self._condition.wait_for(lambda: self.count == 0)
            return
        reads = self.reads()
        self._scheduler.point(reads, executes=NOTHING)
        if self.count == 0:
            self._scheduler.touch(reads)
            self._scheduler.record("latch.wait", self.name, {"remaining": 0})
            return
        self._scheduler.record("latch.wait", self.name, {"remaining": self.count, "blocked": True})
        self._scheduler.block(_LatchOpen(self), executes=reads)
        self._scheduler.record("latch.open", self.name)

    def __repr__(self) -> str:
        return f"<Latch {self.name} {self.count} left>"


def _down(latch: str, actor: str) -> str:
    """The key of ``actor``'s count-downs of ``latch``."""
    return f"{latch} (count_down by {actor})"


class _LatchOpen:
    def __init__(self, latch: Latch) -> None:
        self._latch = latch

    def ready(self) -> bool:
        return self._latch.count == 0

    def describe(self) -> str:
        n = self._latch.count
        return f"latch {self._latch.name!r} still needs {n} count_down{'s' if n != 1 else ''}"
