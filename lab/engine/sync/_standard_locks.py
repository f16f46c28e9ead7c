"""Stand-ins for ``threading.Lock`` and ``threading.RLock`` (see :mod:`lab.engine.sync._standard`)."""

from __future__ import annotations

import threading
from typing import Any, ClassVar

from lab.engine.core._footprint import writes
from lab.engine.core._scheduler import Scheduler
from lab.engine.sync._standard_base import _REAL_ALLOCATE_LOCK, _REAL_RLOCK, _acting, _new_name, _Run, _timed, _wait
from lab.errors import ScheduleError


class _StandInLock:
    """What ``Lock`` and ``RLock`` share: the actor/real dispatch, the trace, the holder named in deadlock reports."""

    _label: ClassVar[str] = "lock"

    def __init__(self, name: str | None = None) -> None:
        self.lab_name = name or _new_name(self._label)
        self.lab_footprint = writes("lock", self.lab_name)
        # an acquisition that may give up (non-blocking, or with a timeout) can run while another actor holds the
        # lock: the explorer must not move its races to the holder's acquisition (explorer._locks_taken)
        self._attempt_footprint = self.lab_footprint | writes("lock-attempt", self.lab_name)
        self._holder: str | None = None
        self._held_by_actor = False

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        """Take the lock with the standard library's semantics; inside an actor, waiting parks the actor."""
        acting = _acting()
        if acting is None:
            if blocking and timeout == -1 and self._held_by_actor and not self._free_for_me():
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
        scheduler = run.scheduler
        scheduler.point(self.lab_footprint if blocking and timeout == -1 else _timed(self._attempt_footprint, timeout))
        while not self._try_take(me):
            if not blocking:
                scheduler.record("lock.busy", self.lab_name, {"holder": self._holder_text()})
                return False
            scheduler.record("lock.wait", self.lab_name, {"holder": self._holder_text()})
            if not _wait(run, me, self._free_for_me, self._describe, None if timeout == -1 else timeout):
                scheduler.record("lock.timeout", self.lab_name, {"clock": run.clock})
                return False
        scheduler.lock_taken(self.lab_name)
        scheduler.record("lock.acquire", self.lab_name, self._count_detail())
        return True

    def release(self) -> None:
        """Give the lock up with the standard library's semantics; inside an actor, a scheduling point first."""
        acting = _acting()
        if acting is None:
            self._real_release()
            return
        scheduler = acting[0].scheduler
        if not self._owned():
            if scheduler.aborted:  # unwinding a stopped run: nothing of ours to give back
                return
            self._real_release()  # raises the standard library's own error
            return
        last = self._last_level()
        if scheduler.aborted:
            if last:
                scheduler.lock_given(self.lab_name)
            self._real_release()
            return
        try:
            scheduler.point(self.lab_footprint)
        finally:  # a run stopped at this point still frees the lock, so nobody is left holding it
            # given once the release runs, not before its point: there the actor still holds it, and the explorer
            # moves a race whose reversal takes it to the holder's acquisition (a waiter cannot take it there), as
            # for the lab's own locks (lab.engine.sync._primitives.LabLock.release)
            if last:
                scheduler.lock_given(self.lab_name)
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
            acting[0].scheduler.touch(frozenset({("lock", self.lab_name, "r")}))

    def _holder_text(self) -> str:
        return self._holder or "nobody"

    def _describe(self) -> str:
        return f"lock {self.lab_name!r} held by {self._holder_text()}"

    # What each kind of lock says for itself.

    def _real_acquire(self, blocking: bool, timeout: float) -> bool:
        raise NotImplementedError

    def _real_release(self) -> None:
        raise NotImplementedError

    def _note_taken(self, holder: str, *, by_actor: bool) -> None:
        raise NotImplementedError

    def _try_take(self, me: str) -> bool:
        raise NotImplementedError

    def _owned(self) -> bool:
        raise NotImplementedError

    def _last_level(self) -> bool:
        raise NotImplementedError

    def _free_for_me(self) -> bool:
        raise NotImplementedError

    def _count_detail(self) -> dict[str, Any]:
        raise NotImplementedError

    def _give_all(self, scheduler: Scheduler) -> Any:
        raise NotImplementedError

    def _restore(self, me: str, saved: Any) -> None:
        raise NotImplementedError


