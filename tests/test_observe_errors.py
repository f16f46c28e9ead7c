"""A run whose checks cannot be made fails the exploration: ``observe()`` raising in some schedule is no PASS.

Graded by its actors' outcomes alone (its state left out), a run whose ``observe()`` raised matched any row that
names no state key (``acceptable("any")``): a race whose symptom is an ``observe()`` that breaks, in the schedules
that reach it, explored PASS. And an ``observe()`` key named like an actor hid that actor's end (a raw TypeError
out of the grading when the value was a dict).
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from lab.scenarios.exploring import ExploreVerdict, explore_scenario
from lab.scenarios.loader import LoadedScenario, load
from lab.scenarios.results import Verdict
from lab.scenarios.runner import run_scenario

_RACY = """
\"\"\"Two actors check, then append; observe() breaks when both did.\"\"\"

from lab import Scenario, acceptable, actor


class ObserveBreaks(Scenario):
    source = "test"
    line_modules = (__name__,)
    outcomes = (acceptable("any"),)

    def setup(self):
        self.items = []

    @actor
    def a(self):
        if not self.items:
            self.items.append("a")

    @actor
    def b(self):
        if not self.items:
            self.items.append("b")

    def observe(self):
        (only,) = self.items  # two items: ValueError
        return {"only": only}
"""

_CLASH = """
\"\"\"observe() returns a key named like an actor.\"\"\"

from lab import Scenario, acceptable, actor


class ObserveClash(Scenario):
    source = "test"
    outcomes = (acceptable("any"),)

    @actor
    def a(self):
        return "x"

    @actor
    def d(self):
        return "y"

    def observe(self):
        return {"d": {"k": 1}}
"""


def _load(tmp_path: Path, name: str, source: str) -> LoadedScenario:
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    loaded = load(path)
    assert isinstance(loaded, LoadedScenario), loaded
    return loaded


def test_an_observe_that_raises_in_some_schedule_fails_the_exploration(tmp_path: Path) -> None:
    found = explore_scenario(_load(tmp_path, "observe_breaks", _RACY), granularity="line")
    assert found.verdict is ExploreVerdict.FAIL
    undeclared = [row for row in found.rows if row.grade == "UNDECLARED"]
    assert undeclared and all("observe() or invariants() raised ValueError" in row.reason for row in undeclared)
    assert found.counterexample is not None and found.counterexample.why.startswith("observe() or invariants()")


def test_an_observe_key_named_like_an_actor_is_one_line(tmp_path: Path) -> None:
    result = run_scenario(_load(tmp_path, "observe_clash", _CLASH))
    assert result.verdict is Verdict.ERROR
    assert result.problem == "observe() returned 'd', which names an actor or the run itself: rename that key"
    found = explore_scenario(_load(tmp_path, "observe_clash_explored", _CLASH))
    assert found.verdict is ExploreVerdict.FAIL
