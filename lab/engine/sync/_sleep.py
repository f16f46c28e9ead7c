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
    _wait,
)


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
