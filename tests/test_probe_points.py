"""A hold or signal at a probe point that no code under test announces is one clear error, not a silent no-op."""

from __future__ import annotations

from pathlib import Path

import pytest

from lab.engine.core import Scheduler
from lab.errors import ScenarioError
from lab.scenarios.base import Lab, Scenario
from lab.scenarios.loader import LoadedScenario, load
from lab.scenarios.probe_points import KnownPoints, check_point, known_points, points_in_source
from lab.scenarios.runner import Verdict, run_scenario

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ROOT / "scenarios"


def _scenario(folder: Path, name: str, text: str) -> LoadedScenario:
    path = folder / f"{name}.py"
    path.write_text(text, encoding="utf-8")
    item = load(path)
    assert isinstance(item, LoadedScenario), str(item)
    return item


def _scheduler(*actors: str) -> Scheduler:
    scheduler = Scheduler()
    for actor in actors:
        scheduler.add_actor(actor, lambda: None)
    return scheduler


def _lab(*actors: str) -> Lab:
    return Lab(_scheduler(*actors))


def _with_typo(folder: Path, source: str, right: str, wrong: str) -> LoadedScenario:
    text = (SCENARIOS / f"{source}.py").read_text(encoding="utf-8")
    assert right in text
    return _scenario(folder, "typo", text.replace(right, wrong, 1))


@pytest.mark.timeout(20)
class TestMisspeltPoints:
    def test_a_misspelt_hold_is_one_line_naming_the_known_points(self, tmp_path: Path) -> None:
        """The shipped hold at commit:checked, misspelt: the scenario errors, it does not pass."""
        item = _with_typo(
            tmp_path,
            "mutant_check_outside_lock",
            'hold("slow", at="commit:checked"',
            'hold("slow", at="commit:chekced"',
        )
        result = run_scenario(item)
        assert result.verdict is Verdict.ERROR
        assert "\n" not in result.problem
        assert result.problem.startswith(
            "setup() raised ScenarioError: hold('slow', at='commit:chekced'): "
            "no code under test announces probe point 'commit:chekced'"
        )
        assert "did you mean 'commit:checked'?" in result.problem
        assert "known points: ask:commit, ask:enter," in result.problem
        assert "transport:send" in result.problem and "line_modules" in result.problem

    def test_a_misspelt_signal_is_refused_too(self, tmp_path: Path) -> None:
        item = _with_typo(
            tmp_path,
            "synchronized_blocks_fast",
            'signal("slow", at="transport:send"',
            'signal("slow", at="transport:sent"',
        )
        result = run_scenario(item)
        assert result.verdict is Verdict.ERROR
        assert "signal('slow', at='transport:sent')" in result.problem
        assert "did you mean 'transport:send'?" in result.problem

    def test_every_shipped_hold_and_signal_names_a_known_point(self) -> None:
        """The check rejects nothing the shipped scenarios use (their setup runs without a ScenarioError)."""
        for path in sorted(SCENARIOS.glob("[!_]*.py")):
            item = load(path)
            assert isinstance(item, LoadedScenario), str(item)
            result = run_scenario(item)
            assert "probe point" not in result.problem, (path.name, result.problem)


