"""Optimal exploration: one execution per class of equivalent interleavings, no more, no fewer.

Two interleavings are equivalent (one Mazurkiewicz trace) when they order every pair of conflicting steps of
different actors the same way. The test enumerates every interleaving of a small program naively, groups them
into classes by that order, and checks that the reduced exploration ran exactly one execution per class: none
redundant (cut short, or equivalent to another) and none missing.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from lab.engine.core import Policy, conflict
from lab.engine.search import Exploration, Explorer, Program, Ran
from lab.scenarios.loader import LoadedScenario, load
from lab.scenarios.runner import run_scenario

ROOT = Path(__file__).resolve().parent.parent
PROGRAMS = [
    ("tests/soundness/check_then_act.py", "probe"),
    ("tests/soundness/check_then_act.py", "line"),
    ("tests/soundness/three_actors.py", "line"),
    ("tests/soundness/counter_one_lock.py", "line"),
    ("tests/soundness/global_counter.py", "line"),
    ("tests/soundness/two_preemptions.py", "line"),
    ("bench/models/check_then_act.py", "probe"),
]

Class = frozenset[tuple[tuple[str, int], tuple[str, int]]]


def _explore(
    loaded: LoadedScenario, granularity: str, *, reduction: bool, jobs: int = 1
) -> tuple[list[Class], Exploration]:
    """Every execution's class (the ordered pairs of its conflicting steps), and what the explorer counted."""
    classes: list[Class] = []

    def run_once(policy: Policy) -> Ran:
        result = run_scenario(
            loaded,
            policy=policy,
            granularity=granularity,
            record_accesses=True,
            watchdog_seconds=5,
        )
        assert result.run is not None
        run = result.run
        seen: dict[str, int] = {}
        events = []
        for decision, footprint in zip(run.decisions, run.step_footprints, strict=False):
            number = seen.get(decision.chosen, 0)
            seen[decision.chosen] = number + 1
            events.append(((decision.chosen, number), footprint))
        classes.append(
            frozenset(
                (first, second)
                for i, (first, first_fp) in enumerate(events)
                for second, second_fp in events[i + 1 :]
                if first[0] != second[0] and conflict(first_fp, second_fp)
            )
        )
        return Ran(run, "")

    found = Explorer(Program(loaded.cls.actors, run_once), reduction=reduction, jobs=jobs).explore()
    return classes, found


@pytest.mark.timeout(60)
@pytest.mark.parametrize(("program", "granularity"), PROGRAMS)
def test_one_execution_per_class(program: str, granularity: str) -> None:
    loaded = load(ROOT / program)
    assert isinstance(loaded, LoadedScenario), str(loaded)
    every, naive = _explore(loaded, granularity, reduction=False)
    reduced, found = _explore(loaded, granularity, reduction=True)
    assert found.pruned == found.blocked == 0, "a run of the reduced exploration was redundant"
    assert len(reduced) == len(set(reduced)), "two executions of the reduced exploration were equivalent"
    assert set(reduced) == set(every), "the reduced exploration missed a class"
    # what the explorer claims, counted its own way, is what brute force finds: executions == classes
    assert found.schedules == found.classes == len(set(every)), "the explorer counted its classes wrong"
    assert naive.classes == len(set(every)), "the naive enumeration counted its classes wrong"
    assert naive.schedules == len(every) >= found.schedules


@pytest.mark.timeout(60)
@pytest.mark.parametrize(("program", "granularity"), PROGRAMS[:3])
def test_one_execution_per_class_with_worker_processes(program: str, granularity: str) -> None:
    """With jobs=2 (workers run parts of the tree ahead) the search runs the same executions, one per class."""
    loaded = load(ROOT / program)
    assert isinstance(loaded, LoadedScenario), str(loaded)
    _, one = _explore(loaded, granularity, reduction=True)
    _, two = _explore(loaded, granularity, reduction=True, jobs=2)  # a worker's runs are seen in its process only
    assert (two.schedules, two.classes, two.blocked) == (one.schedules, one.classes, 0)
    assert two.class_names == one.class_names
