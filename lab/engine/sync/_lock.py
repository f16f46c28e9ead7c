"""The one model of a mutual-exclusion lock, and the lab's face on it, :class:`LabLock`; the stand-ins for
``threading.Lock`` and ``RLock`` are faces on the same model (:mod:`lab.engine.sync._lock_stand_in`,
:mod:`lab.engine.sync._rlock`).

Why one model: the explorer's executions depend on what a lock's operations announce and touch, so two models of
one lock explore one program in two different numbers of executions (a ``threading.Lock`` once cost 3,930 where the
lab's lock cost 360), and a fix to one is lost on the other. :class:`LockModel` decides, for both faces:

- a blocking acquisition writes the lock and is *gated*: it is not offered to the policy as a choice until the lock
  is free for the actor, so acquisitions race with each other and a waiter never takes a step that only blocks;
- a release by the actor that took the lock writes an entry of its own (``lock-release``, ``<lock>@<actor>``), which
  no acquisition or other release touches: a waiter cannot be offered before it anyway, so no order is lost by
  letting it commute, and the race the explorer reverses is the one between two acquisitions (it plans the
  reversal at the holder's acquisition, :func:`lab.engine.search._explorer._locks_taken`);
- a release by anyone else (``threading.Lock`` may be released by another thread: a hand-off) writes the lock
  itself, marked as no acquisition (``lock-attempt``), so it orders the next acquisition after it: what the
  releasing actor did before it happens before what the acquirer does;
- an acquisition that may give up (non-blocking, or with a timeout) is not gated and is marked ``lock-attempt``:
  what it sees while another actor holds the lock is an outcome of its own, so it also reads every actor's
  releases (it races with them where they lie);
- a query (``locked()``) reads the lock and every actor's releases.
"""

from __future__ import annotations

import threading
from typing import Any, ClassVar

from lab.engine.core._footprint import EVERYTHING, Footprint, writes
from lab.engine.core._scheduler import Scheduler
from lab.engine.sync._standard_base import _timed
from lab.errors import ScheduleError, UsageError


class LockModel:
    """What the scheduler and the explorer see of one lock: its holder, its footprints, its gate.

    ``holder`` is the actor (or, outside actors, the thread) that holds it; ``by_actor`` says which. A reentrant
    lock (``reentrant=True``) is free for its own holder; its face keeps the count.
    """

    def __init__(self, name: str, *, reentrant: bool = False) -> None:
        self.name = name
        self.reentrant = reentrant
        self.footprint: Footprint = writes("lock", name)
        self.attempt_footprint: Footprint = self.footprint | writes("lock-attempt", name)
        self.holder: str | None = None
        self.by_actor = False
        self._releases: dict[str, Footprint] = {}
        self._attempt: Footprint | None = None

    def free_for(self, me: str) -> bool:
        """True when ``me`` could take the lock now."""
        return self.holder is None or (self.reentrant and self.holder == me)

    def describe(self) -> str:
        return f"lock {self.name!r} held by {self.holder or 'nobody'}"

    def before_blocking_take(self, scheduler: Scheduler, me: str) -> None:
        """The scheduling point of an acquisition that waits as long as it must: gated until the lock is free."""
        gate = _LockFree(self, me)
        if not gate.ready():  # the trace says so; the actor is not offered as a choice until the lock is free
            scheduler.record("lock.wait", self.name, {"holder": self.holder or "nobody"})
        scheduler.point(self.footprint, gate=gate)
        if not gate.ready():  # only when the run is being stopped
            scheduler.block(gate)

    def before_attempt(self, scheduler: Scheduler, timeout: float | None) -> None:
        """The scheduling point of an acquisition that may give up (``timeout``: ``None`` for a non-blocking one).

        It runs while another actor holds the lock and sees whether that actor released it yet, so it reads every
        actor's releases, as a query does: the explorer reverses it with a release where it lies.
        """
        if self._attempt is None:
            self._attempt = self.attempt_footprint | self._releases_read(scheduler)
        scheduler.point(_timed(self._attempt, timeout))

    def taken(self, scheduler: Scheduler, me: str, detail: dict[str, Any] | None = None) -> None:
        """``me`` now holds the lock (its first level)."""
        self.holder, self.by_actor = me, True
        scheduler.lock_taken(self.name)
        scheduler.record("lock.acquire", self.name, detail)

    def release_footprint(self, me: str) -> Footprint:
        """What ``me``'s release executes: its own entry when it took the lock, the lock itself otherwise."""
        if self.holder != me or not self.by_actor:
            return self.attempt_footprint  # a hand-off: order the next acquisition after it (no acquisition itself)
        executes = self._releases.get(me)
        if executes is None:
            executes = self._releases[me] = writes("lock-release", released_by(self.name, me))
        return executes

    def before_release(self, scheduler: Scheduler, me: str) -> None:
        """The scheduling point of a release: the step that follows may touch anything."""
        scheduler.point(EVERYTHING, executes=self.release_footprint(me))

    def given(self, scheduler: Scheduler, me: str) -> None:
        """The lock is free again; the actor that held it no longer does (``me`` or, handed off, another)."""
        holder, by_actor = self.holder, self.by_actor
        self.holder, self.by_actor = None, False
        if holder == me or not by_actor or holder is None:
            scheduler.lock_given(self.name)
            return
        # Another actor releases it (a plain lock allows that): the holder's lockset must lose it too. The scheduler
        # only gives a lock up for the calling actor, so this reads its table of actors (read-only but for this).
        other = scheduler._by_name.get(holder)
        if other is not None:
            other.locks.discard(self.name)
            other.lockset = frozenset(other.locks)

    def read(self, scheduler: Scheduler) -> None:
        """A query of the lock (``locked()``): a read of its acquisitions and of every actor's releases."""
        scheduler.touch(frozenset({("lock", self.name, "r")}) | self._releases_read(scheduler))

    def _releases_read(self, scheduler: Scheduler) -> Footprint:
        return frozenset(("lock-release", released_by(self.name, who), "r") for who in scheduler.actor_names)


