"""The clock an actor reads starts at a fixed value, not at the machine's: what a run works out from it never depends
on the machine's uptime or date.

``deadline - time.monotonic()`` in an actor once recorded 9.999997000000008 on a machine up for less than 1,024 s and
9.999996999999894 after (the real start's magnitude set the float's last bits), and an audit's re-execution of the
folder reported DIFFERED.
"""

from __future__ import annotations

import time

import pytest

from lab.engine.core import Scheduler
from lab.engine.sync import _standard_base
from lab.engine.sync._standard import scheduler_aware_primitives


def _readings() -> list[float]:
    """An actor's readings: both clocks at its start, and a deadline's remainder after a short sleep."""
    seen: list[float] = []

    def actor() -> None:
        seen.append(time.monotonic())
        seen.append(time.time())
        deadline = time.monotonic() + 10.0
        time.sleep(0.000003)
        seen.append(deadline - time.monotonic())

    scheduler = Scheduler(watchdog_seconds=5)
    with scheduler_aware_primitives(scheduler):
        scheduler.add_actor("a", actor)
        scheduler.run()
    return seen


def test_an_actors_clock_does_not_follow_the_machines(monkeypatch: pytest.MonkeyPatch) -> None:
    found = []
    for uptime in (100.0, 1_023.9, 1_024.1, 3_000_000.5):
        monkeypatch.setattr(_standard_base, "_REAL_MONOTONIC", lambda uptime=uptime: uptime)
        monkeypatch.setattr(_standard_base, "_REAL_TIME", lambda uptime=uptime: 1_900_000_000.0 + uptime)
        found.append(_readings())
    assert all(readings == found[0] for readings in found), found
    monotonic, wall, remaining = found[0]
    assert monotonic == _standard_base.EPOCH_MONOTONIC
    assert 0 <= wall - _standard_base.EPOCH_TIME < 0.001
    assert 9.99 < remaining < 10.0


def test_outside_actors_the_clock_is_the_machines() -> None:
    with scheduler_aware_primitives(Scheduler()):
        before = time.monotonic()
        time.sleep(0.01)
        assert time.monotonic() - before >= 0.01
        assert abs(time.time() - _standard_base._REAL_TIME()) < 5  # not the actors' fixed date


def test_perf_counter_and_the_nanosecond_clocks_are_the_actors_clock_too() -> None:
    """A busy-wait on ``perf_counter`` ends (the clock it reads moves when polled) and takes no real time; the
    ``_ns`` variants read the same clocks. Real, perf_counter busy-waits ran a different number of times in each
    run, and the explorer stopped with a NondeterminismError."""
    seen: list[float] = []

    def actor() -> None:
        end = time.perf_counter() + 0.001
        polls = 0
        while time.perf_counter() < end:
            polls += 1
        seen.extend([polls, time.perf_counter() - time.monotonic()])
        seen.append(time.monotonic_ns() // 1_000_000_000 - int(_standard_base.EPOCH_MONOTONIC))
        seen.append(time.time_ns() // 1_000_000_000 - int(_standard_base.EPOCH_TIME))
        seen.append(time.perf_counter_ns() // 1_000_000_000 - int(_standard_base.EPOCH_MONOTONIC))

    runs = []
    for _ in range(2):
        seen.clear()
        scheduler = Scheduler(watchdog_seconds=5)
        begun = time.perf_counter()
        with scheduler_aware_primitives(scheduler):
            scheduler.add_actor("a", actor)
            scheduler.run()
        assert time.perf_counter() - begun < 1.0
        runs.append(list(seen))
    assert runs[0] == runs[1], runs
    polls, drift, *seconds = runs[0]
    assert 0 < polls < 100
    assert abs(drift) < 0.01  # one clock: the two reads differ by the ticks polling adds
    assert seconds == [0, 0, 0]
