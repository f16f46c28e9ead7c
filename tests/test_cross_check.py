"""Real threads check the model (``cross_check``): a program whose race runs through something the lab cannot see
(the file system) explores PASS, and real threads show the outcome no schedule reached, a MODEL GAP; a race the
model does see leaves no gap."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lab.errors import UsageError
from lab.scenarios.cross_check import cross_check
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


NOT_CROSS_CHECKED = {
    "row_lock_wait": "needs a PostgreSQL server",
    "deadline_cancels_request": "its outcome is a time on the run's virtual clock (gave_up_after=5.0), which real "
    "time never reads exactly",
}


@pytest.mark.deep
@pytest.mark.timeout(900)
def test_no_shipped_scenario_shows_a_model_gap() -> None:
    """Every shipped scenario, explored at line granularity, against a few real runs each (deadlocks and the
    scenarios that wait on the scripted clock take seconds a run on real threads, so they get fewer)."""
    gaps: list[str] = []
    for path in sorted((ROOT / "scenarios").glob("[!_]*.py")):
        item = load(path)
        if not isinstance(item, LoadedScenario) or item.name in NOT_CROSS_CHECKED:
            continue
        found = explore_scenario(item, granularity="line")
        stops = any('"run": "FINISHED"' not in key for key in found.outcomes)
        slow = "deadline" in path.read_text() or "Pause(" in path.read_text()
        runs, seconds = (1, 13.0) if slow else (2, 1.5) if stops else (10, 5.0)
        gaps += [f"{item.name}: {line}" for line in cross_check(item, runs, seconds=seconds).describe_gaps(found)]
    assert gaps == []
