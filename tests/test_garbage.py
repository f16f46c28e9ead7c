"""A run leaves nothing for the garbage collector: its books are freed as soon as nobody holds them.

An exploration makes thousands of runs. A run whose scheduler sat in a reference cycle (a tracer holding it, an
actor's wait holding a primitive, a kept exception's traceback holding the recording) lived on until a collection,
and the collections that traversed them cost a quarter of a line-granularity exploration. Each case here runs a
scenario with the collector off and counts what a collection then finds unreachable: nothing.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator
from pathlib import Path

import pytest

from lab.engine.core import collector_relaxed
from lab.scenarios.exploring import explore_scenario
from lab.scenarios.loader import LoadedScenario, load
from lab.scenarios.runner import run_scenario

ROOT = Path(__file__).resolve().parent.parent


@contextlib.contextmanager
def _collector_off() -> Iterator[None]:
    was = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


@pytest.mark.slow
@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    ("name", "granularity"),
    [
        ("race_two_requests", "probe"),
        ("race_two_requests", "line"),
        ("reply_table", "probe"),  # transports raise: the exceptions' tracebacks hold frames
        ("synchronized_fast_first_deadlocks", "probe"),  # stopped actors wait on primitives
        ("stdlib_lock_session", "line"),  # timed waits on the standard library's primitives
    ],
)
def test_a_run_and_an_exploration_leave_no_cycle(name: str, granularity: str) -> None:
    loaded = load(ROOT / "scenarios" / f"{name}.py")
    assert isinstance(loaded, LoadedScenario)
    run_scenario(loaded, granularity=granularity, record_accesses=True)  # rewriting leaves garbage, once a process
    with _collector_off():
        run_scenario(loaded, granularity=granularity, record_accesses=True)
        explore_scenario(loaded, granularity=granularity, max_schedules=20)
        assert gc.collect() == 0


@pytest.mark.timeout(10)
def test_the_relaxed_collector_gives_back_the_thresholds() -> None:
    """Nested or not, the thresholds are the program's own again once the last exploration ends."""
    before = gc.get_threshold()
    with collector_relaxed():
        relaxed = gc.get_threshold()
        with collector_relaxed():
            assert gc.get_threshold() == relaxed
        assert gc.get_threshold() == relaxed
    assert relaxed[0] >= 10_000 and relaxed[1:] == before[1:]
    assert gc.get_threshold() == before
