"""Scheduler-aware stand-ins for the standard library's primitives, installed for the length of one run.

Why: the scheduler runs one actor at a time and passes a baton only at scheduling points. Code under test that takes
a plain ``threading.Lock`` (or waits on a ``threading.Event``, a ``queue.Queue``, or sleeps) blocks its *thread*,
outside the lab's view: if the lock is held by a parked actor, nobody ever hands that actor the baton again, and the
run ends HUNG at the watchdog although the program is correct. So while a scenario runs,
:func:`scheduler_aware_primitives` replaces ``threading.Lock``, ``RLock``, ``Condition``, ``Event``, ``Semaphore``,
``BoundedSemaphore``, ``Barrier``, ``queue.Queue``, ``LifoQueue``, ``PriorityQueue``, ``SimpleQueue``, and
``time.sleep``, ``time.monotonic`` and ``time.time`` with the stand-ins below, and puts the originals back afterwards,
even on error. The learner injects nothing.

Each stand-in decides per call. From an actor of the active run, every acquire, release, wait, notify, set, put and
get is a scheduling point (``scheduler.point(footprint)`` then ``scheduler.record(...)``, as the lab's own
primitives do), and waiting parks the actor with ``scheduler.block``, so a deadlock is reported at once with the
holders named (``lock 'Lock#2' held by b``). From any other thread (setup on the main thread, ``observe()`` after
the run) it behaves like the real primitive: the blocking, return values and error messages are the standard
library's own (the classes subclass the real ones, the locks wrap real locks). One deliberate difference,
shared with :class:`lab.engine.primitives.LabLock`: a non-actor that would wait *forever* for a lock held by an
actor gets a :class:`~lab.errors.ScheduleError` instead, since that actor is parked or gone and never releases it.

Who gets a stand-in: code outside the standard library and outside the lab's machinery. A factory called from a
standard-library module (``threading.Thread`` builds its ``Event``, ``queue`` its mutex, ``logging`` its locks) or
from the lab's engine, runner and transports returns the real primitive, so threads start, the scheduler keeps its
own locks, and the scripted transport's guard stays invisible. The sessions under study (``lab.sessions``,
``lab.mutants``) are code under test: a session built without ``lock=`` gets a stand-in.

Names are deterministic: objects made during setup are numbered per type in creation order (``Lock#1``,
``Lock#2``, ``Event#1``); objects made by an actor carry its name and a per-actor count (``Lock@fast#1``). A
``Condition()`` made without a lock owns ``Condition#1.lock``. Footprints are ``writes(kind, name)`` with kind
``lock``, ``condition``, ``event``, ``semaphore``, ``barrier``, ``queue``; read-only queries (``locked()``,
``is_set()``, ``qsize()``) add a read to the running step through ``scheduler.touch``.

Virtual time: each run has a clock starting at 0. ``time.sleep(s)`` in an actor is a scheduling point that lets the
others go first: the sleeper may run again once another actor has taken a step, or at once when no other actor can
run; on waking the clock reads at least the start of the sleep plus ``s``. No real time passes, and a sleep is no
way to order actors (the explorer may wake a sleeper after any step of the others). A wait with a timeout
(``Event.wait(5)``, ``Condition.wait(5)``, ``queue.get(timeout=5)``, ``Lock.acquire(timeout=5)``) returns as soon as
its condition holds, and times out only when no other actor can make progress, earliest deadline first (sleepers
included); the clock then moves to that deadline. A timeout of zero or less never waits. Inside actors,
``time.monotonic()`` and ``time.time()`` read the run's start (real) plus the virtual clock, so deadlines computed
with them agree with the sleeps (differences are deterministic, absolute values are not); ``perf_counter`` and the
``_ns`` variants stay real.

Limits: code that bound a name before the run (``from threading import Lock`` at import time, a default argument,
``field(default_factory=threading.Lock)``) keeps the original, except in the modules named by ``code``, whose
globals are patched too (the runner names the scenario's own module and its ``line_modules``). Objects made before
the run stay real. A ``Condition`` over a lock that is not a stand-in is a real condition. Threads started by the
code under test, ``Thread.join``, ``threading.Timer`` and ``concurrent.futures`` are not scheduled.
"""

from __future__ import annotations

import _thread
import contextlib
import math
import queue
import sys
import threading
import time
import types
from collections.abc import Callable, Iterable, Iterator
from typing import Any, ClassVar

from lab.engine.footprint import Footprint, writes
from lab.engine.scheduler import Scheduler
from lab.errors import ScheduleError

