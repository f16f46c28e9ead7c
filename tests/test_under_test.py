"""The modules under test are found from the scenario, never quietly left out."""

from __future__ import annotations

import os
import sys
import textwrap
from pathlib import Path

import pytest

from lab.scenarios.exploring import ExploreVerdict, explore_scenario
from lab.scenarios.loader import BrokenScenario, LoadedScenario, load
from lab.scenarios.under_test import files_under_test, modules_under_test

_SCENARIO = '''
"""A counter bumped through a helper module next to the scenario: the helper is under test without being named."""

from lab import Scenario, acceptable, actor, forbidden

import {helper} as helper


class Bump(Scenario):
    source = "tests: modules under test"
    {extra}
    outcomes = (
        acceptable("both bumps counted", total=2),
        forbidden("a bump was lost", total=1),
    )

    def setup(self) -> None:
        self.box = helper.Box()

    @actor
    def a(self) -> None:
        helper.bump(self.box)

    @actor
    def b(self) -> None:
        helper.bump(self.box)

    def observe(self) -> dict[str, int]:
        return {{"total": self.box.total}}
'''

_HELPER = """
class Box:
    def __init__(self) -> None:
        self.total = 0


def bump(box: Box) -> None:
    seen = box.total
    box.total = seen + 1
"""


def _write(folder: Path, name: str, helper: str, extra: str = "") -> Path:
    (folder / f"{helper}.py").write_text(textwrap.dedent(_HELPER), encoding="utf-8")
    path = folder / f"{name}.py"
    path.write_text(textwrap.dedent(_SCENARIO).format(helper=helper, extra=extra), encoding="utf-8")
    return path


@pytest.fixture
def on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


@pytest.mark.timeout(30)
def test_a_helper_next_to_the_scenario_is_under_test_and_its_race_is_found(on_path: Path) -> None:
    loaded = load(_write(on_path, "bump_via_helper", "bump_helper_a"))
    assert isinstance(loaded, LoadedScenario), str(loaded)
    assert "bump_helper_a" in modules_under_test(loaded.cls)
    assert explore_scenario(loaded, granularity="line").verdict is ExploreVerdict.FAIL
    assert explore_scenario(loaded, granularity="probe").verdict is ExploreVerdict.INCOMPLETE  # never a PASS


@pytest.mark.timeout(30)
def test_a_helper_reached_through_a_symlink_is_traced(on_path: Path) -> None:
    real = on_path / "real"
    real.mkdir()
    (real / "bump_helper_b.py").write_text(textwrap.dedent(_HELPER), encoding="utf-8")
    os.symlink(real / "bump_helper_b.py", on_path / "bump_helper_b.py")
    path = on_path / "bump_via_link.py"
    path.write_text(textwrap.dedent(_SCENARIO).format(helper="bump_helper_b", extra=""), encoding="utf-8")
    loaded = load(path)
    assert isinstance(loaded, LoadedScenario), str(loaded)
    assert str(real / "bump_helper_b.py") in files_under_test(loaded.cls)
    assert explore_scenario(loaded, granularity="line").verdict is ExploreVerdict.FAIL


def test_a_misspelt_line_module_is_a_broken_scenario(on_path: Path) -> None:
    broken = load(_write(on_path, "bump_misspelt", "bump_helper_c", 'line_modules = ("lab.sesions.versioned",)'))
    assert isinstance(broken, BrokenScenario)
    assert "line_modules names 'lab.sesions.versioned', which cannot be imported" in str(broken)


def test_two_folders_files_of_one_name_stay_two_modules(tmp_path: Path) -> None:
    """A scenario named like another folder's must not replace it: each class keeps its own, instrumented module."""
    first, second = tmp_path / "one", tmp_path / "two"
    first.mkdir()
    second.mkdir()
    for folder in (first, second):
        (folder / "same_name.py").write_text(
            textwrap.dedent(_SCENARIO).format(helper="json", extra="").replace("helper.Box()", "{'total': 0}"),
            encoding="utf-8",
        )
    a, b = load(first / "same_name.py"), load(second / "same_name.py")
    assert isinstance(a, LoadedScenario) and isinstance(b, LoadedScenario)
    assert a.cls.__module__ != b.cls.__module__
    assert os.path.realpath(str(sys.modules[a.cls.__module__].__file__)) == os.path.realpath(first / "same_name.py")
