"""What a note, a probe point and a latch's count-down cost the explorer: nothing they do not touch.

A note is a line of the trace, no access; a probe point is a scheduling point whose step is charged with what it
was seen to touch, so two actors passing probe points of one session conflict only where their steps touch the
same state. Each program below is explored with and without the thing under test: the executions must not grow.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from lab.scenarios.exploring import ExploreVerdict, ScenarioExploration, explore_scenario
from lab.scenarios.loader import LoadedScenario, load

PROGRAM = '''
"""{doc}"""

from lab import Scenario, acceptable, actor


class Program(Scenario):
    source = "tests/test_sync_precision.py"
    line_modules = (__name__,)
    outcomes = (acceptable("anything"),)

    def setup(self) -> None:
        self.probe = self.lab.probe("s1")
        self.shared = ""
        self.mine = {{"a": 0, "b": 0}}

    def _work(self, who: str) -> None:
        for i in range(3):
            {extra}
            self.mine[who] += 1
        self.shared = who

    @actor
    def a(self) -> None:
        self._work("a")

    @actor
    def b(self) -> None:
        self._work("b")

    def observe(self) -> dict[str, object]:
        return {{"shared": self.shared}}
'''

EXTRAS = {
    "plain": "pass",
    "notes": 'self.lab.note(f"{who} step {i}", step=i)',
    "probes": 'self.probe(f"work:{i}")',
    "notes-and-probes": 'self.lab.note(f"{who} step {i}"); self.probe("work")',
}


def _explore(tmp_path: Path, extra: str, granularity: str) -> ScenarioExploration:
    path = tmp_path / f"precision_{extra.replace('-', '_')}.py"
    path.write_text(textwrap.dedent(PROGRAM.format(doc=extra, extra=EXTRAS[extra])))
    loaded = load(path)
    assert isinstance(loaded, LoadedScenario), loaded
    return explore_scenario(loaded, granularity=granularity, max_schedules=5_000)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("granularity", ["probe", "line"])
@pytest.mark.parametrize("extra", ["notes", "probes", "notes-and-probes"])
def test_notes_and_probe_points_add_no_executions(tmp_path: Path, extra: str, granularity: str) -> None:
    plain = _explore(tmp_path, "plain", granularity)
    found = _explore(tmp_path, extra, granularity)
    assert found.verdict is plain.verdict is ExploreVerdict.PASS
    assert set(found.outcomes) == set(plain.outcomes)
    assert found.executions <= plain.executions, (found.executions, plain.executions)
    assert found.blocked == 0  # and none of them redundant