# The genuine articles, captured at import (before any run can have replaced them).
_REAL_ALLOCATE_LOCK = _thread.allocate_lock
_REAL_RLOCK = _thread.RLock
_REAL_LOCK_FACTORY = threading.Lock
_REAL_RLOCK_FACTORY = threading.RLock
_REAL_CONDITION = threading.Condition
_REAL_EVENT = threading.Event
_REAL_SEMAPHORE = threading.Semaphore
_REAL_BOUNDED_SEMAPHORE = threading.BoundedSemaphore
_REAL_BARRIER = threading.Barrier
_REAL_QUEUE = queue.Queue
_REAL_LIFO_QUEUE = queue.LifoQueue
_REAL_PRIORITY_QUEUE = queue.PriorityQueue
_REAL_SIMPLE_QUEUE = queue.SimpleQueue
_REAL_SLEEP = time.sleep
_REAL_MONOTONIC = time.monotonic
_REAL_TIME = time.time

_UNDER_TEST = ("lab.sessions", "lab.mutants")
"""Lab modules that are code under study, not machinery: they get stand-ins like a learner's code."""

_CALLS_ON_BEHALF = frozenset({"lab.engine.accesses"})
"""Lab modules that call a factory on behalf of the program (the instrumented code's runtime)."""

_CLOCK_WRITE: Footprint = writes("clock", "virtual")
_CLOCK_READ: Footprint = frozenset({("clock", "virtual", "r")})


class VirtualClock:
    """The run's virtual clock, as the context manager hands it out: seconds slept and timed out so far."""

    def __init__(self, run: _Run) -> None:
        self._run = run

    @property
    def seconds(self) -> float:
        """Virtual seconds since the run began (0.0 until an actor sleeps or a wait times out)."""
        return self._run.clock

    def __repr__(self) -> str:
        return f"<VirtualClock {self._run.clock:g} s>"


class _Run:
    """What one run's stand-ins share: the scheduler, the virtual clock, name counters and the timed waiters."""

    def __init__(self, scheduler: Scheduler) -> None:
        self.scheduler = scheduler
        self.clock = 0.0
        self.epoch_monotonic = _REAL_MONOTONIC()
        self.epoch_time = _REAL_TIME()
        self.timed: dict[str, _Timed] = {}
        self._made: dict[tuple[str, str], int] = {}

    def name(self, label: str) -> str:
        """A deterministic name: ``Lock#2`` (second lock made outside actors), ``Lock@fast#1`` (fast's first)."""
        who = self.scheduler.current() or ""
        number = self._made.get((who, label), 0) + 1
        self._made[(who, label)] = number
        return f"{label}#{number}" if not who else f"{label}@{who}#{number}"

    # The scheduler has no public way to ask "can anyone else go on?" or "how many steps so far?"; these two read
    # its private state, read-only, and only from the thread that holds the baton (the one deciding).

    def others_can_go(self, me: str) -> bool:
        """True when some other live actor could run, not counting any timeout firing."""
        for actor in self.scheduler._actors:
            if actor.name == me or actor.state == "done":
                continue
            waiting = actor.waiting
            if actor.state != "blocked" or waiting is None:
                return True
            if waiting.condition() if isinstance(waiting, _Timed) else waiting.ready():
                return True
        return False

    def steps(self) -> int:
        """How many decisions the scheduler has taken so far in this run."""
        return len(self.scheduler._decisions)

    def earliest(self, timed: _Timed) -> bool:
        """True when no other pending timed wait has an earlier deadline."""
        others = [other for other in self.timed.values() if other is not timed and not other.condition()]
        return all(timed.deadline <= other.deadline for other in others)


_ACTIVE: _Run | None = None


def _acting() -> tuple[_Run, str] | None:
    """The active run and the calling actor's name, or ``None`` when the caller is not an actor of a run."""
    run = _ACTIVE
    if run is None:
        return None
    me = run.scheduler.current()
    return None if me is None else (run, me)


def _new_name(label: str) -> str:
    run = _ACTIVE
    return run.name(label) if run is not None else f"{label}#outside-a-run"


def _caller_keeps_real(depth: int) -> bool:
    """True outside a run, or when the code calling (``depth`` frames up) is the standard library's or the lab's.

    The runtime of instrumented modules (:mod:`lab.engine.accesses`) calls on the program's behalf: look past it.
    """
    if _ACTIVE is None:
        return True
    frame: types.FrameType | None = sys._getframe(depth + 1)
    while frame is not None and frame.f_globals.get("__name__") in _CALLS_ON_BEHALF:
        frame = frame.f_back
    return frame is None or _is_machinery(frame.f_globals.get("__name__"))


