"""Actor threads kept across runs: starting a thread costs about 130 us, and milliseconds whenever the start waits
for a CPU, and an exploration runs thousands of schedules.

Each pooled thread waits on one lock, its *baton*. The scheduler hands a run's actor a worker and uses the worker's
baton as the actor's own, so the first handoff to an actor and every later one are the same single lock release: no
thread wakes up only to wait again. All of them end when the process exits; in a forked child the pool starts empty.

A reused thread must look fresh to the program it runs: every execution is a new program, whose actors start on new
threads in real life. Two kinds of state outlive a task on a kept thread. ``contextvars`` values: the scheduler runs
each actor's body in a new, empty :class:`contextvars.Context` (what a new thread starts with). ``threading.local``
values: CPython keeps each thread's share of every ``threading.local`` in that thread's state dict (one entry per
local the thread touched), so :class:`ThreadState` drops the entries an execution added, as the thread's end would
(the values die then, their ``__del__`` runs, weak references to them clear). Both cost about a microsecond per
actor, against the tens of microseconds a new thread costs, so the pool stays.
"""

from __future__ import annotations

import _thread
import atexit
import contextlib
import ctypes
import os
import threading
from collections.abc import Callable

_get_state_dict = ctypes.pythonapi.PyThreadState_GetDict
_get_state_dict.restype = ctypes.c_void_p  # a borrowed reference: restype py_object would steal it (and crash)
_get_state_dict.argtypes = []


def _state_dict() -> dict[object, object]:
    """The calling thread's state dict (``PyThreadState_GetDict``), as a new reference."""
    state: dict[object, object] = ctypes.cast(_get_state_dict(), ctypes.py_object).value
    return state


_FORGET_ROUNDS = 8


class ThreadState:
    """The calling thread's state dict, and what was in it when an execution's actor began on this thread.

    :meth:`forget_new` deletes every entry added since (the actor's ``threading.local`` shares, and any other
    per-thread cache the program's code left: a new thread has none of them). Entries present at the start are the
    lab's own (the scheduler's ``local.actor``, the line tracer's), set before the body runs, and stay. Keys are
    only tested for membership: they spell addresses, and nothing recorded may depend on them.
    """

    __slots__ = ("_before", "_dict")

    def __init__(self) -> None:
        self._dict: dict[object, object] = _state_dict()
        self._before = frozenset(self._dict)

    def forget_new(self) -> None:
        """Drop what the execution added to this thread's state (in this thread: finalizers run here, now)."""
        state, before = self._dict, self._before
        for _ in range(_FORGET_ROUNDS):  # a finalizer that ran may itself have touched a thread-local: again
            if len(state) == len(before) and before.issuperset(state):
                return
            for key in [key for key in state if key not in before]:
                state.pop(key, None)  # the value may be a local's share: its contents die here


class Worker:
    """A pooled thread: each time its baton is released it runs the task it was given, once, then goes idle."""

    def __init__(self, pool: ActorPool) -> None:
        self._pool = pool
        self.baton = _thread.allocate_lock()
        self.baton.acquire()  # held whenever the thread must not run
        self._task: Callable[[], None] | None = None
        self.thread = threading.Thread(target=self._loop, name="lab-actor", daemon=True)
        self.thread.start()

    def assign(self, name: str, task: Callable[[], None]) -> None:
        """Give the worker its next task; it starts when the baton is released (by the scheduler's handoff)."""
        self._task = task
        self.thread.name = name

    def stop(self) -> None:
        """End the thread (it is idle: nobody else holds or releases its baton)."""
        self._task = None
        self.baton.release()

    def _loop(self) -> None:
        try:
            while True:
                self.baton.acquire()
                task = self._task
                if task is None:
                    return
                with contextlib.suppress(BaseException):  # a task reports its own errors; an abort ends here
                    task()
                # let go of the task while idle: it holds its run's scheduler, and with it the whole run's books
                task = self._task = None
                self.thread.name = "lab-actor"
                self._pool.put_back(self)
        except BaseException:  # an abort that arrived between two tasks: this thread is done, not the lab
            return


class ActorPool:
    """Idle actor threads, kept across runs, schedules and scenarios."""

    def __init__(self) -> None:
        self._idle: list[Worker] = []
        self._lock = _thread.allocate_lock()

    def take(self) -> Worker:
        """An idle worker (a new one when none is idle); its baton is held."""
        with self._lock:
            while self._idle:
                worker = self._idle.pop()
                if worker.thread.is_alive():
                    return worker
        return Worker(self)

    def put_back(self, worker: Worker) -> None:
        """A worker whose task ended is idle again."""
        with self._lock:
            self._idle.append(worker)

    def idle_threads(self) -> list[threading.Thread]:
        """The idle threads, for tests that check reuse."""
        with self._lock:
            return [worker.thread for worker in self._idle]

    def shutdown(self) -> None:
        """End every idle thread (at exit; a thread still running an actor ends with its task)."""
        with self._lock:
            idle, self._idle = self._idle, []
        for worker in idle:
            worker.stop()
        for worker in idle:
            worker.thread.join(1.0)

    def forget_after_fork(self) -> None:
        """In a forked child: the parent's idle threads were not copied, so none of them can be handed work."""
        self._idle = []
        self._lock = _thread.allocate_lock()


ACTOR_POOL = ActorPool()
atexit.register(ACTOR_POOL.shutdown)
os.register_at_fork(after_in_child=ACTOR_POOL.forget_after_fork)
