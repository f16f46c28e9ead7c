"""Time inside actors: ``sleep(0)`` imposes no order, and a busy-wait on ``time.monotonic()`` ends.

Issue 21, point 2. A ``sleep(0)`` once parked the sleeper until another actor took a step, so the step after it
always came after the others' next step: ``sleep(0); self.x = 1`` against a read explored PASS, though real
threads run the write first often. And the virtual clock only moved when an actor slept or a wait timed out, so
``while time.monotonic() - begun < 0.001: pass`` spun on a clock that never moved, and the run ended HUNG. Now an
actor that reads the clock again and finds it unchanged is polling it, and the clock moves on.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from lab.scenarios.exploring import ExploreVerdict, ScenarioExploration, explore_scenario
from lab.scenarios.loader import LoadedScenario, load

HEADER = '''
"""{doc}"""

import threading
import time

from lab import Scenario, acceptable, actor, forbidden, only

'''

SLEEP_THEN_WRITE = """
class SleepThenWrite(Scenario):
    source = "issue 21: a sleep before the raced step"
    line_modules = (__name__,)
    outcomes = (
        acceptable("b read before a wrote", seen=0),
        forbidden("a wrote before b read (a sleep(0) orders nothing)", seen=1),
    )

    def setup(self):
        self.x = 0
        self.seen = -1

    @actor
    def a(self):
        time.sleep(0)
        self.x = 1

    @actor
    def b(self):
        self.seen = self.x

    def observe(self):
        return {"seen": self.seen}
"""

BUSY_WAIT = """
class BusyWait(Scenario):
    source = "issue 21: a busy-wait on the clock"
    line_modules = (__name__,)
    outcomes = only(a="waited", b="DONE")

    def setup(self):
        self.log = []

    @actor
    def a(self):
        begun = time.monotonic()
        while time.monotonic() - begun < {seconds}:
            pass
        return "waited" if time.monotonic() - begun >= {seconds} else "early"

    @actor
    def b(self):
        self.log.append("b")
"""

POLLING = """
class Polling(Scenario):
    source = "a polling loop on sleep(0)"
    line_modules = (__name__,)
    outcomes = only(poller="done")

    def setup(self):
        self.done = False

    @actor
    def poller(self):
        while not self.done:
            time.sleep(0)
        return "done"

    @actor
    def worker(self):
        self.done = True
"""


def _scenario(tmp_path: Path, name: str, body: str) -> LoadedScenario:
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(HEADER.format(doc=name)) + textwrap.dedent(body))
    loaded = load(path)
    assert isinstance(loaded, LoadedScenario), loaded
    return loaded


def _explore(loaded: LoadedScenario, granularity: str, reduction: bool = True) -> ScenarioExploration:
    return explore_scenario(loaded, granularity=granularity, reduction=reduction, max_schedules=2_000)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("granularity", ["probe", "line"])
def test_a_sleep_zero_before_the_raced_step_hides_no_order(tmp_path: Path, granularity: str) -> None:
    loaded = _scenario(tmp_path, "sleep_then_write", SLEEP_THEN_WRITE)
    found = _explore(loaded, granularity)
    assert found.verdict is ExploreVerdict.FAIL
    naive = _explore(loaded, granularity, reduction=False)
    assert set(found.outcomes) == set(naive.outcomes)
    assert {'"seen": 0' in key for key in found.outcomes} == {True, False}  # both orders


@pytest.mark.timeout(60)
@pytest.mark.parametrize("seconds", [0.001, 1.0])
@pytest.mark.parametrize("granularity", ["probe", "line"])
def test_a_busy_wait_on_the_clock_ends(tmp_path: Path, granularity: str, seconds: float) -> None:
    loaded = _scenario(tmp_path, "busy_wait", BUSY_WAIT.replace("{seconds}", repr(seconds)))
    found = _explore(loaded, granularity)
    assert found.verdict is ExploreVerdict.PASS, found.problem
    assert found.executions <= 100


@pytest.mark.timeout(60)
@pytest.mark.parametrize("granularity", ["probe", "line"])
def test_a_polling_loop_on_sleep_zero_explores_in_few_executions(tmp_path: Path, granularity: str) -> None:
    found = _explore(_scenario(tmp_path, "polling", POLLING), granularity)
    assert found.verdict is ExploreVerdict.PASS, found.problem
    assert found.executions <= 10, found.executions