def _is_machinery(module: object) -> bool:
    """True for a standard-library module, or a lab module that is not code under study."""
    if not isinstance(module, str):
        return False
    top = module.partition(".")[0]
    if top in sys.stdlib_module_names:
        return True
    if top != "lab":
        return False
    return not any(module == prefix or module.startswith(prefix + ".") for prefix in _UNDER_TEST)


# -- waiting -------------------------------------------------------------------------------------------------------


class _Until:
    """A plain wait: ready when ``condition()`` holds."""

    def __init__(self, condition: Callable[[], bool], describe: Callable[[], str]) -> None:
        self._condition, self._describe = condition, describe

    def ready(self) -> bool:
        return self._condition()

    def describe(self) -> str:
        return self._describe()


class _Timed:
    """A wait with a deadline: ready when ``condition()`` holds, or when nobody else can go on and it is due first."""

    def __init__(
        self, run: _Run, actor: str, condition: Callable[[], bool], describe: Callable[[], str], deadline: float
    ) -> None:
        self._run, self._actor = run, actor
        self.condition, self._describe = condition, describe
        self.deadline = deadline

    def ready(self) -> bool:
        if self.condition():
            return True
        return not self._run.others_can_go(self._actor) and self._run.earliest(self)

    def describe(self) -> str:
        return f"{self._describe()} (or its timeout at {self.deadline:g} s)"


def _wait(
    run: _Run,
    me: str,
    condition: Callable[[], bool],
    describe: Callable[[], str],
    timeout: float | None,
    *,
    always_yield: bool = False,
) -> bool:
    """Park the calling actor until ``condition()`` holds; with a timeout, False when it timed out (virtually).

    A timeout of zero or less does not wait at all (as the real primitives poll), unless ``always_yield``.
    """
    if condition():
        return True
    if timeout is None:
        run.scheduler.block(_Until(condition, describe))
        return True
    if timeout <= 0 and not always_yield:
        return False
    timed = _Timed(run, me, condition, describe, run.clock + max(timeout, 0.0))
    run.timed[me] = timed
    try:
        run.scheduler.block(timed)
    finally:
        run.timed.pop(me, None)
    if condition():
        return True
    run.clock = max(run.clock, timed.deadline)
    return False


# -- locks ---------------------------------------------------------------------------------------------------------


class _StandInLock:
    """What ``Lock`` and ``RLock`` share: the actor/real dispatch, the trace, the holder named in deadlock reports."""

    _label: ClassVar[str] = "lock"

    def __init__(self, name: str | None = None) -> None:
        self.lab_name = name or _new_name(self._label)
        self.lab_footprint = writes("lock", self.lab_name)
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
            # Outside the LabError tree on purpose, here and below: a stand-in raises what the primitive it replaces
            # raises, with its message, since the code under test was written against the standard library.
            raise ValueError("can't specify a timeout for a non-blocking call")
        if timeout < 0 and timeout != -1:
            raise ValueError("timeout value must be positive")
        scheduler = run.scheduler
        scheduler.point(self.lab_footprint)
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
        if self._last_level():
            scheduler.lock_given(self.lab_name)
        if scheduler.aborted:
            self._real_release()
            return
        try:
            scheduler.point(self.lab_footprint)
        finally:  # a run stopped at this point still frees the lock, so nobody is left holding it
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


def _lock_factory() -> Any:
    """What ``threading.Lock`` is during a run: a stand-in for code under test, a real lock for everyone else."""
    if _caller_keeps_real(1):
        return _REAL_ALLOCATE_LOCK()
    return Lock()


def _rlock_factory(*args: Any, **kwargs: Any) -> Any:
    """What ``threading.RLock`` is during a run."""
    if args or kwargs or _caller_keeps_real(1):
        return _REAL_RLOCK_FACTORY(*args, **kwargs)
    return RLock()


# -- conditions, events, semaphores, barriers ----------------------------------------------------------------------


class Condition(_REAL_CONDITION):
    """The stand-in for ``threading.Condition``: waits and notifies are scheduling points inside actors."""

    def __new__(cls, lock: Any = None) -> Any:
        if cls is Condition and ((lock is not None and not isinstance(lock, _StandInLock)) or _caller_keeps_real(1)):
            return _REAL_CONDITION(lock)  # a lock the lab cannot see, or the machinery's own condition
        return super().__new__(cls)

    def __init__(self, lock: Any = None) -> None:
        self.lab_name = _new_name("Condition")
        if lock is None:
            lock = RLock(f"{self.lab_name}.lock")
        super().__init__(lock)
        self._lab_lock: _StandInLock = lock
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
        scheduler.point(self.lab_footprint)
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


