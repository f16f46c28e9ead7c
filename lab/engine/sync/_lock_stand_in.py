"""The stand-in for ``threading.Lock``, and what it shares with the one for ``RLock``: a face on the one lock model
(:class:`lab.engine.sync._lock.LockModel`), which the lab's own :class:`~lab.engine.sync._lock.LabLock` is too.

A real lock underneath serves threads that are not actors (setup, ``observe()``, a real ``Condition`` built on it
outside actors); inside actors every acquire and release goes through the model, so a plain ``threading.Lock``
explores as the lab's lock does.
"""

from __future__ import annotations

import threading
from typing import Any, ClassVar

from lab.engine.core._footprint import EVERYTHING
from lab.engine.core._scheduler import Scheduler
from lab.engine.sync._lock import LockModel
from lab.engine.sync._standard_base import _REAL_ALLOCATE_LOCK, _acting, _new_name, _Run, _wait
from lab.errors import ScheduleError


class StandInLock:
    """What the stand-ins for ``threading.Lock`` and ``threading.RLock`` share: a real lock for threads that are not
    actors, the :class:`LockModel` for actors, and what a :class:`~lab.engine.sync._condition.Condition` asks."""

    _label: ClassVar[str] = "lock"
    lab_state_in: ClassVar[str] = "lab_footprint"  # every attribute is the primitive's state (_standard_base)
    _reentrant: ClassVar[bool] = False

    def __init__(self, name: str | None = None) -> None:
        self.lab_name = name or _new_name(self._label)
        self._model = LockModel(self.lab_name, reentrant=self._reentrant)
        self.lab_footprint = self._model.footprint

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        """Take the lock with the standard library's semantics; inside an actor, waiting parks the actor."""
        acting = _acting()
        if acting is None:
            if blocking and timeout == -1 and self._model.by_actor and not self._free_for_me():
                raise ScheduleError(
                    f"{self._describe()}, an actor that will never release it to this thread (it is parked, or "
                    "did not finish)"
                )
            got = self._real_acquire(blocking, timeout)
            if got:
                self._note_taken(threading.current_thread().name, by_actor=False)
            return got
        run, me = acting
        if not blocking and timeout != -1:
            # The standard library's error, outside the LabError tree on purpose (see lab.engine.sync._standard).
            raise ValueError("can't specify a timeout for a non-blocking call")
        if timeout < 0 and timeout != -1:
            raise ValueError("timeout value must be positive")
        model, scheduler = self._model, run.scheduler
        if blocking and timeout == -1:
            model.before_blocking_take(scheduler, me)
            while not self._try_take(me):  # only if a thread the lab does not schedule took the real lock meanwhile
                _wait(run, me, self._free_for_me, self._describe, None)
        else:
            model.before_attempt(scheduler, timeout if blocking else None)
            while not self._try_take(me):
                if not blocking:
                    scheduler.record("lock.busy", self.lab_name, {"holder": self._holder_text()})
                    return False
                scheduler.record("lock.wait", self.lab_name, {"holder": self._holder_text()})
                if not _wait(run, me, self._free_for_me, self._describe, timeout):
                    scheduler.record("lock.timeout", self.lab_name, {"clock": run.clock})
                    return False
        if self._first_level():
            model.taken(scheduler, me, self._count_detail())
        else:
            scheduler.record("lock.acquire", self.lab_name, self._count_detail())
        return True

    def release(self) -> None:
        """Give the lock up with the standard library's semantics; inside an actor, a scheduling point first."""
        acting = _acting()
        if acting is None:
            self._real_release()
            return
        scheduler, me = acting[0].scheduler, acting[1]
        if not self._owned():
            if scheduler.aborted:  # unwinding a stopped run: nothing of ours to give back
                return
            self._real_release()  # raises the standard library's own error
            return
        last = self._last_level()
        if scheduler.aborted:
            if last:
                self._model.given(scheduler, me)
            self._real_release()
            return
        try:
            if last:
                self._model.before_release(scheduler, me)
            else:  # an inner level of a reentrant lock: nobody else can see it go
                scheduler.point(EVERYTHING, executes=self._model.release_footprint(me))
        finally:  # a run stopped at this point still frees the lock, so nobody is left holding it
            # given once the release runs, not before its point: there the actor still holds it (see LabLock)
            if last:
                self._model.given(scheduler, me)
            self._real_release()
        scheduler.record("lock.release", self.lab_name, self._count_detail())

    def __enter__(self) -> bool:
        return self.acquire()

    def __exit__(self, *exc_info: object) -> None:
        self.release()

    def _take_back(self, run: _Run, me: str, saved: Any) -> None:
        """Re-take the lock after a condition wait released it, parking the actor while someone else holds it."""
        if run.scheduler.aborted:  # unwinding: take it back only if that cannot wait, so the with-block can exit
            if self._free_for_me():
                self._restore(me, saved)
            return
        while not self._free_for_me():
            run.scheduler.record("lock.wait", self.lab_name, {"holder": self._holder_text()})
            _wait(run, me, self._free_for_me, self._describe, None)
        self._restore(me, saved)
        run.scheduler.lock_taken(self.lab_name)

    def _touch_read(self) -> None:
        acting = _acting()
        if acting is not None:
            self._model.read(acting[0].scheduler)

    def _holder_text(self) -> str:
        return self._model.holder or "nobody"

    def _describe(self) -> str:
        return self._model.describe()

    def _note_taken(self, holder: str, *, by_actor: bool) -> None:
        if self._first_level():
            self._model.holder, self._model.by_actor = holder, by_actor

    # What each kind of lock says for itself.

    def _free_for_me(self) -> bool:
        raise NotImplementedError

    def _real_acquire(self, blocking: bool, timeout: float) -> bool:
        raise NotImplementedError

    def _real_release(self) -> None:
        raise NotImplementedError

    def _try_take(self, me: str) -> bool:
        raise NotImplementedError

    def _owned(self) -> bool:
        raise NotImplementedError

    def _first_level(self) -> bool:
        raise NotImplementedError

    def _last_level(self) -> bool:
        raise NotImplementedError

    def _count_detail(self) -> dict[str, Any]:
        raise NotImplementedError

    def _give_all(self, scheduler: Scheduler) -> Any:
        raise NotImplementedError

    def _restore(self, me: str, saved: Any) -> None:
        raise NotImplementedError


