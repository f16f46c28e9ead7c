"""Time inside actors: ``time.sleep``, ``time.monotonic`` and ``time.time`` on the run's virtual clock (see
:mod:`lab.engine.sync._standard` for what the clock promises, and :mod:`lab.engine.sync._standard_base` for the
clock and the timed waits it serves)."""

from __future__ import annotations

import math

from lab.engine.sync._standard_base import (
    _CLOCK_READ,
    _CLOCK_WRITE,
    _REAL_MONOTONIC,
    _REAL_SLEEP,
    _REAL_TIME,
    _acting,
    _Run,
    _wait,
)

_TICK = 1e-6
"""How far the clock moves at the first repeated read of it by a polling actor (see :func:`_read_clock`)."""

_WAKES_IN_A_ROW = 3
"""How many ``sleep(0)`` calls in a row an actor may go on from before any other actor takes a step."""


def _sleep(seconds: float) -> None:
    """What ``time.sleep`` is during a run: virtual inside actors (no real waiting), real everywhere else.

    Inside an actor a sleep is a scheduling point. ``sleep(0)`` imposes no order: the sleeper may go on at once,
    before any other actor's next step, or after any of them, as threads may (it once waited for another actor's
    step, so ``sleep(0); self.x = 1`` against a read never ran the write first). One bound keeps a polling loop
    (``while not done: time.sleep(0)``) from spinning without end while the others stand still: an actor that went
    on from ``_WAKES_IN_A_ROW`` of them in a row with no other actor's step in between is spinning, and its next
    sleep waits for another actor's step, as loom's ``yield_now`` does.

    ``sleep(s)`` with ``s > 0`` lets the others go first: the sleeper goes on once another actor has taken a step,
    or, when no other actor can run, at its time on the clock, earliest deadline first (the clock jumps there). It
    may not go on at once: virtual time would then run ahead of actors that have not taken a step yet (a 2 s sleep
    ending before another actor's first step would start that actor 2 s late). Waking, the clock reads at least
    the start of the sleep plus ``s``.
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
    last = run.early.get(me)
    spinning = last is not None and last[1] >= _WAKES_IN_A_ROW and not run.others_stepped(me, last[0])
    if seconds == 0 and not spinning:
        mark = run.steps()
        run.asleep[me] = run.clock  # a later timeout of another actor waits for it
        try:
            scheduler.point(_CLOCK_WRITE)
        finally:
            run.asleep.pop(me, None)
        scheduler.record("sleep", "clock", {"seconds": 0.0})
        at_once = not run.others_stepped(me, mark)
        in_a_row = last is not None and not run.others_stepped(me, last[0])
        run.early[me] = (run.steps(), (last[1] + 1 if in_a_row and last is not None else 1) if at_once else 0)
        scheduler.record("wake", "clock", {"clock": run.clock})
        return
    run.early.pop(me, None)
    scheduler.point(_CLOCK_WRITE)
    start, steps = run.clock, run.steps()
    scheduler.record("sleep", "clock", {"seconds": float(seconds)})
    _wait(run, me, lambda: run.steps() > steps, lambda: "the clock", float(seconds), always_yield=True)
    run.clock = max(run.clock, start + float(seconds))
    scheduler.record("wake", "clock", {"clock": run.clock})


def _read_clock(run: _Run, me: str) -> float:
    """The virtual clock, as actor ``me`` reads it: a read, unless the actor is polling it.

    An actor that reads the clock again and finds the very instant it read last (nothing slept, nothing timed out
    meanwhile) is waiting for time to pass, as a ``while time.monotonic() < deadline`` loop does: a real clock
    would have moved on, so the virtual one moves by a tick (a write of the clock for the explorer), doubling at
    each further repeated read, so a busy-wait of any length ends in a few dozen reads instead of spinning on a
    clock that never moves. Deterministic: the ticks depend only on the reads.
    """
    last = run.read_at.get(me)
    if last is not None and last[0] == run.clock:
        repeats = last[1]
        run.clock += _TICK * 2 ** min(repeats, 60)
        run.scheduler.touch(_CLOCK_WRITE)
        run.read_at[me] = (run.clock, repeats + 1)
    else:
        run.scheduler.touch(_CLOCK_READ)
        run.read_at[me] = (run.clock, 0)
    return run.clock


def _monotonic() -> float:
    """What ``time.monotonic`` is during a run: inside actors, the run's real start plus the virtual clock."""
    acting = _acting()
    if acting is None:
        return _REAL_MONOTONIC()
    run, me = acting
    return run.epoch_monotonic + _read_clock(run, me)


def _time() -> float:
    """What ``time.time`` is during a run: inside actors, the run's real start plus the virtual clock."""
    acting = _acting()
    if acting is None:
        return _REAL_TIME()
    run, me = acting
    return run.epoch_time + _read_clock(run, me)