class Event(_REAL_EVENT):
    """The stand-in for ``threading.Event``: set, clear and wait are scheduling points inside actors."""

    def __new__(cls) -> Any:
        if cls is Event and _caller_keeps_real(1):
            return _REAL_EVENT()
        return super().__new__(cls)

    def __init__(self) -> None:
        super().__init__()
        self.lab_name = _new_name("Event")
        self.lab_footprint = writes("event", self.lab_name)

    def is_set(self) -> bool:
        """True once set (a read of the event, for the explorer)."""
        _touch(("event", self.lab_name, "r"))
        return bool(_raw(self)._flag)

    def set(self) -> None:
        """Set the flag and wake every waiter."""
        self._change("event.set", super().set)

    def clear(self) -> None:
        """Reset the flag."""
        self._change("event.clear", super().clear)

    def _change(self, op: str, change: Callable[[], None]) -> None:
        acting = _acting()
        if acting is None:
            change()
            return
        acting[0].scheduler.point(self.lab_footprint)
        change()
        acting[0].scheduler.record(op, self.lab_name)

    def wait(self, timeout: float | None = None) -> bool:
        """Return once the flag is set (True), or False when the timeout passed first."""
        acting = _acting()
        if acting is None:
            return super().wait(timeout)
        run, me = acting
        raw = _raw(self)
        run.scheduler.point(self.lab_footprint)
        if raw._flag:
            run.scheduler.record("event.wait", self.lab_name, {"set": True})
            return True
        run.scheduler.record("event.wait", self.lab_name, {"set": False})
        signaled = _wait(run, me, lambda: bool(raw._flag), lambda: f"event {self.lab_name!r} to be set", timeout)
        if signaled:
            run.scheduler.record("event.wake", self.lab_name)
        else:
            run.scheduler.record("event.timeout", self.lab_name, {"clock": run.clock})
        return signaled

    def __repr__(self) -> str:
        return f"<lab stand-in Event {self.lab_name!r} {'set' if _raw(self)._flag else 'unset'}>"


class Semaphore(_REAL_SEMAPHORE):
    """The stand-in for ``threading.Semaphore``: acquire and release are scheduling points inside actors."""

    _label: ClassVar[str] = "Semaphore"
    _real_class: ClassVar[type[Any]] = _REAL_SEMAPHORE

    def __new__(cls, value: int = 1) -> Any:
        if cls in (Semaphore, BoundedSemaphore) and _caller_keeps_real(1):
            return cls._real_class(value)
        return super().__new__(cls)

    def __init__(self, value: int = 1) -> None:
        # threading.BoundedSemaphore.__init__ calls Semaphore.__init__ through the module global, which is this
        # class during a run: call the real one by name instead.
        _REAL_SEMAPHORE.__init__(self, value)
        self.lab_name = _new_name(self._label)
        self.lab_footprint = writes("semaphore", self.lab_name)

    def acquire(self, blocking: bool = True, timeout: float | None = None) -> bool:
        """Take one unit, waiting while there is none (the standard library's semantics)."""
        acting = _acting()
        if acting is None:
            return super().acquire(blocking, timeout)
        if not blocking and timeout is not None:
            raise ValueError("can't specify timeout for non-blocking acquire")
        run, me = acting
        raw = _raw(self)
        run.scheduler.point(self.lab_footprint)
        if raw._value == 0:
            if not blocking:
                run.scheduler.record("semaphore.busy", self.lab_name)
                return False
            run.scheduler.record("semaphore.wait", self.lab_name)
            describe = lambda: f"semaphore {self.lab_name!r} to be released"  # noqa: E731
            if not _wait(run, me, lambda: raw._value > 0, describe, timeout):
                run.scheduler.record("semaphore.timeout", self.lab_name, {"clock": run.clock})
                return False
        with raw._cond:
            raw._value -= 1
        run.scheduler.record("semaphore.acquire", self.lab_name, {"value": raw._value})
        return True

    __enter__ = acquire

    def release(self, n: int = 1) -> None:
        """Give ``n`` units back (a bounded semaphore refuses to go above its initial value)."""
        acting = _acting()
        if acting is None:
            super().release(n)
            return
        if n < 1:
            raise ValueError("n must be one or more")
        acting[0].scheduler.point(self.lab_footprint)
        super().release(n)
        acting[0].scheduler.record("semaphore.release", self.lab_name, {"value": _raw(self)._value})

    def __exit__(self, *exc_info: object) -> None:
        self.release()

    def __repr__(self) -> str:
        return f"<lab stand-in {self._label} {self.lab_name!r} value={_raw(self)._value}>"


