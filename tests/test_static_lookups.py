"""The lab reads attributes of the learner's objects statically: no ``__getattr__`` or property of theirs runs.

A learner's sloppy ``__getattr__`` (KeyError for a missing name, where Python expects AttributeError) used to crash
the scenario when the evidence asked each of its objects for a ``store_name``, and then ``run.py --explore`` of the
whole folder; an actor's return value was asked for ``status`` and ``value`` the same way.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from lab.scenarios.results import outcome_text
from lab.sessions.stores.store import stores_used

ROOT = Path(__file__).resolve().parent.parent


class _Sloppy:
    def __init__(self) -> None:
        self.count = 0

    def __getattr__(self, name: str) -> object:
        raise KeyError(name)


class _Ran:
    calls = 0

    @property
    def store_name(self) -> str:
        _Ran.calls += 1
        return "sqlite:learner"


class _Holder:
    def __init__(self) -> None:
        self.sloppy = _Sloppy()
        self.listed = [_Sloppy(), 3]
        self.keyed = {"x": _Sloppy()}
        self.named = _Ran()


def test_stores_used_runs_none_of_the_learners_code() -> None:
    """A sloppy ``__getattr__`` anywhere among the holder's objects is not called, nor is a learner's property."""
    assert stores_used(_Holder()) == "memory"
    assert _Ran.calls == 0


def test_stores_used_still_finds_a_plain_store_name() -> None:
    """A ``store_name`` kept as plain data (the instance's or the class's) is found as before."""

    class Named:
        store_name = "sqlite:/tmp/x.db"

    holder = _Holder()
    holder.named = Named()  # type: ignore[assignment]
    assert stores_used(holder) == "sqlite:/tmp/x.db"


def test_an_actors_sloppy_return_value_is_named_without_its_getattr() -> None:
    """``outcome_text`` of a value whose ``__getattr__`` raises KeyError is its ``str``, not a crash."""
    sloppy = _Sloppy()
    assert outcome_text(sloppy) == str(sloppy)


@pytest.mark.timeout(120)
def test_explore_of_a_folder_with_a_sloppy_scenario_does_not_crash(tmp_path: Path) -> None:
    """``lab explore`` of a folder holding the soundness program with a sloppy ``__getattr__`` explores it (its race
    FAILs) and writes the folder's evidence, with no traceback."""
    folder = tmp_path / "scenarios"
    folder.mkdir()
    (folder / "sloppy.py").write_text((ROOT / "tests" / "soundness" / "sloppy_getattr.py").read_text())
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, "-m", "lab", "explore", "--out", str(out), "--scenarios", str(folder)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=110,
    )
    assert "Traceback" not in done.stderr + done.stdout, done.stderr[-2000:]
    assert (out / "SHA256SUMS").exists(), done.stdout[-2000:] + done.stderr[-2000:]
    assert "a bump was lost" in done.stdout, done.stdout[-2000:]


_SLOPPY_SCENARIO = '''"""A scenario whose module and class hold objects with a sloppy __getattr__."""

from lab import Scenario, acceptable, actor


class Sloppy:
    def __getattr__(self, name):
        raise KeyError(name)


AT_MODULE_LEVEL = Sloppy()


class Loads(Scenario):
    source = "a sloppy __getattr__ at module and class level"
    outcomes = (acceptable("done"),)
    kept = Sloppy()

    @actor
    def a(self) -> None:
        pass
'''


def test_a_scenario_with_sloppy_objects_at_module_and_class_level_loads(tmp_path: Path) -> None:
    """Finding the modules under test (each module-level value's module) and checking the class's actors (what each
    class attribute wraps) run none of the learner's ``__getattr__``."""
    from lab.scenarios.loader import LoadedScenario, load
    from lab.scenarios.under_test import modules_under_test

    path = tmp_path / "sloppy_levels.py"
    path.write_text(_SLOPPY_SCENARIO)
    loaded = load(path)
    assert isinstance(loaded, LoadedScenario), loaded
    assert loaded.cls.__module__ in modules_under_test(loaded.cls)