class TestOwnSessions:
    def test_a_session_in_the_scenario_file_announces_its_own_points(self, tmp_path: Path) -> None:
        """A learner's session beside the scenario: its literal points and f-string points are known."""
        item = _scenario(tmp_path, "own_session", OWN_SESSION)
        result = run_scenario(item)
        assert result.passed, [(c.name, c.reason) for c in result.checks if not c.passed]
        points = known_points(item.cls)
        assert points.allows("mine:before") and points.allows("mine:step-3") and not points.allows("mine:after")

    def test_a_point_only_another_session_announces_is_still_refused(self, tmp_path: Path) -> None:
        item = _scenario(tmp_path, "own_session", OWN_SESSION.replace('at="mine:before"', 'at="mine:after"'))
        result = run_scenario(item)
        assert result.verdict is Verdict.ERROR and "'mine:after'" in result.problem
        assert "mine:before" in result.problem  # listed among the known points

    def test_a_probe_named_by_a_variable_turns_the_check_off(self) -> None:
        """``self._probe(point)`` could announce anything: refusing a name would be a guess, so nothing is."""
        found = points_in_source("def f(self, point):\n    self._probe(point)\n    self._probe('a:b')\n")
        assert found.open and found.allows("anything:at-all")

    def test_what_counts_as_a_probe_call(self) -> None:
        """Probe calls count; the object name given to ``lab.probe(...)`` and unrelated calls do not."""
        found = points_in_source(
            "self._probe('a:one')\nprobe('a:two')\nself.lab.probe('s1')\nlab.probe('s2')\n"
            "self.lab.probe('s3')('a:three')\nprint('not:a-point')\nself._probe(f'{op}:enter')\n"
        )
        assert found.names == frozenset({"a:one", "a:two", "a:three"})
        assert found.allows("commit:enter") and not found.allows("commit:exit")
        assert not found.open

    def test_a_file_that_never_spells_probe_is_not_parsed_yet_normalized_names_are_found(self) -> None:
        """Most files name no probe at all and are not parsed (a worker's cost); a call spelt with letters that
        normalize to ``probe`` is a probe call all the same, so a file that is not plain ASCII is always parsed."""
        assert points_in_source("x = 1\nprint('commit:enter')\n") == KnownPoints(frozenset())
        assert points_in_source("self._ｐrobe('a:wide')\n").names == frozenset({"a:wide"})
        assert points_in_source("self._PROBE('a:loud')\n").names == frozenset({"a:loud"})

    def test_the_lab_checks_points_against_the_scenario_it_was_built_for(self, tmp_path: Path) -> None:
        """The runner hands the lab its scenario class: a hold made from any helper (not just from ``setup``) is
        checked against that scenario's code, with no frame inspection; a lab without one knows only the lab's."""
        item = _scenario(tmp_path, "own_session", OWN_SESSION)
        for_it, by_hand = Lab(_scheduler("second"), item.cls), _lab("second")
        for_it.hold("second", at="mine:before", until=for_it.latch("l"))
        with pytest.raises(ScenarioError, match="no code under test announces probe point 'mine:before'"):
            by_hand.hold("second", at="mine:before", until=by_hand.latch("l"))


class TestLabByHand:
    def test_a_lab_outside_any_scenario_knows_the_lab_s_own_points(self) -> None:
        """Driven from a plain test, the lab checks against its sessions, mutants and transport."""
        lab = _lab("a")
        latch = lab.latch("l")
        lab.hold("a", at="commit:checked", until=latch)
        lab.signal("a", at="transport:send", latch=latch)
        with pytest.raises(ScenarioError, match="no code under test announces probe point 'nowhere'"):
            lab.hold("a", at="nowhere", until=latch)

    def test_a_second_hold_at_one_point_is_a_scenario_error(self) -> None:
        lab = _lab("a")
        lab.hold("a", at="commit:enter", until=lab.latch("l1"))
        with pytest.raises(ScenarioError, match="'a' is already held at 'commit:enter'"):
            lab.hold("a", at="commit:enter", until=lab.latch("l2"))

    def test_check_point_accepts_every_point_of_the_versioned_session(self) -> None:
        for point in ("begin:enter", "commit:enter", "commit:checked", "commit:write"):
            check_point("hold", "a", point, Scenario)


OWN_SESSION = '''"""A learner's own session, announcing its own probe points."""

from lab import Scenario, actor, only


class Counter:
    def __init__(self, probe):
        self._probe = probe
        self.value = 0

    def bump(self, step):
        self._probe("mine:before")
        self._probe(f"mine:step-{step}")
        self.value += 1


class OwnSession(Scenario):
    source = "a test"
    outcomes = only(first="DONE", second="DONE")

    def setup(self):
        self.counter = Counter(self.lab.probe("counter"))
        self.first_done = self.lab.latch("first-done")
        self.lab.hold("second", at="mine:before", until=self.first_done)

    @actor
    def first(self):
        self.counter.bump(1)
        self.first_done.count_down()

    @actor
    def second(self):
        self.counter.bump(2)
'''