class BoundedSemaphore(Semaphore, _REAL_BOUNDED_SEMAPHORE):
    """The stand-in for ``threading.BoundedSemaphore``."""

    _label: ClassVar[str] = "BoundedSemaphore"
    _real_class: ClassVar[type[Any]] = _REAL_BOUNDED_SEMAPHORE

    def __init__(self, value: int = 1) -> None:
        super().__init__(value)
        _raw(self)._initial_value = value


class Barrier(_REAL_BARRIER):
    """The stand-in for ``threading.Barrier``: ``wait`` is a scheduling point inside actors, and parks them."""

    def __new__(cls, parties: int, action: Callable[[], None] | None = None, timeout: float | None = None) -> Any:
        if cls is Barrier and _caller_keeps_real(1):
            return _REAL_BARRIER(parties, action, timeout)
        return super().__new__(cls)

    def __init__(self, parties: int, action: Callable[[], None] | None = None, timeout: float | None = None) -> None:
        super().__init__(parties, action, timeout)
        self.lab_name = _new_name("Barrier")
        self.lab_footprint = writes("barrier", self.lab_name)

    def wait(self, timeout: float | None = None) -> int:
        """Arrive and wait for the other parties, as ``threading.Barrier.wait``; returns the arrival index."""
        acting = _acting()
        if acting is None:
            return int(super().wait(timeout))
        run, me = acting
        raw = _raw(self)
        scheduler = run.scheduler
        if timeout is None:
            timeout = raw._timeout
        scheduler.point(self.lab_footprint)
        if raw._state in (-1, 1):  # draining or resetting: wait until done, as threading's _enter does
            _wait(run, me, lambda: raw._state not in (-1, 1), lambda: f"barrier {self.lab_name!r} to drain", None)
        if raw._state < 0:
            scheduler.record("barrier.broken", self.lab_name)
            raise threading.BrokenBarrierError
        index: int = raw._count
        raw._count += 1
        scheduler.record("barrier.wait", self.lab_name, {"arrived": index + 1, "parties": raw._parties})
        try:
            if index + 1 == raw._parties:
                self._trip(raw)
            else:
                describe = lambda: f"barrier {self.lab_name!r} has {raw._count} of {raw._parties} parties"  # noqa: E731
                if not _wait(run, me, lambda: raw._state != 0, describe, timeout):
                    with raw._cond:
                        raw._break()
                    scheduler.record("barrier.timeout", self.lab_name, {"clock": run.clock})
                    raise threading.BrokenBarrierError
                if raw._state < 0:
                    scheduler.record("barrier.broken", self.lab_name)
                    raise threading.BrokenBarrierError
                scheduler.record("barrier.pass", self.lab_name)
            return index
        finally:
            raw._count -= 1
            with raw._cond:
                raw._exit()

    def _trip(self, raw: Any) -> None:
        """Run the action (outside the barrier's real lock: it may take scheduling points), then release all."""
        try:
            if raw._action:
                raw._action()
            with raw._cond:
                raw._state = 1
                raw._cond.notify_all()
        except BaseException:
            with raw._cond:
                raw._break()
            raise

    def reset(self) -> None:
        """Return to the initial state; parties waiting now get ``BrokenBarrierError``."""
        self._change("barrier.reset", super().reset)

    def abort(self) -> None:
        """Break the barrier: parties waiting now, and later, get ``BrokenBarrierError``."""
        self._change("barrier.abort", super().abort)

    def _change(self, op: str, change: Callable[[], None]) -> None:
        acting = _acting()
        if acting is None:
            change()
            return
        acting[0].scheduler.point(self.lab_footprint)
        change()
        acting[0].scheduler.record(op, self.lab_name)

    def __repr__(self) -> str:
        raw = _raw(self)
        return f"<lab stand-in Barrier {self.lab_name!r} {raw._count}/{raw._parties}>"


def _raw(obj: object) -> Any:
    """The standard library object's private state (``_flag``, ``_value``, ``_waiters``...), which the stubs omit."""
    return obj


