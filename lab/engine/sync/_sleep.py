"""Time inside actors: ``time.sleep``, ``time.monotonic`` and ``time.time`` on the run's virtual clock (see
:mod:`lab.engine.sync._standard` for what the clock promises, and :mod:`lab.engine.sync._standard_base` for the
clock and the timed waits it serves)."""

from __future__ import annotations

import math
import selectors
from typing import Any

from lab.engine.sync._standard_base import (
    _CLOCK_READ,
    _CLOCK_WRITE,
    _REAL_MONOTONIC,
    _REAL_MONOTONIC_NS,
    _REAL_PERF_COUNTER,
    _REAL_PERF_COUNTER_NS,
    _REAL_SLEEP,
    _REAL_TIME,
    _REAL_TIME_NS,
    _acting,
    _Run,
    _wait,
)

_REAL_DEFAULT_SELECTOR = selectors.DefaultSelector

_TICK = 1e-6
"""How far the clock moves at the first repeated read of it by a polling actor (see :func:`_read_clock`)."""

_WAKES_IN_A_ROW = 3
"""How many ``sleep(0)`` calls in a row an actor may go on from before any other actor takes a step."""


class _Asleep:
    """The gate of a sleeper's next step: it may go on once no other deadline comes before its own.

    A sleep orders nothing: the sleeper may wake at any decision, before or after any of the others' steps, as a
    thread may (a thread the OS keeps off the processor for as long as the sleep lasts sees the sleeper wake
    first). Waking moves the clock to the sleeper's time, so it may not wake past an earlier deadline that is
    still pending (another sleeper's, a timed wait's that has not been met): that one comes first, and the clock
    only ever moves on to the earliest wake-up, as an autojump clock does.
    """

    __slots__ = ("_me", "_run", "wake")

    def __init__(self, run: _Run, me: str, wake: float) -> None:
        self._run, self._me, self.wake = run, me, wake

    def ready(self) -> bool:
        run, me, wake = self._run, self._me, self.wake
        for who, other in run.asleep.items():
            if other < wake and who != me:
                return False
        for who, timed in run.timed.items():
            if timed.deadline < wake and who != me and not timed.condition():
                return False
        return True

    def describe(self) -> str:
        return f"the clock to reach {self.wake:g} s"


def _sleep(seconds: float) -> None:
    """What ``time.sleep`` is during a run: virtual inside actors (no real waiting), real everywhere else.

    Inside an actor a sleep of any length is a scheduling point that imposes no order: the sleeper may go on at
    once, before any other actor's next step, or after any of them, as threads may (a sleep once let the others
    go first, so ``sleep(0.01); self.x = 1`` against a read never ran the write first). Its step is gated
    (:class:`_Asleep`): it is not offered while another deadline earlier than its own is pending. Waking, the
    clock reads at least the start of the sleep plus ``seconds``: a schedule in which the sleeper goes on before
    another actor's step is one in which that actor did not run for as long as the sleep lasted, so the clock
    moves on only to the earliest wake-up, with every other actor blocked, asleep or kept off the processor.

    One bound keeps a polling loop (``while not done: time.sleep(0.01)``) from spinning without end while the
    others stand still: an actor that went on from ``_WAKES_IN_A_ROW`` sleeps in a row with no other actor's step
    in between is spinning, and its next sleep waits for another actor's step (or, when none can run, for its
    time on the clock), as loom's ``yield_now`` does.
    """
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
    seconds = float(seconds)
    last = run.early.get(me)
    spinning = last is not None and last[1] >= _WAKES_IN_A_ROW and not run.others_stepped(me, last[0])
    if not spinning:
        mark = run.steps()
        wake = run.clock + run.drift.pop(me, 0.0) + seconds  # from its own reading of the clock
        run.asleep[me] = wake  # a later deadline of another actor waits for it, an earlier one gates it
        try:
            scheduler.point(_CLOCK_WRITE, gate=_Asleep(run, me, wake))
        finally:
            run.asleep.pop(me, None)
        scheduler.record("sleep", "clock", {"seconds": seconds})
        run.clock = max(run.clock, wake)
        at_once = not run.others_stepped(me, mark)
        in_a_row = last is not None and not run.others_stepped(me, last[0])
        run.early[me] = (run.steps(), (last[1] + 1 if in_a_row and last is not None else 1) if at_once else 0)
        scheduler.record("wake", "clock", {"clock": run.clock})
        return
    run.early.pop(me, None)
    scheduler.point(_CLOCK_WRITE)
    start, steps = run.clock + run.drift.pop(me, 0.0), run.steps()
    scheduler.record("sleep", "clock", {"seconds": seconds})
    _wait(run, me, lambda: run.steps() > steps, lambda: "the clock", seconds, always_yield=True)
    run.clock = max(run.clock, start + seconds)
    scheduler.record("wake", "clock", {"clock": run.clock})


