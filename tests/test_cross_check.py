"""Real threads check the model (``cross_check``): a program whose race runs through something the lab cannot see
(the file system) explores PASS, and real threads show the outcome no schedule reached, a MODEL GAP; a race the
model does see leaves no gap."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from lab.errors import ScenarioError, UsageError
from lab.scenarios.cross_check import check_exploration, cross_check
from lab.scenarios.exploring import explore_scenario
from lab.scenarios.loader import LoadedScenario, load
from lab.testing import ExplorationFailed, explore_code
from tests.own_code import flag_files

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_race_through_the_file_system_is_a_model_gap(tmp_path: Path) -> None:
    """The two actors run code the lab does not record (tests/own_code/flag_files.py is not under test), so one
    schedule is all DPOR runs (the writer first); real threads, started together, let the checker look first."""

    def fresh(_lab: object) -> dict[str, Any]:
        folder = tmp_path / f"run{len(list(tmp_path.iterdir()))}"
        folder.mkdir()
        return {"folder": str(folder)}

    with pytest.raises(ExplorationFailed, match="MODEL GAP: real threads reached") as failed:
        explore_code(
            setup=fresh,
            actors={"writer": flag_files.write_flag, "checker": flag_files.see_flag},
            mode="prove",
            strategy="dpor",  # the model's own claim: one class of schedules covers them all
            cross_check=100,
        )
    assert "not PASS" in str(failed.value)


def _overslept(state: dict[str, Any]) -> bool:
    started = time.monotonic()
    time.sleep(0.01)
    return round(time.monotonic() - started, 6) > 0.01


def test_a_clock_kept_exact_is_a_model_gap() -> None:
    """The lab's runs keep a virtual clock, on which a 10 ms sleep takes exactly 10 ms; on real threads it always
    takes a little longer: every schedule says False, every real run True."""
    with pytest.raises(ExplorationFailed, match="MODEL GAP: real threads reached") as failed:
        explore_code(setup=lambda _lab: {}, actors={"sleeper": _overslept}, cross_check=10)
    assert "sleeper=True" in str(failed.value) and "in 10 of 10 runs" in str(failed.value)


def _loaded(name: str) -> LoadedScenario:
    item = load(ROOT / "scenarios" / f"{name}.py")
    assert isinstance(item, LoadedScenario), item
    return item


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_race_the_model_sees_leaves_no_gap() -> None:
    race = _loaded("race_two_requests")
    found = explore_scenario(race, granularity="line")
    checked = cross_check(race, 100)
    assert checked.runs == 100 and sum(checked.reached.values()) + checked.setup_failures == 100
    assert checked.gaps(found) == []


def test_a_cross_check_needs_runs() -> None:
    with pytest.raises(UsageError, match="needs a number of runs >= 1"):
        cross_check(_loaded("race_two_requests"), 0)


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_contained_real_runs_leave_no_thread_behind() -> None:
    """A deadlock's real runs HUNG, and their threads cannot be stopped: made in a child process, they end with it."""
    deadlock = _loaded("abba_deadlock")
    found = explore_scenario(deadlock, granularity="probe")
    before = threading.active_count()
    checked = check_exploration(deadlock, found, 2, seconds=0.5, contained=True)
    assert checked.cross_check is not None and checked.cross_check.runs == 2 and not checked.gap_lines
    assert any('"run": "HUNG"' in key for key in checked.cross_check.reached)
    assert threading.active_count() == before


LEAVES = '''"""An actor that ends its process on a cross-check's real threads (exploring it would end the test)."""

import os
import threading

from lab import Scenario, actor


class Leaves(Scenario):
    source = "a test"

    @actor
    def quitter(self) -> None:
        if threading.current_thread().name.startswith("cross-check"):
            os._exit(7)
'''


