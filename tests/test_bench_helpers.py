"""The helpers the benches share: what they build must be what they say, or every figure printed from it is wrong.

``bench_reduction._with_actors`` makes a scenario with more of its methods as actors; :func:`lab.actor` marks the
function it is handed, so marking the base class's own ``c`` once made it an actor of every later subclass (a
2-worker store explored after a 4-worker one ran four workers, and bench_engine's recording row measured the
4-request race where it said 2). ``bench_engine.peer_venv`` finds the venv frontrun lives in.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bench import bench_engine, bench_jobs
from bench.bench_reduction import _with_actors
from lab.scenarios.loader import LoadedScenario, load

STORE = Path(__file__).resolve().parent.parent / "bench" / "models" / "check_then_act.py"


def test_more_actors_for_one_scenario_leave_the_next_one_as_asked() -> None:
    loaded = load(STORE)
    assert isinstance(loaded, LoadedScenario), loaded
    four = _with_actors(loaded, ("a", "b", "c", "d"))
    two = _with_actors(loaded, ("a", "b"))
    three = _with_actors(loaded, ("a", "b", "c"))
    assert (four.cls.actors, two.cls.actors, three.cls.actors) == (
        ("a", "b", "c", "d"),
        ("a", "b"),
        ("a", "b", "c"),
    )
    assert loaded.cls.actors == ("a", "b")


def test_the_request_race_has_the_requests_asked_for_whatever_came_before() -> None:
    assert bench_jobs._race(4).cls.actors == ("r1", "r2", "r3", "r4")
    assert bench_jobs._race(2).cls.actors == ("r1", "r2")


def test_the_peers_venv_is_the_one_named_else_the_documented_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LAB_PEERS_VENV", raising=False)
    assert bench_engine.peer_venv() == Path("/work/bench-venv")
    monkeypatch.setenv("LAB_PEERS_VENV", "/opt/peers")
    assert bench_engine.peer_venv() == Path("/opt/peers")


def test_without_a_peers_venv_the_row_says_skip_and_the_note_how_to_make_one(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("LAB_PEERS_VENV", str(tmp_path / "absent"))
    rows: list[tuple[str, str, str, str]] = []
    note = bench_engine._frontrun(rows, {"probe": (0.5, 360)})
    assert rows == [("a lab / frontrun s, 4 wk probe", "lab 0.50 s", "< 1", "skip")]
    assert f"python3 -m venv {tmp_path / 'absent'}" in note and "frontrun" in note