def _touch(entry: tuple[str, str, str]) -> None:
    acting = _acting()
    if acting is not None:
        acting[0].scheduler.touch(frozenset({entry}))


# -- queues --------------------------------------------------------------------------------------------------------


class _StandInQueue(_REAL_QUEUE):  # type: ignore[type-arg]
    """Scheduling points for ``put``, ``get``, ``task_done`` and ``join``; the storage is the real queue class's."""

    _label: ClassVar[str] = "Queue"
    _real_class: ClassVar[type[Any]] = _REAL_QUEUE

    def __new__(cls, maxsize: int = 0) -> Any:
        if cls in _QUEUE_STAND_INS and _caller_keeps_real(1):
            return cls._real_class(maxsize)
        return super().__new__(cls)

    def __init__(self, maxsize: int = 0) -> None:
        super().__init__(maxsize)
        self.lab_name = _new_name(self._label)
        self.lab_footprint = writes("queue", self.lab_name)

    def put(self, item: Any, block: bool = True, timeout: float | None = None) -> None:
        """Put ``item``, waiting for room in a bounded queue (raises ``queue.Full`` when it cannot)."""
        acting = _acting()
        if acting is None:
            super().put(item, block, timeout)
            return
        run, me = acting
        if self.maxsize > 0 and block and timeout is not None and timeout < 0:
            raise ValueError("'timeout' must be a non-negative number")
        run.scheduler.point(self.lab_footprint)
        if self.maxsize > 0 and self._qsize() >= self.maxsize:
            if not block:
                run.scheduler.record("queue.full", self.lab_name)
                raise queue.Full
            run.scheduler.record("queue.wait", self.lab_name, {"for": "room"})
            describe = lambda: f"queue {self.lab_name!r} to have room"  # noqa: E731
            if not _wait(run, me, lambda: self._qsize() < self.maxsize, describe, timeout):
                run.scheduler.record("queue.timeout", self.lab_name, {"clock": run.clock})
                raise queue.Full
        with self.mutex:
            self._put(item)
            self.unfinished_tasks += 1
            self.not_empty.notify()
        run.scheduler.record("queue.put", self.lab_name, {"size": self._qsize()})

    def get(self, block: bool = True, timeout: float | None = None) -> Any:
        """Take an item, waiting for one (raises ``queue.Empty`` when it cannot)."""
        acting = _acting()
        if acting is None:
            return super().get(block, timeout)
        run, me = acting
        if block and timeout is not None and timeout < 0:
            raise ValueError("'timeout' must be a non-negative number")
        run.scheduler.point(self.lab_footprint)
        if not self._qsize():
            if not block:
                run.scheduler.record("queue.empty", self.lab_name)
                raise queue.Empty
            run.scheduler.record("queue.wait", self.lab_name, {"for": "an item"})
            describe = lambda: f"queue {self.lab_name!r} to get an item"  # noqa: E731
            if not _wait(run, me, lambda: self._qsize() > 0, describe, timeout):
                run.scheduler.record("queue.timeout", self.lab_name, {"clock": run.clock})
                raise queue.Empty
        with self.mutex:
            item = self._get()
            self.not_full.notify()
        run.scheduler.record("queue.get", self.lab_name, {"size": self._qsize()})
        return item

    def task_done(self) -> None:
        """Mark one item as processed (``ValueError`` when called more times than items were put)."""
        acting = _acting()
        if acting is None:
            super().task_done()
            return
        acting[0].scheduler.point(self.lab_footprint)
        super().task_done()
        acting[0].scheduler.record("queue.task_done", self.lab_name, {"unfinished": self.unfinished_tasks})

    def join(self) -> None:
        """Wait until every item put has been marked done."""
        acting = _acting()
        if acting is None:
            super().join()
            return
        run, me = acting
        run.scheduler.point(self.lab_footprint)
        run.scheduler.record("queue.join", self.lab_name, {"unfinished": self.unfinished_tasks})
        describe = lambda: f"queue {self.lab_name!r} to finish {self.unfinished_tasks} task(s)"  # noqa: E731
        if self.unfinished_tasks:
            _wait(run, me, lambda: self.unfinished_tasks == 0, describe, None)
            run.scheduler.record("queue.joined", self.lab_name)

    def qsize(self) -> int:
        """How many items are queued (a read of the queue, for the explorer)."""
        _touch(("queue", self.lab_name, "r"))
        return super().qsize()

    def empty(self) -> bool:
        """True when no item is queued."""
        _touch(("queue", self.lab_name, "r"))
        return super().empty()

    def full(self) -> bool:
        """True when a bounded queue has no room."""
        _touch(("queue", self.lab_name, "r"))
        return super().full()

    def __repr__(self) -> str:
        return f"<lab stand-in {self._label} {self.lab_name!r} size={self._qsize()}>"