class Lock(StandInLock):
    """The stand-in for ``threading.Lock()``: a real lock whose operations are scheduling points inside actors."""

    _label: ClassVar[str] = "Lock"

    def __init__(self, name: str | None = None) -> None:
        super().__init__(name)
        self._real = _REAL_ALLOCATE_LOCK()

    def locked(self) -> bool:
        """True while some thread holds the lock (a read of the lock, for the explorer)."""
        self._touch_read()
        return self._real.locked()

    def __repr__(self) -> str:
        state = f"held by {self._holder_text()}" if self._real.locked() else "free"
        return f"<lab stand-in Lock {self.lab_name!r} {state}>"

    # What a real Condition built on this lock (outside actors) asks of it.

    def _is_owned(self) -> bool:
        return self._real.locked()

    def _release_save(self) -> None:
        self.release()

    def _acquire_restore(self, saved: object) -> None:
        self.acquire()

    def _free_for_me(self) -> bool:
        return not self._real.locked()

    def _real_acquire(self, blocking: bool, timeout: float) -> bool:
        return self._real.acquire(blocking, timeout)

    def _real_release(self) -> None:
        if self._real.locked():
            self._model.holder, self._model.by_actor = None, False
        self._real.release()

    def _try_take(self, me: str) -> bool:
        if not self._real.acquire(False):
            return False
        self._model.holder, self._model.by_actor = me, True
        return True

    def _owned(self) -> bool:
        return self._real.locked()  # a plain lock may be released by any thread, as threading.Lock allows

    def _first_level(self) -> bool:
        return True

    def _last_level(self) -> bool:
        return True

    def _count_detail(self) -> dict[str, Any]:
        return {}

    def _give_all(self, scheduler: Scheduler) -> None:
        scheduler.lock_given(self.lab_name)
        self._real_release()

    def _restore(self, me: str, saved: Any) -> None:
        self._try_take(me)
