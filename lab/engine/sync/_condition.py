"""The stand-in for ``threading.Condition`` (see :mod:`lab.engine.sync._standard`), on the lock model of
:mod:`lab.engine.sync._lock`: a wait gives the lock up and takes it back as that model says."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any, ClassVar

from lab.engine.core._footprint import writes
from lab.engine.sync._lock_stand_in import StandInLock
from lab.engine.sync._rlock import RLock
from lab.engine.sync._standard_base import (
    _REAL_ALLOCATE_LOCK,
    _REAL_CONDITION,
    _acting,
    _caller_keeps_real,
    _new_name,
    _raw,
    _timed,
    _wait,
)


class Condition(_REAL_CONDITION):
    """The stand-in for ``threading.Condition``: waits and notifies are scheduling points inside actors."""

    lab_state_in: ClassVar[str] = "lab_footprint"  # every attribute is the primitive's state (_standard_base)

    def __new__(cls, lock: Any = None) -> Any:
        if cls is Condition and ((lock is not None and not isinstance(lock, StandInLock)) or _caller_keeps_real(1)):
            return _REAL_CONDITION(lock)  # a lock the lab cannot see, or the machinery's own condition
        return super().__new__(cls)

    def __init__(self, lock: Any = None) -> None:
        self.lab_name = _new_name("Condition")
        if lock is None:
            lock = RLock(f"{self.lab_name}.lock")
        super().__init__(lock)
        self._lab_lock: StandInLock = lock
        self.lab_footprint = writes("condition", self.lab_name) | lock.lab_footprint

    def wait(self, timeout: float | None = None) -> bool:
        """Release the lock, wait to be notified (or for the timeout), take the lock back; True if notified."""
        acting = _acting()
        if acting is None:
            return super().wait(timeout)
        run, me = acting
        scheduler, lock, raw = run.scheduler, self._lab_lock, _raw(self)
        if not self._is_owned():  # type: ignore[attr-defined]
            raise RuntimeError("cannot wait on un-acquired lock")
        scheduler.point(_timed(self.lab_footprint, timeout))
        waiter = _REAL_ALLOCATE_LOCK()
        waiter.acquire()
        raw._waiters.append(waiter)
        saved = lock._give_all(scheduler)
        detail: dict[str, Any] = {"lock": lock.lab_name}
        if timeout is not None:
            detail["timeout"] = timeout
        scheduler.record("condition.wait", self.lab_name, detail)

        def notified_and_free() -> bool:
            return not waiter.locked() and lock._free_for_me()

        def describe() -> str:
            return f"condition {self.lab_name!r} to be notified" if waiter.locked() else lock._describe()

        try:
            _wait(run, me, notified_and_free, describe, timeout)
        finally:
            notified = not waiter.locked()
            if not notified:
                with contextlib.suppress(ValueError):
                    raw._waiters.remove(waiter)
            lock._take_back(run, me, saved)
        if notified:
            scheduler.record("condition.wake", self.lab_name)
        else:
            scheduler.record("condition.timeout", self.lab_name, {"clock": run.clock})
        return notified

    def wait_for(self, predicate: Callable[[], Any], timeout: float | None = None) -> Any:
        """Wait until ``predicate()`` is true, as ``threading.Condition.wait_for`` does, on the virtual clock."""
        acting = _acting()
        if acting is None:
            return super().wait_for(predicate, timeout)
        run = acting[0]
        endtime: float | None = None
        waittime = timeout
        result = predicate()
        while not result:
            if waittime is not None:
                if endtime is None:
                    endtime = run.clock + waittime
                else:
                    waittime = endtime - run.clock
                    if waittime <= 0:
                        break
            self.wait(waittime)
            result = predicate()
        return result

    def notify(self, n: int = 1) -> None:
        """Wake up to ``n`` waiters; inside an actor, a scheduling point first."""
        acting = _acting()
        if acting is None:
            super().notify(n)
            return
        scheduler = acting[0].scheduler
        if not self._is_owned():  # type: ignore[attr-defined]
            raise RuntimeError("cannot notify on un-acquired lock")
        scheduler.point(writes("condition", self.lab_name))
        waiters = _raw(self)._waiters
        before = len(waiters)
        super().notify(n)
        scheduler.record("condition.notify", self.lab_name, {"woken": before - len(waiters)})

    def notify_all(self) -> None:
        """Wake every waiter."""
        self.notify(len(_raw(self)._waiters))

    def __repr__(self) -> str:
        return f"<lab stand-in Condition {self.lab_name!r} on {self._lab_lock.lab_name!r}>"
