"""Exploring with several processes: the same answer, byte for byte, for any number of them.

Worker processes explore whole subtrees and steal more; the coordinator runs no schedule and tallies their runs in
the one-process search's order (see :mod:`lab.engine.search._parallel`). These tests hold it to that: records
identical for jobs 1, 2 and 3 on race scenarios and soundness programs, with and without a budget cut; the same
progress reports in the same order; every run made by workers, more than one of them; an error met where the
one-process search meets it; no process left behind; work items that survive being written as text.
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

from lab.engine.core import Policy
from lab.engine.search import FORKS, Branch, Exploration, Explorer, Program, Ran, Subtree, explore_work, split_work
from lab.engine.search import _parallel as parallel
from lab.errors import UsageError
from lab.evidence.records.exploration import exploration_record
from lab.scenarios.base import actor
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
    ("bench/models/many_requests.py", None, "probe", True),  # three requests below: 90 classes, items nest
    ("scenarios/race_two_requests.py", "CheckOutsideLockSession", "probe", True),
    ("scenarios/race_two_requests.py", "CheckOutsideLockSession", "line", True),
    ("scenarios/race_two_requests.py", "VersionedSession", "line", True),
    ("tests/soundness/three_actors.py", None, "line", True),
    ("tests/soundness/two_preemptions.py", None, "line", False),  # naive: more schedules, one subtree per option
]


def _three_requests() -> LoadedScenario:
    """The N-request race with three requesters (the bench's model; its third actor made one)."""
    loaded = _load("bench/models/many_requests.py")
    cls = type("ManyRequests3", (loaded.cls,), {"r3": actor(loaded.cls.r3), "__module__": loaded.cls.__module__})
    return LoadedScenario(f"{loaded.name}_3", loaded.path, cls, loaded.description)


def _scenario(path: str) -> LoadedScenario:
    return _three_requests() if path == "bench/models/many_requests.py" else _load(path)


@pytest.mark.slow
@needs_fork
@pytest.mark.timeout(120)
@pytest.mark.parametrize(("path", "variant", "granularity", "reduction"), CASES)
@pytest.mark.parametrize("budget", [20_000, 25], ids=["whole", "cut"])
def test_any_number_of_jobs_writes_the_same_record(
    path: str, variant: str | None, granularity: str, reduction: bool, budget: int
) -> None:
    """jobs=1, 2 and 3 give byte-identical records: counts, outcomes, examples, counterexample and explanation;
    cut by a budget too (then the verdict, the classes covered and Knuth's estimate of those left)."""
    loaded = _scenario(path)
    records = [
        _record(
            explore_scenario(
                loaded, granularity=granularity, variant=variant, reduction=reduction, jobs=jobs, max_schedules=budget
            )
        )
        for jobs in (1, 2, 3)
    ]
    assert records[1] == records[0]
    assert records[2] == records[0]
    if path == "bench/models/many_requests.py" and budget < 90:
        assert json.loads(records[0])["budget_hit"], "the budget did not cut the 90-class race"
    assert multiprocessing.active_children() == []


@pytest.mark.slow
@needs_fork
@pytest.mark.timeout(120)
@pytest.mark.parametrize("budget", [20_000, 40], ids=["whole", "cut"])
def test_progress_is_reported_in_the_one_process_order(budget: int) -> None:
    """Every progress report, in order, is the one the one-process search makes: the outcomes counted so far after
    each run, whoever ran it and whenever it arrived; a cut search reports each run once."""
    loaded = _three_requests()
    seen: dict[int, list[tuple[int, int, tuple[tuple[str, int], ...]]]] = {}
    for jobs in (1, 2):
        reports: list[tuple[int, int, tuple[tuple[str, int], ...]]] = []

        def progress(found: Exploration, reports: list[Any] = reports) -> None:
            reports.append((found.schedules, found.pruned, tuple(sorted(found.counts.items()))))

        found = explore_scenario(loaded, jobs=jobs, max_schedules=budget, progress=progress)
        assert len(reports) == found.schedules + found.pruned
        seen[jobs] = reports
    assert seen[2] == seen[1]


_runs_file: Path | None = None


def _noting(loaded: LoadedScenario, fail_at: int | None = None) -> Program:
    """A program whose run notes which process made it (a line per run in a file every process appends to) and,
    with ``fail_at``, raises at a process's ``fail_at``-th run."""
    made = 0

    def run_once(policy: Policy) -> Ran:
        nonlocal made
        made += 1
        if fail_at is not None and made == fail_at:
            raise RuntimeError(f"run {made} failed")
        assert _runs_file is not None
        with _runs_file.open("a") as out:
            out.write(f"{os.getpid()}\n")
        result = run_scenario(loaded, policy=policy, granularity="probe", record_accesses=True)
        assert result.run is not None
        return Ran(result.run, json.dumps(result.observed, sort_keys=True))

    return Program(loaded.cls.actors, run_once)


@pytest.mark.slow
@needs_fork
@pytest.mark.timeout(120)
def test_the_coordinator_runs_nothing_and_workers_share_the_work(tmp_path: Path) -> None:
    """Every run is a worker's (the coordinator only hands out and tallies), both workers made some (the second
    stole from the first), and the exploration is the one-process one."""
    global _runs_file
    loaded = _three_requests()
    _runs_file = tmp_path / "alone"
    alone = Explorer(_noting(loaded)).explore()
    _runs_file = tmp_path / "shared"
    shared = Explorer(_noting(loaded), jobs=2).explore()
    makers = _runs_file.read_text().split()
    assert str(os.getpid()) not in makers
    assert len(set(makers)) == 2, f"runs per process: {sorted(makers.count(p) for p in set(makers))}"
    assert shared.reused >= shared.schedules
    assert (shared.schedules, shared.counts, shared.class_names) == (alone.schedules, alone.counts, alone.class_names)
    assert {k: e.schedule for k, e in shared.executions.items()} == {k: e.schedule for k, e in alone.executions.items()}
    assert multiprocessing.active_children() == []


@pytest.mark.slow
@needs_fork
@pytest.mark.timeout(120)
def test_an_error_in_a_worker_is_met_where_one_process_meets_it(tmp_path: Path) -> None:
    """A run that raises in a worker ends the workers; the error is the one-process search's, at its run."""
    global _runs_file
    _runs_file = tmp_path / "runs"
    loaded = _three_requests()
    with pytest.raises(RuntimeError, match="run 30 failed"):
        Explorer(_noting(loaded, fail_at=30)).explore()
    with pytest.raises(RuntimeError, match="run 30 failed"):
        Explorer(_noting(loaded, fail_at=30), jobs=2).explore()
    assert multiprocessing.active_children() == []


def _slow_here(loaded: LoadedScenario, granularity: str, seconds: float) -> Program:
    """A program whose run is slow in this process only, so that a worker is sure to be ahead of the coordinator."""
    here = os.getpid()

    def run_once(policy: Policy) -> Ran:
        if os.getpid() == here:
            time.sleep(seconds)
        result = run_scenario(loaded, policy=policy, granularity=granularity, record_accesses=True)
        assert result.run is not None
        return Ran(result.run, json.dumps(result.observed, sort_keys=True))

    return Program(loaded.cls.actors, run_once)


def _slow_worker(loaded: LoadedScenario, granularity: str, seconds: float, marker: Path) -> Program:
    """A program whose run is slow in one worker process only: the first to create ``marker``."""
    here = os.getpid()
    mine: list[bool] = []  # per process (each worker is a fork with its own copy)

    def run_once(policy: Policy) -> Ran:
        if os.getpid() != here and not mine:
            try:
                os.close(os.open(marker, os.O_CREAT | os.O_EXCL))
                mine.append(True)
            except FileExistsError:
                mine.append(False)
        if mine and mine[0]:
            time.sleep(seconds)
        result = run_scenario(loaded, policy=policy, granularity=granularity, record_accesses=True)
        assert result.run is not None
        return Ran(result.run, json.dumps(result.observed, sort_keys=True))

    return Program(loaded.cls.actors, run_once)


@pytest.mark.slow
@needs_fork
@pytest.mark.timeout(120)
def test_a_slow_worker_changes_nothing(tmp_path: Path) -> None:
    """One worker much slower than the other (as on a loaded machine): the order results arrive in changes, the
    exploration does not."""
    loaded = _load("tests/soundness/closure_list_locked.py")  # 72 schedules, naive: many items to steal
    alone = Explorer(_slow_here(loaded, "line", 0), reduction=False).explore()
    slow = _slow_worker(loaded, "line", 0.02, tmp_path / "slow")
    shared = Explorer(slow, reduction=False, jobs=2).explore()
    assert alone.reused == 0
    assert shared.reused >= shared.schedules
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
