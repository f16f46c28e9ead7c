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
        assert abs(time.time() - time.time()) < 60
