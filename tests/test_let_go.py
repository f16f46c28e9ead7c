"""The recording lets go of what only it holds (issue 21, point 3): nothing of the lab's keeps a program's objects
alive during a run, so a finalizer runs and a weak cache's entry vanishes in the step that drops the last reference,
as in CPython, and another actor's look-up in the cache is ordered against that death.

The recording keeps the objects it labels that no weak reference can follow (a dict, a list), so that their ids stay
their own; kept so, a dict the program had dropped kept everything in it alive for the whole run. Each program here
failed before (a correct one FAILED, or a racy one PASSED) and is explored at line and instruction granularity.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from lab.scenarios.exploring import ExploreVerdict, ScenarioExploration, explore_scenario
from lab.scenarios.loader import LoadedScenario, load

HEADER = '''
"""{name}"""

import weakref

from lab import Scenario, acceptable, actor, forbidden


class Closing:
    def __init__(self, log, name="closed"):
        self.log, self.name = log, name

    def __del__(self):
        log = self.log  # several lines: each a scheduling point at line granularity, were it not run by a sweep
        name = self.name
        log.append(name)


class Thing:
    pass

'''

GRANULARITIES = ("line", "instruction")
pytestmark = pytest.mark.timeout(120)


def _explore(tmp_path: Path, name: str, body: str, granularity: str, reduction: bool = True) -> ScenarioExploration:
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(HEADER.format(name=name)) + textwrap.dedent(body))
    loaded = load(path)
    assert isinstance(loaded, LoadedScenario), loaded
    return explore_scenario(loaded, granularity=granularity, reduction=reduction, max_schedules=2_000)


DICT_DROPPED = """
class DictDropped(Scenario):
    source = "issue 21: a finalizer held only by a dict an actor drops"
    line_modules = (__name__,)
    outcomes = (acceptable("closed at once", saw=True), forbidden("kept alive", saw=False))

    def setup(self):
        self.log = []
        self.pending = {"k": Closing(self.log)}
        self.saw = None

    @actor
    def a(self):
        self.pending = {}
        self.saw = "closed" in self.log

    def observe(self):
        return {"saw": self.saw}
"""


LIST_DROPPED = """
class ListDropped(Scenario):
    source = "issue 21: a weak cache's thing held only by a list an actor drops"
    line_modules = (__name__,)
    outcomes = (acceptable("gone at once", left=0), forbidden("kept alive", left=1))

    def setup(self):
        self.cache = weakref.WeakValueDictionary()
        self.items = [Thing()]
        self.cache["k"] = self.items[0]
        self.left = None

    @actor
    def a(self):
        self.items = None
        self.left = len(self.cache)

    def observe(self):
        return {"left": self.left}
"""


@pytest.mark.parametrize("granularity", GRANULARITIES)
@pytest.mark.parametrize(("name", "body"), [("dict_dropped", DICT_DROPPED), ("list_dropped", LIST_DROPPED)])
def test_what_only_the_recording_holds_dies_in_the_step_that_dropped_it(
    tmp_path: Path, name: str, body: str, granularity: str
) -> None:
    found = _explore(tmp_path, name, body, granularity)
    assert found.verdict is ExploreVerdict.PASS, found.problem


LOOKUP_FIRST = """
class LookupFirst(Scenario):
    source = "issue 21: a look-up in a weak cache against the death of its thing"
    line_modules = (__name__,)
    outcomes = (
        forbidden("b found the thing: a had not dropped it yet", found="yes"),
        acceptable("the entry had vanished", found="KeyError"),
    )

    def setup(self):
        self.cache = weakref.WeakValueDictionary()
        self.holder = Thing()
        self.cache["k"] = self.holder
        self.found = "not yet"

    @actor
    def a(self):
        self.holder = None

    @actor
    def b(self):
        try:
            self.cache["k"]
        except KeyError:
            self.found = "KeyError"
        else:
            self.found = "yes"

    def observe(self):
        return {"found": self.found}
"""


@pytest.mark.parametrize("granularity", GRANULARITIES)
def test_a_weak_cache_look_up_is_ordered_against_a_death_in_another_actor(tmp_path: Path, granularity: str) -> None:
    """The death writes every weak container the run labelled, so both orders are explored, as naively: the
    reduction once ran only a's drop first (the two steps touched nothing in common) and said PASS."""
    found = _explore(tmp_path, "lookup_first", LOOKUP_FIRST, granularity)
    naive = _explore(tmp_path, "lookup_first", LOOKUP_FIRST, granularity, reduction=False)
    assert found.verdict is ExploreVerdict.FAIL, found.problem
    assert set(found.outcomes) == set(naive.outcomes)


TWO_FINALIZERS = """
class TwoFinalizers(Scenario):
    source = "issue 21: finalizers run by the recording's letting go, in two actors"
    line_modules = (__name__,)
    outcomes = (acceptable("both closed", closed=["a", "b"]),)

    def setup(self):
        self.log = []
        self.first = {"k": Closing(self.log, "a")}
        self.second = {"k": Closing(self.log, "b")}

    @actor
    def a(self):
        self.first = None
        self.first = "dropped"

    @actor
    def b(self):
        self.second = None
        self.second = "dropped"

    def observe(self):
        return {"closed": sorted(self.log)}
"""


@pytest.mark.parametrize("granularity", GRANULARITIES)
def test_finalizers_with_scheduling_points_of_their_own_run_where_the_drop_was(
    tmp_path: Path, granularity: str
) -> None:
    """A finalizer the letting go runs is one with the step that dropped what it finalizes (its lines switch to
    nobody): every run ends, with no exception printed from inside ``__del__`` when the explorer stops a run, the
    same schedules replay (no NondeterminismError), and reduction reaches what naive runs reach."""
    found = _explore(tmp_path, "two_finalizers", TWO_FINALIZERS, granularity)
    naive = _explore(tmp_path, "two_finalizers", TWO_FINALIZERS, granularity, reduction=False)
    assert found.verdict is ExploreVerdict.PASS, found.problem
    assert set(found.outcomes) == set(naive.outcomes)