def _read_clock(run: _Run, me: str) -> float:
    """The virtual clock, as actor ``me`` reads it: the run's clock, plus what its own polling moved it by.

    An actor that reads the clock again and finds the very instant it read last (nothing slept, nothing timed out
    meanwhile) is waiting for time to pass, as a ``while time.monotonic() < deadline`` loop does: a real clock
    would have moved on, so the one it reads moves by a tick, doubling at each further repeated read, so a
    busy-wait of any length ends in a few dozen reads instead of spinning on a clock that never moves.

    The ticks are the poller's own (``run.drift``), not a write of the run's clock: two actors busy-waiting at once
    would otherwise each change what the other reads at every turn of their loops, and the explorer would try every
    interleaving of two loops that touch nothing else (thousands of runs for two 1 ms waits). A reading is the
    clock plus the drift, so each actor's readings never go back; its next sleep starts from its own reading and
    brings the clock to where it wakes (the drift is spent). Deterministic: the ticks depend only on the reads.
    """
    drift = run.drift.get(me, 0.0)
    now = run.clock + drift
    run.scheduler.touch(_CLOCK_READ)
    last = run.read_at.get(me)
    if last is not None and last[0] == now:
        repeats = last[1]
        tick = _TICK * 2 ** min(repeats, 60)
        run.drift[me] = drift + tick
        now += tick
        run.read_at[me] = (now, repeats + 1)
    else:
        run.read_at[me] = (now, 0)
    return now


def _monotonic() -> float:
    """What ``time.monotonic`` is during a run: inside actors, a fixed start (``EPOCH_MONOTONIC``, in
    :mod:`lab.engine.sync._standard_base`) plus the virtual clock; outside them, the machine's clock (so a reading
    taken in ``setup()`` is not on the actors' clock: compare readings taken inside actors)."""
    acting = _acting()
    if acting is None:
        return _REAL_MONOTONIC()
    run, me = acting
    return run.epoch_monotonic + _read_clock(run, me)


def _time() -> float:
    """What ``time.time`` is during a run: inside actors, a fixed date (``_standard_base.EPOCH_TIME``) plus the virtual
    clock; outside them, the machine's."""
    acting = _acting()
    if acting is None:
        return _REAL_TIME()
    run, me = acting
    return run.epoch_time + _read_clock(run, me)


def _perf_counter() -> float:
    """What ``time.perf_counter`` is during a run: inside actors, the same clock as ``time.monotonic`` (a busy-wait
    on it ends, and takes no real time); outside them, the machine's."""
    acting = _acting()
    if acting is None:
        return _REAL_PERF_COUNTER()
    run, me = acting
    return run.epoch_monotonic + _read_clock(run, me)


def _nanoseconds(epoch: float, reading: float) -> int:
    """A reading of the virtual clock from ``epoch``, in whole nanoseconds (exact for the fixed epochs)."""
    return int(epoch) * 1_000_000_000 + round(reading * 1e9)


def _monotonic_ns() -> int:
    """``time.monotonic_ns``: :func:`_monotonic` in nanoseconds."""
    acting = _acting()
    if acting is None:
        return _REAL_MONOTONIC_NS()
    run, me = acting
    return _nanoseconds(run.epoch_monotonic, _read_clock(run, me))


def _perf_counter_ns() -> int:
    """``time.perf_counter_ns``: :func:`_perf_counter` in nanoseconds."""
    acting = _acting()
    if acting is None:
        return _REAL_PERF_COUNTER_NS()
    run, me = acting
    return _nanoseconds(run.epoch_monotonic, _read_clock(run, me))


def _time_ns() -> int:
    """``time.time_ns``: :func:`_time` in nanoseconds."""
    acting = _acting()
    if acting is None:
        return _REAL_TIME_NS()
    run, me = acting
    return _nanoseconds(run.epoch_time, _read_clock(run, me))


class _VirtualSelector:
    """What ``selectors.DefaultSelector()`` makes during a run: the real selector, whose ``select(timeout)`` waits
    on the virtual clock inside an actor.

    An event loop inside an actor (``asyncio.run``) waits for its next timer in ``select(timeout)``: on the real
    clock, for a ``timeout`` the virtual clock computed, so ``asyncio.sleep(0.01)`` took real time and the loop,
    reading a clock that did not move, went round again. Inside an actor a wait with nothing ready is a sleep of
    ``timeout`` (:func:`_sleep`: a scheduling point that orders nothing, the clock moving on to the wake-up), then
    a poll of the real descriptors; a wait without a timeout stays real (only a thread the lab does not schedule
    could wake it: the watchdog says so). Outside actors it is the real selector.
    """

    def __init__(self) -> None:
        self._real = _REAL_DEFAULT_SELECTOR()

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        real = self._real
        if _acting() is None or timeout is None:
            return real.select(timeout)
        ready = real.select(0)
        if ready or timeout <= 0:
            return ready
        _sleep(timeout)
        return real.select(0)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)  # register, unregister, modify, get_key, get_map, close

    def __enter__(self) -> _VirtualSelector:
        return self

    def __exit__(self, *_: object) -> None:
        self._real.close()
