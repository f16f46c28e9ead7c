"""The stand-in for ``threading.RLock``: the one lock model (:mod:`lab.engine.sync._lock`), reentrant.

A reentrant acquisition by the holder is free for it (its gate is open), writes the lock as any acquisition does,
and counts; only the release of the last level gives the lock up, and an inner level's release commutes with
everything, as the holder's own release does. The lock underneath is a real ``_thread.RLock`` (each actor is its
own thread), so a real ``Condition`` over it outside actors works as the standard library's does.
"""

from __future__ import annotations

import threading
from typing import Any, ClassVar

from lab.engine.core._scheduler import Scheduler
from lab.engine.sync._lock_stand_in import StandInLock
from lab.engine.sync._standard_base import _REAL_RLOCK


class RLock(StandInLock):
    """The stand-in for ``threading.RLock()``: reentrant, on a real ``_thread.RLock``."""

    _label: ClassVar[str] = "RLock"
    _reentrant: ClassVar[bool] = True

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
        self._count, self._model.holder, self._model.by_actor = 0, None, False
        return count, self._real._release_save()

    def _acquire_restore(self, saved: tuple[int, Any]) -> None:
        count, state = saved
        self._real._acquire_restore(state)
        self._count, self._model.holder, self._model.by_actor = count, threading.current_thread().name, False

    def _real_acquire(self, blocking: bool, timeout: float) -> bool:
        return bool(self._real.acquire(blocking, timeout))

    def _real_release(self) -> None:
        if self._real._is_owned():
            self._count -= 1
            if self._count == 0:
                self._model.holder, self._model.by_actor = None, False
        self._real.release()

    def _note_taken(self, holder: str, *, by_actor: bool) -> None:
        self._count += 1
        if self._count == 1:
            self._model.holder, self._model.by_actor = holder, by_actor

    def _try_take(self, me: str) -> bool:
        if not self._real.acquire(False):
            return False
        self._note_taken(me, by_actor=True)
        return True

    def _owned(self) -> bool:
        return bool(self._real._is_owned())

    def _first_level(self) -> bool:
        return self._count == 1

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
        self._count, self._model.holder, self._model.by_actor = count, me, True