def released_by(lock: str, actor: str) -> str:
    """The key of ``actor``'s releases of ``lock`` (a ``lock-release`` entry: no acquisition, and no synchronisation
    for the atomicity check, only what a query reads)."""
    return f"{lock}@{actor}"


class _LockFree:
    """The gate of a blocking acquisition, and what a deadlock report says of it."""

    def __init__(self, lock: LockModel, me: str) -> None:
        self._lock, self._me = lock, me

    def ready(self) -> bool:
        return self._lock.free_for(self._me)

    def describe(self) -> str:
        return self._lock.describe()


class LabLock:
    """A non-reentrant mutual-exclusion lock whose acquire and release are scheduling points.

    Inject it into the session under test (``VersionedSession(..., lock=lab.lock("session"))``) and every contended
    acquire shows in the trace, with the holder named in a deadlock report. Called from a thread that is not an
    actor of the run, it behaves like a ``threading.Lock``.
    """

    kind = "lock"
    lab_state_in: ClassVar[str] = "footprint"  # every attribute is the primitive's state (_standard_base)

    def __init__(self, scheduler: Scheduler, name: str) -> None:
        if not name.strip():
            raise UsageError(f"a {self.kind} needs a non-blank name")
        self._scheduler = scheduler
        self.name = name
        self._model = LockModel(name)
        self.footprint: Footprint = self._model.footprint
        self._condition = threading.Condition()

    @property
    def holder(self) -> str | None:
        """The actor (or thread) that holds the lock, if any."""
        return self._model.holder

    def locked(self) -> bool:
        """True while some thread holds the lock (for the explorer, a read of its acquisitions and releases)."""
        if self._scheduler.current() is not None:
            self._model.read(self._scheduler)
        return self._model.holder is not None

    def acquire(self) -> bool:
        """Take the lock, waiting while another actor holds it; acquiring it twice deadlocks, as a Lock does."""
        model, scheduler = self._model, self._scheduler
        me = scheduler.current()
        if me is None:
            if model.holder in scheduler.actor_names:
                raise ScheduleError(f"lock {self.name!r} is still held by actor {model.holder}, which did not finish")
            with self._condition:
                self._condition.wait_for(lambda: model.holder is None)
                model.holder, model.by_actor = threading.current_thread().name, False
            return True
        model.before_blocking_take(scheduler, me)
        model.taken(scheduler, me)
        return True

    def release(self) -> None:
        """Give the lock up; only its holder may."""
        model, scheduler = self._model, self._scheduler
        me = scheduler.current()
        if me is None:
            with self._condition:
                model.holder, model.by_actor = None, False
                self._condition.notify_all()
            return
        if model.holder != me:  # RuntimeError, as threading.Lock.release raises: code under test may catch that
            raise RuntimeError(f"{me} cannot release lock {self.name!r}: it is held by {model.holder}")
        if scheduler.aborted:  # unwinding a stopped run: free it quietly
            model.given(scheduler, me)
            return
        try:
            model.before_release(scheduler, me)
        finally:  # a run stopped at this point still frees the lock, so no one is left holding it
            # given once the release runs, not before its point: there the actor still holds it, and the explorer
            # moves a race whose reversal takes it to the holder's acquisition (a waiter cannot take it there)
            model.given(scheduler, me)
        scheduler.record("lock.release", self.name)

    def __enter__(self) -> LabLock:
        self.acquire()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.release()

    def __repr__(self) -> str:
        holder = self._model.holder
        return f"<LabLock {self.name} {'held by ' + holder if holder else 'free'}>"