class Queue(_StandInQueue):
    """The stand-in for ``queue.Queue``."""


class LifoQueue(_StandInQueue, _REAL_LIFO_QUEUE):  # type: ignore[type-arg]
    """The stand-in for ``queue.LifoQueue``."""

    _label: ClassVar[str] = "LifoQueue"
    _real_class: ClassVar[type[Any]] = _REAL_LIFO_QUEUE


class PriorityQueue(_StandInQueue, _REAL_PRIORITY_QUEUE):  # type: ignore[type-arg]
    """The stand-in for ``queue.PriorityQueue``."""

    _label: ClassVar[str] = "PriorityQueue"
    _real_class: ClassVar[type[Any]] = _REAL_PRIORITY_QUEUE


_QUEUE_STAND_INS = (Queue, LifoQueue, PriorityQueue)


class SimpleQueue(_REAL_SIMPLE_QUEUE):  # type: ignore[type-arg]
    """The stand-in for ``queue.SimpleQueue`` (unbounded: only ``get`` waits)."""

    def __new__(cls) -> Any:
        if cls is SimpleQueue and _caller_keeps_real(1):
            return _REAL_SIMPLE_QUEUE()
        return super().__new__(cls)

    def __init__(self) -> None:
        self.lab_name = _new_name("SimpleQueue")
        self.lab_footprint = writes("queue", self.lab_name)

    def put(self, item: Any, block: bool = True, timeout: float | None = None) -> None:
        """Put ``item`` (never waits)."""
        acting = _acting()
        if acting is None:
            super().put(item, block, timeout)
            return
        acting[0].scheduler.point(self.lab_footprint)
        super().put(item)
        acting[0].scheduler.record("queue.put", self.lab_name, {"size": super().qsize()})

    def put_nowait(self, item: Any) -> None:
        """Put ``item``."""
        self.put(item, block=False)

    def get(self, block: bool = True, timeout: float | None = None) -> Any:
        """Take an item, waiting for one (raises ``queue.Empty`` when it cannot)."""
        acting = _acting()
        if acting is None:
            return super().get(block, timeout)
        run, me = acting
        if block and timeout is not None and timeout < 0:
            raise ValueError("'timeout' must be a non-negative number")
        run.scheduler.point(self.lab_footprint)
        if not super().qsize():
            if not block:
                run.scheduler.record("queue.empty", self.lab_name)
                raise queue.Empty
            run.scheduler.record("queue.wait", self.lab_name, {"for": "an item"})
            describe = lambda: f"queue {self.lab_name!r} to get an item"  # noqa: E731
            if not _wait(run, me, lambda: _REAL_SIMPLE_QUEUE.qsize(self) > 0, describe, timeout):
                run.scheduler.record("queue.timeout", self.lab_name, {"clock": run.clock})
                raise queue.Empty
        item = super().get(False)
        run.scheduler.record("queue.get", self.lab_name, {"size": super().qsize()})
        return item

    def get_nowait(self) -> Any:
        """Take an item or raise ``queue.Empty``."""
        return self.get(False)

    def qsize(self) -> int:
        """How many items are queued (a read of the queue, for the explorer)."""
        _touch(("queue", self.lab_name, "r"))
        return super().qsize()

    def empty(self) -> bool:
        """True when no item is queued."""
        _touch(("queue", self.lab_name, "r"))
        return super().empty()

    def __repr__(self) -> str:
        return f"<lab stand-in SimpleQueue {self.lab_name!r} size={super().qsize()}>"


# -- time ----------------------------------------------------------------------------------------------------------


def _sleep(seconds: float) -> None:
    """What ``time.sleep`` is during a run: virtual inside actors (no real waiting), real everywhere else."""
    acting = _acting()
    if acting is None:
        _REAL_SLEEP(seconds)
        return
    if isinstance(seconds, bool) or not isinstance(seconds, int | float):
        raise TypeError(f"'{type(seconds).__name__}' object cannot be interpreted as an integer")
    if math.isnan(seconds):
        raise ValueError("Invalid value NaN (not a number)")
    if seconds < 0:
        raise ValueError("sleep length must be non-negative")
    run, me = acting
    scheduler = run.scheduler
    scheduler.point(_CLOCK_WRITE)
    start, steps = run.clock, run.steps()
    scheduler.record("sleep", "clock", {"seconds": float(seconds)})
    _wait(run, me, lambda: run.steps() > steps, lambda: "the clock", float(seconds), always_yield=True)
    run.clock = max(run.clock, start + float(seconds))
    scheduler.record("wake", "clock", {"clock": run.clock})