def test_a_child_that_ends_without_reporting_is_one_line(tmp_path: Path) -> None:
    """Code under study that ends its process in a real run ends the child, never the command, which says so."""
    (tmp_path / "leaves.py").write_text(LEAVES, encoding="utf-8")
    item = load(tmp_path / "leaves.py")
    assert isinstance(item, LoadedScenario), item
    found = explore_scenario(item, granularity="probe")
    with pytest.raises(ScenarioError, match=r"ended before it reported \(exit code 7\)"):
        check_exploration(item, found, 1, contained=True)


def _not_checked(item: LoadedScenario) -> str:
    """Why a shipped scenario is not cross-checked here: what it declares, or that it needs a PostgreSQL server
    (row_lock_wait, which test_row_lock_wait_on_real_threads checks against one)."""
    return str(item.cls.not_cross_checked) or ("needs a PostgreSQL server" if item.name == "row_lock_wait" else "")


def test_only_a_scenario_that_reads_the_virtual_clock_says_it_cannot_be_cross_checked() -> None:
    """Every shipped scenario is cross-checked but one whose outcome is a time on the run's clock, which says so."""
    declared = {}
    for path in sorted((ROOT / "scenarios").glob("[!_]*.py")):
        item = load(path)
        if isinstance(item, LoadedScenario) and item.cls.not_cross_checked:
            declared[item.name] = item.cls.not_cross_checked
    assert list(declared) == ["deadline_cancels_request"]
    assert "virtual clock" in declared["deadline_cancels_request"]


@pytest.mark.deep
@pytest.mark.timeout(900)
def test_no_shipped_scenario_shows_a_model_gap() -> None:
    """Every shipped scenario, explored at line granularity, against a few real runs each (deadlocks and the
    scenarios that wait on the scripted clock take seconds a run on real threads, so they get fewer)."""
    gaps: list[str] = []
    for path in sorted((ROOT / "scenarios").glob("[!_]*.py")):
        item = load(path)
        if not isinstance(item, LoadedScenario) or _not_checked(item):
            continue
        found = explore_scenario(item, granularity="line")
        stops = any('"run": "FINISHED"' not in key for key in found.outcomes)
        slow = "deadline" in path.read_text() or "Pause(" in path.read_text()
        runs, seconds = (1, 5.0) if slow else (2, 1.5) if stops else (10, 5.0)
        gaps += [f"{item.name}: {line}" for line in cross_check(item, runs, seconds=seconds).describe_gaps(found)]
    assert gaps == []


@pytest.mark.deep
@pytest.mark.timeout(300)
def test_row_lock_wait_on_real_threads(postgres_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """With a PostgreSQL server, the lesson of the server's row lock is cross-checked like any other: real threads
    reach both of its outcomes (the waiter refused by the server, or not), and nothing the exploration did not."""
    from lab.sessions.stores import POSTGRES_URL_VARIABLE

    monkeypatch.setenv(POSTGRES_URL_VARIABLE, postgres_url)
    item = _loaded("row_lock_wait")
    for granularity in ("probe", "line"):
        found = explore_scenario(item, granularity=granularity)
        assert cross_check(item, 10).describe_gaps(found) == []


@pytest.mark.deep
@pytest.mark.timeout(1800)
def test_no_soundness_program_shows_a_model_gap() -> None:
    """Each program of tests/soundness/, racy and correct twin, explored at line granularity (instruction for a race
    within one line, which line granularity cannot split), then run 20 times on real threads: nothing they reach is
    unexplored. (Real threads rarely hit a race a few bytecodes wide: this holds the model to what they do reach.)"""
    from tests.test_soundness import ONE_LINE, PROGRAM_NAMES, PROGRAMS

    gaps: list[str] = []
    for name in PROGRAM_NAMES:
        item = load(PROGRAMS / f"{name}.py")
        assert isinstance(item, LoadedScenario), str(item)
        found = explore_scenario(item, granularity="instruction" if name in ONE_LINE else "line", max_schedules=5_000)
        gaps += [f"{name}: {line}" for line in cross_check(item, 20).describe_gaps(found)]
    assert gaps == []
