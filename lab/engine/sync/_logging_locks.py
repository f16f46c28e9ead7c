"""logging's own locks, scheduler-aware for the length of a run: the module's lock and every handler's.

``logging`` makes its locks itself, at import (``logging._lock``) and in ``Handler.createLock``, so the stand-in
factories, which give the standard library real locks, never reach them. Most of what logging does under them is
its own code, with no scheduling point inside, but a handler's ``emit`` (and a formatter or filter it calls) may
be code under test: every line of it is a scheduling point, taken while the handler's real lock is held, and a
second actor logging through the same handler blocked on that lock where the scheduler could not see it (the run
ended HUNG). For one run each of them is a stand-in ``RLock`` in the same state (the module's lock, the lock of
each handler alive, the lock of each handler made during the run) is an :class:`InnerRLock`, so waiting for one
parks an actor, and the explorer orders two emits through one handler as it orders any two critical sections;
each is put back after (a handler made during the run gets a real lock of its own then). A lock held when the run
starts is left as it is.

An :class:`InnerRLock` is not a scheduling point of its own: logging takes its locks inside a call the lab does
not see into, which is one step up to its first scheduling point (a line of a handler under test), and a
stand-in's points there made every call of ``logger.info`` four steps more, each conflicting with the other
actor's (the opaque call writes the logging module): two loggers explored 1,920 runs at line granularity, not
20. Taking it writes it in the running step, so two steps that take one lock are ordered as a race; taking it
while another actor holds it (parked inside, at a line of ``emit``) parks the taker until it is given back. Giving
it up is a scheduling point, as a stand-in's release is (one step more per call).

The module's lock is quieter still (``quiet``): it guards logging's own bookkeeping (a logger's cache of enabled
levels, the tree of loggers), which runs no code under test, so no other actor can ever find it held; but whether a
call takes it at all depends on that cache, which outlives executions (the first run of a process fills it), and a
scheduling point or a footprint there made the first execution differ from the next. It only parks an actor that
finds it held (a logger class under test, made under it).
"""

from __future__ import annotations

import sys
import threading
import types
from collections.abc import Callable
from typing import Any

from lab.engine.core._footprint import writes
from lab.engine.sync._standard_base import _REAL_RLOCK, _acting, _wait

Saved = list[tuple[Any, str, object]]
"""Where each twin went and what it replaced: ``(namespace or object, name, the real object)``."""

_RLOCK_TYPE = type(_REAL_RLOCK())


class InnerRLock:
    """A real ``RLock`` that, inside an actor, parks the actor rather than its thread while another holds it, and
    writes itself in the step that takes or gives it up (see the module docstring)."""

    def __init__(self, name: str, *, quiet: bool = False) -> None:
        self.lab_name = name
        self._quiet = quiet  # no footprint and no scheduling point: only the parking (the module's lock)
        self._real: Any = _REAL_RLOCK()
        self._count = 0  # levels held, by whichever thread (only the holder changes it)
        self._holder = ""  # the thread holding it, by name, while held
        self._footprint = writes("lock", name)

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        acting = _acting()
        if acting is None:
            got = bool(self._real.acquire(blocking, timeout))
        else:
            run, me = acting
            got = bool(self._real.acquire(False))
            while not got and blocking:
                limit = None if timeout < 0 else timeout
                if not _wait(run, me, self._free, self._describe, limit):
                    return False
                got = bool(self._real.acquire(False))
            if got and not self._quiet:
                run.scheduler.touch(self._footprint)
                if self._count == 0:
                    run.scheduler.lock_taken(self.lab_name)  # what the holder does under it is guarded by it
        if got:
            self._count += 1
            if self._count == 1:
                self._holder = threading.current_thread().name
        return got

    def release(self) -> None:
        if self._real._is_owned() and self._count == 1 and not self._quiet:
            acting = _acting()
            if acting is not None and not acting[0].scheduler.aborted:
                # a scheduling point, as a stand-in's release is: what follows it is no longer guarded, and a
                # step opened by it is what the atomicity check takes it for
                acting[0].scheduler.point(self._footprint)
                acting[0].scheduler.lock_given(self.lab_name)
        if self._real._is_owned():
            self._count -= 1
            if self._count == 0:
                self._holder = ""
        self._real.release()  # not the holder: the standard library's own error

    __enter__ = acquire

    def __exit__(self, *_: object) -> None:
        self.release()

    def _free(self) -> bool:
        return self._count == 0

    def _describe(self) -> str:
        return f"logging's lock {self.lab_name}, held by {self._holder or 'nobody'}"

    def _is_owned(self) -> bool:
        return bool(self._real._is_owned())

    def _at_fork_reinit(self) -> None:
        self._real._at_fork_reinit()
        self._count, self._holder = 0, ""

    def __repr__(self) -> str:
        return f"<lab logging lock {self.lab_name!r} {'held by ' + self._holder if self._count else 'free'}>"


def _free(lock: object) -> bool:
    """True for a real ``RLock`` that nobody holds (taken and given back at once to find out)."""
    if type(lock) is not _RLOCK_TYPE:
        return False
    real: Any = lock
    if not real.acquire(False):
        return False
    real.release()
    return True


def rebind_logging_locks(saved: Saved) -> None:
    """Give logging's module lock and each live handler's lock a stand-in twin, and make ``Handler.createLock``
    give new handlers one; add to ``saved`` what to put back (handlers made later add theirs as they are made).
    Nothing when ``logging`` was never imported."""
    logging: Any = sys.modules.get("logging")
    if not isinstance(logging, types.ModuleType) or not hasattr(logging, "Handler"):
        return
    namespace = vars(logging)
    if _free(namespace.get("_lock")):
        saved.append((namespace, "_lock", namespace["_lock"]))
        namespace["_lock"] = InnerRLock("logging._lock", quiet=True)
    for number, ref in enumerate(list(getattr(logging, "_handlerList", ()))):
        handler = ref()
        lock = getattr(handler, "lock", None) if handler is not None else None
        if handler is not None and _free(lock):
            saved.append((handler, "lock", lock))
            handler.lock = InnerRLock(f"logging.handler#{number + 1}")
    handler_class = logging.Handler
    original = handler_class.__dict__["createLock"]
    saved.append((handler_class, "createLock", original))
    handler_class.createLock = _create_lock(saved, original)


def _create_lock(saved: Saved, original: Callable[[Any], None]) -> Callable[[Any], None]:
    """``Handler.createLock`` for the run: the standard library's (which registers the handler for a fork), then a
    stand-in in place of the real lock it made, which a real one of its own replaces after the run."""

    made = [0]

    def create_lock(handler: Any) -> None:
        original(handler)
        saved.append((handler, "lock", _REAL_RLOCK()))
        made[0] += 1
        handler.lock = InnerRLock(f"logging.handler@{made[0]}")

    return create_lock