def _monotonic() -> float:
    """What ``time.monotonic`` is during a run: inside actors, the run's real start plus the virtual clock."""
    acting = _acting()
    if acting is None:
        return _REAL_MONOTONIC()
    run = acting[0]
    run.scheduler.touch(_CLOCK_READ)
    return run.epoch_monotonic + run.clock


def _time() -> float:
    """What ``time.time`` is during a run: inside actors, the run's real start plus the virtual clock."""
    acting = _acting()
    if acting is None:
        return _REAL_TIME()
    run = acting[0]
    run.scheduler.touch(_CLOCK_READ)
    return run.epoch_time + run.clock


# -- installing ----------------------------------------------------------------------------------------------------

_REPLACEMENTS: tuple[tuple[types.ModuleType, str, object], ...] = (
    (threading, "Lock", _lock_factory),
    (threading, "RLock", _rlock_factory),
    (threading, "Condition", Condition),
    (threading, "Event", Event),
    (threading, "Semaphore", Semaphore),
    (threading, "BoundedSemaphore", BoundedSemaphore),
    (threading, "Barrier", Barrier),
    (queue, "Queue", Queue),
    (queue, "LifoQueue", LifoQueue),
    (queue, "PriorityQueue", PriorityQueue),
    (queue, "SimpleQueue", SimpleQueue),
    (time, "sleep", _sleep),
    (time, "monotonic", _monotonic),
    (time, "time", _time),
)


@contextlib.contextmanager
def scheduler_aware_primitives(scheduler: Scheduler, *, code: Iterable[object] = ()) -> Iterator[VirtualClock]:
    """Make the standard library's primitives scheduler-aware for ``scheduler``'s run; restore them on the way out.

    Wrap the world's setup and ``scheduler.run()`` in it. ``code`` names code under test whose module globals
    should see the stand-ins too, for names bound before the run (``from threading import Lock``): module names,
    modules, or classes and functions (their defining module). Yields the run's :class:`VirtualClock`.
    """
    global _ACTIVE
    if _ACTIVE is not None:
        raise ScheduleError("the standard primitives are already scheduler-aware for another run in this process")
    run = _Run(scheduler)
    saved: list[tuple[Any, str, object]] = []
    try:
        originals: dict[int, object] = {}
        for owner, attribute, replacement in _REPLACEMENTS:
            current = getattr(owner, attribute)
            originals[id(current)] = replacement
            saved.append((owner, attribute, current))
            setattr(owner, attribute, replacement)
        for namespace in _namespaces(code):
            for attribute, value in list(namespace.items()):
                replacement = originals.get(id(value))
                if replacement is not None and any(value is old for _, _, old in saved):
                    saved.append((namespace, attribute, value))
                    namespace[attribute] = replacement
        _ACTIVE = run
        yield VirtualClock(run)
    finally:
        _ACTIVE = None
        for owner, attribute, value in reversed(saved):
            if isinstance(owner, dict):
                owner[attribute] = value
            else:
                setattr(owner, attribute, value)


def _namespaces(code: Iterable[object]) -> list[dict[str, Any]]:
    """The module globals of each item of ``code`` (a module name, module, class or function), machinery left out."""
    found: list[dict[str, Any]] = []
    for item in code:
        namespace: dict[str, Any] | None = None
        if isinstance(item, str):
            module = sys.modules.get(item)
            namespace = vars(module) if module is not None else None
        elif isinstance(item, types.ModuleType):
            namespace = vars(item)
        elif isinstance(item, types.FunctionType):
            namespace = item.__globals__
        elif isinstance(item, type):
            functions = [v for v in vars(item).values() if isinstance(v, types.FunctionType)]
            own = [f for f in functions if f.__module__ == item.__module__]
            module = sys.modules.get(item.__module__)
            namespace = own[0].__globals__ if own else (vars(module) if module is not None else None)
        if namespace is None or _is_machinery(namespace.get("__name__")) or any(namespace is n for n in found):
            continue
        found.append(namespace)
    return found


__all__ = [
    "VirtualClock",
    "scheduler_aware_primitives",
]
