"""Exploring with several processes: the same answer, byte for byte, for any number of them.

Worker processes run parts of the search tree ahead of time and the coordinator takes their runs wherever its own
(one-process) search makes the same choices (see :mod:`lab.engine.search._parallel`). These tests hold it to that:
records identical for jobs 1, 2 and 3 on a race scenario and on soundness programs; workers that really do take part; no
process left behind; work items that survive being written as text.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import sys
import threading
import time
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from lab.engine.core import RunResult
from lab.engine.search import FORKS, Branch, Explorer, Subtree, explore_work, split_work
from lab.engine.search import _parallel as parallel
from lab.errors import UsageError
from lab.evidence.records.exploration import exploration_record
from lab.scenarios.exploring import ScenarioExploration, explore_scenario, scenario_explorer
from lab.scenarios.loader import LoadedScenario, load
from lab.scenarios.runner import run_scenario

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # the soundness programs import their helpers as tests.soundness._shared

needs_fork = pytest.mark.skipif(not FORKS, reason="worker processes are forked; without fork, jobs run in one process")


@cache
def _load(relative: str) -> LoadedScenario:
    loaded = load(ROOT / relative)
    assert isinstance(loaded, LoadedScenario), str(loaded)
    return loaded


def _record(found: ScenarioExploration) -> str:
    record = exploration_record(found, default_variant=True)
    record.pop("timing")  # the one field that depends on the clock
    return json.dumps(record, sort_keys=True, ensure_ascii=False)


CASES = [
    ("scenarios/race_two_requests.py", "CheckOutsideLockSession", "probe", True),
    ("scenarios/race_two_requests.py", "CheckOutsideLockSession", "line", True),
    ("scenarios/race_two_requests.py", "VersionedSession", "line", True),
    ("tests/soundness/three_actors.py", None, "line", True),
    ("tests/soundness/two_preemptions.py", None, "line", False),  # naive: more schedules, one subtree per option
]


@pytest.mark.slow
@needs_fork
@pytest.mark.timeout(120)
@pytest.mark.parametrize(("path", "variant", "granularity", "reduction"), CASES)
def test_any_number_of_jobs_writes_the_same_record(
    path: str, variant: str | None, granularity: str, reduction: bool
) -> None:
    """jobs=1, 2 and 3 give byte-identical records: counts, outcomes, examples, counterexample and explanation."""
    records = [
        _record(explore_scenario(_load(path), granularity=granularity, variant=variant, reduction=reduction, jobs=jobs))
        for jobs in (1, 2, 3)
    ]
    assert records[1] == records[0]
    assert records[2] == records[0]


def _slow_here(loaded: LoadedScenario, granularity: str, seconds: float) -> object:
    """A run_once that is slow in this process only, so that a worker is sure to be ahead of the coordinator."""
    here = os.getpid()

    def run_once(policy: object) -> tuple[RunResult, str, object]:
        if os.getpid() == here:
            time.sleep(seconds)
        result = run_scenario(loaded, policy=policy, granularity=granularity, record_accesses=True)  # type: ignore[arg-type]
        assert result.run is not None
        return result.run, json.dumps(result.observed, sort_keys=True), None

    return run_once


@pytest.mark.slow
@needs_fork
@pytest.mark.timeout(120)
def test_workers_take_part_and_change_nothing() -> None:
    """With a coordinator slower than its worker, most runs come from the worker, and the search is the same."""
    loaded = _load("tests/soundness/closure_list_locked.py")  # 72 schedules: time for a worker to get ahead
    alone = Explorer(_slow_here(loaded, "line", 0), loaded.cls.actors, reduction=False).explore()  # type: ignore[arg-type]
    shared = Explorer(_slow_here(loaded, "line", 0.02), loaded.cls.actors, reduction=False, jobs=2).explore()  # type: ignore[arg-type]
    assert alone.reused == 0
    assert shared.reused > shared.schedules // 4, f"only {shared.reused} of {shared.schedules} runs from the worker"
    assert (shared.schedules, shared.counts, shared.class_names) == (alone.schedules, alone.counts, alone.class_names)
    assert {k: e.schedule for k, e in shared.executions.items()} == {k: e.schedule for k, e in alone.executions.items()}


@needs_fork
@pytest.mark.timeout(120)
def test_no_process_or_thread_outlives_the_exploration() -> None:
    before = {thread.name for thread in threading.enumerate() if not thread.name.startswith("lab-actor")}
    explore_scenario(_load("scenarios/race_two_requests.py"), granularity="line", jobs=3)
    assert multiprocessing.active_children() == []
    after = {thread.name for thread in threading.enumerate() if not thread.name.startswith("lab-actor")}
    assert after == before


@pytest.mark.timeout(60)
def test_jobs_must_be_a_whole_number_of_processes() -> None:
    loaded = _load("scenarios/race_two_requests.py")
    for wrong in (0, -1, True, 1.5):
        with pytest.raises(UsageError, match="jobs must be"):
            explore_scenario(loaded, jobs=wrong)  # type: ignore[arg-type]
    assert explore_scenario(loaded, jobs=None).schedules == explore_scenario(loaded).schedules


def test_a_subtree_survives_being_written_as_one_line() -> None:
    plan = Branch("b", frozenset({("obj:x", "n", "w")}), [Branch("a", frozenset({("lock", "l", "w")}))])
    subtree = Subtree("0:01-1:01", 4, plan, {2: {"c": frozenset({("obj:x", "n", "r")})}})
    text = subtree.to_text()
    assert "\n" not in text
    assert Subtree.from_text(text) == subtree
    with pytest.raises(UsageError, match="not a subtree"):
        Subtree.from_text('{"prefix": ""}')
    with pytest.raises(UsageError, match="not a subtree"):
        Subtree.from_text("not json")


@pytest.mark.timeout(120)
def test_work_handed_out_as_lines_comes_back_as_the_same_exploration() -> None:
    """The distributed recipe: split into lines, explore each line elsewhere, give the runs back: the exploration
    takes them (most of its runs) and its record is the one-process record."""
    loaded = _load("tests/soundness/closure_list_locked.py")  # 72 schedules: enough to split in four
    settings: dict[str, Any] = {"granularity": "line", "reduction": False}
    lines = split_work(scenario_explorer(loaded, **settings), 4)
    assert len(lines) >= 4 and all("\n" not in line for line in lines)
    done = [explore_work(scenario_explorer(loaded, **settings), line) for line in lines]
    here = explore_scenario(loaded, **settings)
    spread = explore_scenario(loaded, done=done, **settings)
    assert _record(spread) == _record(here)
    found = scenario_explorer(loaded, **settings).explore(done)
    assert found.reused > found.schedules // 2, f"only {found.reused} of {found.schedules} runs were taken"


@pytest.mark.timeout(60)
def test_without_fork_jobs_run_in_one_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where fork does not exist, any jobs explores in this process, to the same record."""
    monkeypatch.setattr(parallel, "FORKS", False)
    loaded = _load("scenarios/race_two_requests.py")
    alone = explore_scenario(loaded, variant="CheckOutsideLockSession", granularity="line")
    spread = explore_scenario(loaded, variant="CheckOutsideLockSession", granularity="line", jobs=3)
    assert multiprocessing.active_children() == []
    assert _record(spread) == _record(alone)