class Lock(_StandInLock):
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

    def _real_acquire(self, blocking: bool, timeout: float) -> bool:
        return self._real.acquire(blocking, timeout)

    def _real_release(self) -> None:
        if self._real.locked():
            self._holder, self._held_by_actor = None, False
        self._real.release()

    def _note_taken(self, holder: str, *, by_actor: bool) -> None:
        self._holder, self._held_by_actor = holder, by_actor

    def _try_take(self, me: str) -> bool:
        if not self._real.acquire(False):
            return False
        self._note_taken(me, by_actor=True)
        return True

    def _owned(self) -> bool:
        return self._real.locked()  # a plain lock may be released by any thread, as threading.Lock allows

    def _last_level(self) -> bool:
        return True

    def _free_for_me(self) -> bool:
        return not self._real.locked()

    def _count_detail(self) -> dict[str, Any]:
        return {}

    def _give_all(self, scheduler: Scheduler) -> None:
        scheduler.lock_given(self.lab_name)
        self._real_release()

    def _restore(self, me: str, saved: Any) -> None:
        self._try_take(me)


class RLock(_StandInLock):
    """The stand-in for ``threading.RLock()``: reentrant, on a real ``_thread.RLock`` (each actor is its own thread)."""

    _label: ClassVar[str] = "RLock"

    def __init__(self, name: str | None = None) -> None:
        super().__init__(name)
        self._real: Any = _REAL_RLOCK()  # its _is_owned, _release_save and _acquire_restore are not in the stubs
        self._count = 0

    def __repr__(self) -> str:
        state = f"held {self._count}x by {self._holder_text()}" if self._count else "free"
        return f"<lab stand-in RLock {self.lab_name!r} {state}>"

    # What a real Condition built on this lock (outside actors) asks of it.

    def _is_owned(self) -> bool:
        return bool(self._real._is_owned())

    def _release_save(self) -> tuple[int, Any]:
        if not self._real._is_owned():
            self._real.release()  # raises the standard library's own error
        count = self._count
        self._count, self._holder, self._held_by_actor = 0, None, False
        return count, self._real._release_save()

    def _acquire_restore(self, saved: tuple[int, Any]) -> None:
        count, state = saved
        self._real._acquire_restore(state)
        self._count, self._holder, self._held_by_actor = count, threading.current_thread().name, False

    def _real_acquire(self, blocking: bool, timeout: float) -> bool:
        return bool(self._real.acquire(blocking, timeout))

    def _real_release(self) -> None:
        if self._real._is_owned():
            self._count -= 1
            if self._count == 0:
                self._holder, self._held_by_actor = None, False
        self._real.release()

    def _note_taken(self, holder: str, *, by_actor: bool) -> None:
        self._count += 1
        if self._count == 1:
            self._holder, self._held_by_actor = holder, by_actor

    def _try_take(self, me: str) -> bool:
        if not self._real.acquire(False):
            return False
        self._note_taken(me, by_actor=True)
        return True

    def _owned(self) -> bool:
        return bool(self._real._is_owned())

    def _last_level(self) -> bool:
        return self._count == 1

    def _free_for_me(self) -> bool:
        return self._count == 0 or bool(self._real._is_owned())

    def _count_detail(self) -> dict[str, Any]:
        return {"count": self._count}

    def _give_all(self, scheduler: Scheduler) -> tuple[int, Any]:
        scheduler.lock_given(self.lab_name)
        return self._release_save()

    def _restore(self, me: str, saved: tuple[int, Any]) -> None:
        count, state = saved
        self._real._acquire_restore(state)  # the lock is free, so this does not wait
        self._count, self._holder, self._held_by_actor = count, me, True
