"""Scheduler-aware stand-ins for the standard library's primitives, installed for the length of one run.

This module installs them; each stand-in lives with the one model of its primitive, which the lab's own primitive
of that kind shares (:mod:`lab.engine.sync._lock`, ``_rlock``, ``_condition``, ``_event``, ``_barrier``,
``_semaphore``, ``_queue``; virtual time in ``_sleep``), on what they share in :mod:`lab.engine.sync._standard_base`.

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
library's own (the classes subclass the real ones, the locks wrap real locks). So is a misuse, from any thread: a
``ValueError`` or ``RuntimeError`` as the real primitive raises, outside the lab's ``LabError`` tree on purpose,
since the code under test was written against the standard library. One deliberate difference,
shared with :class:`lab.engine.sync._lock.LabLock`: a non-actor that would wait *forever* for a lock held by an
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

Virtual time (:mod:`lab.engine.sync._sleep`): each run has a clock starting at 0; no real time passes.
``time.sleep(s)`` in an actor, of any length, is a scheduling point that imposes no order: the sleeper may go on at
once or after any of the others' steps, but not past an earlier pending deadline (the clock moves only to the
earliest wake-up, as an autojump clock does: trio's ``MockClock(autojump_threshold=0)``); only a sleeper spinning on
it (several in a row with nobody else stepping) waits for another actor's step. On waking the clock reads at least
the start of the sleep plus ``s``. A wait with a timeout (``Event.wait(5)``, ``Condition.wait(5)``,
``queue.get(timeout=5)``, ``Lock.acquire(timeout=5)``) returns as soon as its condition holds, and times out only
when no other actor can make progress, earliest deadline first (sleepers included): the clock then jumps to that
deadline. A timeout of zero or less never waits. Whether a timeout fires depends on what the others are doing (a
sleeper, another deadline), so a sleep and a wait with a timeout both write the clock at their scheduling point,
and the explorer tries both orders of them. Inside actors, ``time.monotonic()`` and ``time.time()`` read a fixed
start plus the virtual clock, so deadlines computed with them agree with the sleeps, and every value is the same in
every run; an actor that reads the clock again and finds it unchanged is polling it,
and the clock it reads moves on by a tick of its own (doubling at each further unchanged read), so a busy-wait
ends; ``selectors.DefaultSelector().select(timeout)`` sleeps on the virtual clock (an event loop in an actor).
``logging``'s own locks are scheduler-aware for the run (:mod:`lab.engine.sync._logging_locks`). Inside actors,
``perf_counter`` reads the same clock as ``monotonic``, and the ``_ns`` variants the same clocks in nanoseconds.

Limits: code that bound a name before the run (``from threading import Lock`` at import time, a default argument,
``field(default_factory=threading.Lock)``) keeps the original, except in the modules named by ``code``, whose
globals are patched too (the runner names the scenario's own module and its ``line_modules``). Of the objects made
before the run, those in these modules' globals and class attributes get a stand-in twin for the run
(:mod:`lab.engine.sync._made_before`); others stay real. A ``Condition`` over a lock that is not a stand-in is a
real condition. Threads started by the code under test, ``Thread.join``, ``threading.Timer`` and
``concurrent.futures`` are not scheduled.
"""

from __future__ import annotations

import contextlib
import queue
import selectors
import sys
import threading
import time
import types
from collections.abc import Iterable, Iterator
from typing import Any

from lab.engine.core._scheduler import Scheduler
from lab.engine.sync._barrier import StandardBarrier as Barrier
from lab.engine.sync._condition import Condition
from lab.engine.sync._event import StandardEvent as Event
from lab.engine.sync._lock_stand_in import Lock
from lab.engine.sync._logging_locks import rebind_logging_locks
from lab.engine.sync._made_before import rebind_made_before
from lab.engine.sync._queue import LifoQueue, PriorityQueue, Queue, SimpleQueue
from lab.engine.sync._rlock import RLock
from lab.engine.sync._semaphore import BoundedSemaphore, Semaphore
from lab.engine.sync._sleep import (
    _monotonic,
    _monotonic_ns,
    _perf_counter,
    _perf_counter_ns,
    _sleep,
    _time,
    _time_ns,
    _VirtualSelector,
)
from lab.engine.sync._standard_base import (
    _CALLS_ON_BEHALF,
    _REAL_ALLOCATE_LOCK,
    _REAL_RLOCK_FACTORY,
    _REAL_THREAD_START,
    VirtualClock,
    _acting,
    _activate,
    _active,
    _caller_keeps_real,
    _is_machinery,
    _Run,
)
from lab.errors import ScheduleError

# -- factories -----------------------------------------------------------------------------------------------------


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


# -- threads -------------------------------------------------------------------------------------------------------


def _start_thread(thread: threading.Thread) -> None:
    """What ``Thread.start`` is during a run: the real start, and a ``thread.start`` trace event when code under
    test in an actor starts the thread. The lab neither schedules such a thread nor records what it touches, so an
    exploration of a run with one cannot be complete (:mod:`lab.scenarios.exploring` says INCOMPLETE)."""
    acting = _acting()
    if acting is not None and _started_by_code_under_test():
        target = getattr(thread, "_target", None)
        acting[0].scheduler.record("thread.start", getattr(target, "__qualname__", type(thread).__qualname__))
    _REAL_THREAD_START(thread)


def _started_by_code_under_test() -> bool:
    """True when the code that asked for the thread, past the standard library (an executor, a timer) and the
    runtime of instrumented modules, is not the lab's machinery."""
    frame: types.FrameType | None = sys._getframe(2)
    while frame is not None:
        module = frame.f_globals.get("__name__")
        if not isinstance(module, str):
            return True
        if module not in _CALLS_ON_BEHALF and module.partition(".")[0] not in sys.stdlib_module_names:
            return not _is_machinery(module)
        frame = frame.f_back
    return False


# -- installing ----------------------------------------------------------------------------------------------------

_REPLACEMENTS: tuple[tuple[types.ModuleType | type, str, object], ...] = (
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
    (time, "perf_counter", _perf_counter),
    (time, "monotonic_ns", _monotonic_ns),
    (time, "perf_counter_ns", _perf_counter_ns),
    (time, "time_ns", _time_ns),
    (selectors, "DefaultSelector", _VirtualSelector),
    (threading.Thread, "start", _start_thread),
)


@contextlib.contextmanager
def scheduler_aware_primitives(scheduler: Scheduler, *, code: Iterable[object] = ()) -> Iterator[VirtualClock]:
    """Make the standard library's primitives scheduler-aware for ``scheduler``'s run; restore them on the way out.

    Wrap the world's setup and ``scheduler.run()`` in it. ``code`` names code under test whose module globals
    should see the stand-ins too, for names bound before the run (``from threading import Lock``): module names,
    modules, or classes and functions (their defining module). Yields the run's :class:`VirtualClock`.
    """
    if _active() is not None:
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
        _activate(run)
        saved += rebind_made_before(_namespaces(code))  # primitives made at import: twins for this run
        rebind_logging_locks(saved)  # logging's own locks, which it makes itself
        yield VirtualClock(run)
    finally:
        _activate(None)
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
    "Barrier",
    "BoundedSemaphore",
    "Condition",
    "Event",
    "LifoQueue",
    "Lock",
    "PriorityQueue",
    "Queue",
    "RLock",
    "Semaphore",
    "SimpleQueue",
    "VirtualClock",
    "scheduler_aware_primitives",
]
