"""The end of a run: waiting for it, the watchdog for an actor blocked outside the lab, and unwinding every actor
that did not end, one at a time, so that no thread of the run survives it unnoticed.

The scheduler sees every scheduling point, so a deadlock is found at once (:mod:`lab.engine.core._handoff`); the one
thing it cannot see is an actor blocked in code outside the lab (a real socket, a real lock). The thread that
started the run waits for its end in slices, and when the trace has not grown for the watchdog's time the run is
HUNG, with the stuck actor's stack. Then every unfinished actor is unwound: a parked one by releasing its baton
(it wakes, sees the abort and raises :class:`~lab.engine.core._actor._Aborted`), the one stuck outside the lab by
an asynchronous exception; one that does not end within the grace period is reported as leaked. An actor stopped
for taking too many scheduling points is parked on its baton like the others (it is inside the lab), so it is
woken the same way, not interrupted: an asynchronous exception cannot reach a thread blocked on a lock.
"""

from __future__ import annotations

import _thread
import contextlib
import ctypes
import sys
import threading
import time
import traceback

from lab.engine.core._actor import _Aborted
from lab.engine.core._run import BlockedActor, RunStatus
from lab.engine.core._state import RunState

DEFAULT_WATCHDOG_SECONDS = 10.0
"""How long a run may make no progress (no trace event) before it is HUNG."""

LEAK_GRACE_SECONDS = 2.0
"""How long an unwinding actor may take to end before it is reported as leaked."""


class Watchdog(RunState):
    """Waiting for the run's end, declaring a hang, and unwinding the actors that did not end."""

    def _wait_until_finished(self) -> tuple[str, tuple[str, ...]]:
        """Wait for the run to end; on a hang, capture the stuck actor's stack. Then make sure no thread survives."""
        hang_stack = ""
        progress, since = -1, time.monotonic()
        slice_seconds = max(min(self._watchdog / 4, 0.25), 0.005)
        while not self._finished.acquire(timeout=slice_seconds):
            now = time.monotonic()
            if len(self._trace) != progress:
                progress, since = len(self._trace), now
            elif now - since >= self._watchdog:
                hang_stack = self._declare_hang()
                break
        return hang_stack, self._stop_all()

    def _declare_hang(self) -> str:
        stuck = self._current
        self._status = RunStatus.HUNG
        self._outside = True
        name = stuck.name if stuck is not None else "?"
        self.record("hang", detail={"actor": name, "watchdog_seconds": self._watchdog}, actor="lab")
        self._blocked_report = (BlockedActor(name, f"blocked outside the lab's primitives for {self._watchdog:g} s"),)
        self._problem = f"actor {name!r} made no progress for {self._watchdog:g} s, blocked outside the lab"
        frame = None
        if stuck is not None and stuck.thread is not None and stuck.thread.ident is not None:
            frame = sys._current_frames().get(stuck.thread.ident)
        return "".join(traceback.format_stack(frame)) if frame is not None else ""

    def _stop_all(self) -> tuple[str, ...]:
        """Unwind every unfinished actor, one at a time, so that no two run at once even while dying."""
        self._aborted = True
        self._steps.close()
        leaked: list[str] = []
        for actor in self._actors:
            thread = actor.thread
            if thread is None or not actor.done.locked():
                continue
            if actor is self._current and self._outside:  # not parked on its baton: interrupt it where it is
                _raise_in_thread(thread, _Aborted)
            elif actor.baton is not None:
                _release(actor.baton)
            if actor.done.acquire(timeout=self._leak_grace):
                actor.done.release()
            else:
                leaked.append(actor.name)
        return tuple(leaked)


def _release(baton: _thread.LockType) -> None:
    with contextlib.suppress(RuntimeError):  # already released: the actor is about to run and will see the abort
        baton.release()


def _raise_in_thread(thread: threading.Thread, exception: type[BaseException]) -> None:
    """Ask CPython to raise ``exception`` in ``thread`` at its next bytecode (not while it sits in C code)."""
    if thread.ident is not None:
        ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread.ident), ctypes.py_object(exception))
