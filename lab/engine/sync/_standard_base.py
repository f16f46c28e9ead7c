"""What the standard library's stand-ins share: the genuine articles, the active run, deterministic names, waiting.

One part of the stand-ins :mod:`lab.engine.sync._standard` installs for a run (see its docstring for what they do and
why). The modules of the primitives (``_lock``, ``_event``, ``_barrier``, ...) use it, for their stand-in faces and
for the waits their models park actors in.

Every stand-in class says ``lab_state_in = "lab_footprint"``: all of its objects' attributes (``Barrier.broken``,
``Queue.unfinished_tasks``, ``Queue.queue``, ``Semaphore._value``) are the primitive's own state, so the recorder
charges a read of one as a read of the primitive's footprint, and a store as a write of it (see
``lab.engine.record._lookups``): such a read conflicts with ``wait``, ``abort``, ``put`` or ``release``.
"""

from __future__ import annotations

import _thread
import queue
import sys
import threading
import time
import types
from collections.abc import Callable
from typing import Any

from lab.engine.core._footprint import Footprint, writes
from lab.engine.core._scheduler import Scheduler

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
_REAL_PERF_COUNTER = time.perf_counter
_REAL_MONOTONIC_NS = time.monotonic_ns
_REAL_PERF_COUNTER_NS = time.perf_counter_ns
_REAL_TIME_NS = time.time_ns

EPOCH_MONOTONIC = 1_048_576.0
EPOCH_TIME = 1_767_225_600.0
"""What ``time.monotonic()`` and ``time.time()`` read in a run before any virtual time has passed: fixed, not the
machine's clock at the run's start. A value the program works out from the clock (``deadline - monotonic()``) is
then the same float on every machine and in every run: from the real start, its last bits followed the machine's
uptime (``9.999997000000008`` recorded by a run after 1,024 s of uptime, ``...894`` before), and an audit's
re-execution differed. ``time.time()`` reads 2026-01-01T00:00:00Z plus the virtual clock."""
_REAL_THREAD_START = threading.Thread.start

_UNDER_TEST = ("lab.sessions", "lab.mutants")
"""Lab modules that are code under study, not machinery: they get stand-ins like a learner's code."""

_CALLS_ON_BEHALF = frozenset({f"lab.engine.record._{name}" for name in ("runtime", "runtime_calls", "lazy", "lookups")})
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
        self.epoch_monotonic = EPOCH_MONOTONIC
        self.epoch_time = EPOCH_TIME
        self.timed: dict[str, _Timed] = {}
        self.read_at: dict[str, tuple[float, int]] = {}  # per actor: the clock it read last, and repeats of it
        self.drift: dict[str, float] = {}  # per actor: how far its polling moved the clock it reads (_sleep)
        self.early: dict[str, tuple[int, int]] = {}  # per actor: the decision after its last sleep, wakes in a row
        self.asleep: dict[str, float] = {}  # actors at a sleep's scheduling point, and the time each wakes at
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
            if actor.name == me or actor.state == "done" or actor.name in self.asleep:
                continue  # a sleeper can go on, but a timeout may fire while it sleeps (earliest() decides)
            waiting = actor.waiting
            if actor.state != "blocked":
                gate = actor.gate  # an acquisition of a held lock is not a step it can take
                if gate is None or gate.ready():
                    return True
                continue
            if waiting is None:
                return True
            if waiting.condition() if isinstance(waiting, _Timed) else waiting.ready():
                return True
        return False

    def steps(self) -> int:
        """How many decisions the scheduler has taken so far in this run."""
        return len(self.scheduler._decisions)

    def others_stepped(self, me: str, since: int) -> bool:
        """True when an actor other than ``me`` was chosen at a decision from index ``since`` on."""
        decisions = self.scheduler._decisions
        return any(decisions[i].chosen != me for i in range(since, len(decisions)))

    def earliest(self, timed: _Timed) -> bool:
        """True when no other pending timed wait has an earlier deadline."""
        others = [other for other in self.timed.values() if other is not timed and not other.condition()]
        sleepers = [wake for who, wake in self.asleep.items() if who != timed._actor]
        return all(timed.deadline <= other.deadline for other in others) and all(timed.deadline <= w for w in sleepers)


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

    The runtime of instrumented modules (:mod:`lab.engine.record._runtime`) calls on the program's behalf: look past
    it.
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


def _await(
    scheduler: Scheduler,
    run: _Run | None,
    me: str,
    condition: Callable[[], bool],
    describe: Callable[[], str],
    timeout: float | None,
) -> bool:
    """:func:`_wait` for a primitive's model, which a lab primitive may use with no run of the stand-ins active
    (``run`` is ``None``: then there is no virtual clock, and no timeout)."""
    if run is not None:
        return _wait(run, me, condition, describe, timeout)
    if timeout is not None:
        raise ValueError("a wait with a timeout needs the run's virtual clock")
    if not condition():
        scheduler.block(_Until(condition, describe))
    return True


def _timed(footprint: Footprint, timeout: float | None) -> Footprint:
    """What the scheduling point of a wait with ``timeout`` (``None``: none) touches: ``footprint``, and with a
    timeout that can fire, the virtual clock too (a write).

    Whether a timed wait times out, and when a sleeper wakes, depend on what the other actors are doing meanwhile
    (:meth:`_Timed.ready`: nobody else can go on, and no earlier deadline), which no footprint of theirs records.
    Sleeps and timed waits all write the clock, so the explorer reverses their order like any other race.
    """
    return footprint | _CLOCK_WRITE if timeout is not None and timeout > 0 else footprint


def _raw(obj: object) -> Any:
    """The standard library object's private state (``_flag``, ``_value``, ``_waiters``...), which the stubs omit."""
    return obj


def _touch(entry: tuple[str, str, str]) -> None:
    acting = _acting()
    if acting is not None:
        acting[0].scheduler.touch(frozenset({entry}))


def _activate(run: _Run | None) -> None:
    """Make ``run`` the one the stand-ins serve (``None``: no run, every stand-in behaves like the real thing)."""
    global _ACTIVE
    _ACTIVE = run


def _active() -> _Run | None:
    """The run the stand-ins serve, if any."""
    return _ACTIVE
