"""Counterexamples explain themselves: the racing accesses whose order decided a FAIL, and the swap that saves it.

Each explanation is checked against the code (the lines come from the sources, not from a copy of the output) and
against the lab itself: the swapped schedule it reports is replayed here and graded with the scenario's table.
"""

from __future__ import annotations

import io
import textwrap
from pathlib import Path

import pytest
from rich.console import Console

from lab.render import print_counterexample
from lab.scenarios.explaining import Explanation, Touch
from lab.scenarios.exploring import ExploreVerdict, ScenarioExploration, explore_scenario, replay_scenario
from lab.scenarios.loader import LoadedScenario, load
from lab.scenarios.outcomes import Grade

ROOT = Path(__file__).resolve().parent.parent
VERSIONED = "lab/sessions/versioned.py"

RACY_COUNTER = '''\
"""Racy: each actor reads a shared counter, then writes it back plus one; one increment can be lost."""

from lab import Scenario, acceptable, actor, forbidden


class RacyCounter(Scenario):
    source = "tests/test_explaining.py: a lost update"
    outcomes = (
        acceptable("both increments counted", hits=2),
        forbidden("one increment lost", hits=1),
    )

    def setup(self) -> None:
        self.counter = {"hits": 0}

    def _bump(self) -> None:
        seen = self.counter["hits"]
        self.counter["hits"] = seen + 1

    @actor
    def a(self) -> None:
        self._bump()

    @actor
    def b(self) -> None:
        self._bump()

    def observe(self) -> dict[str, int]:
        return {"hits": self.counter["hits"]}
'''


def _load(path: Path) -> LoadedScenario:
    loaded = load(path)
    assert isinstance(loaded, LoadedScenario), loaded
    return loaded


def _line(path: Path, text: str) -> int:
    """The number of the one line of ``path`` that contains ``text``."""
    found = [n for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if text in line]
    assert len(found) == 1, (text, found)
    return found[0]


def _explained(found: ScenarioExploration) -> Explanation:
    assert found.verdict is ExploreVerdict.FAIL and found.counterexample is not None
    explanation = found.counterexample.explanation
    assert explanation is not None
    return explanation


def _assert_swap_is_allowed(loaded: LoadedScenario, found: ScenarioExploration, explanation: Explanation) -> None:
    """The swapped run the explanation reports replays to an allowed row of the table, every invariant held."""
    assert explanation.swapped is not None
    again = replay_scenario(
        loaded, explanation.swapped.schedule, granularity=found.granularity, variant=found.variant or None
    )
    assert again.run_status == "FINISHED" and not again.failed_invariants
    row = next(row for row in loaded.cls.outcomes if row.matches(again.observed))
    assert row.grade is not Grade.FORBIDDEN
    assert (str(row.grade), row.reason, again.observed) == (
        explanation.swapped.grade,
        explanation.swapped.reason,
        explanation.swapped.observed,
    )


def _accesses(touches: tuple[Touch, ...]) -> set[tuple[str, str, str, str, int]]:
    return {(t.mode, t.thing, t.key, t.file, t.line) for t in touches}


@pytest.mark.timeout(30)
class TestCheckOutsideLock:
    def test_names_the_version_read_and_the_commit_write_and_the_swap_saves_the_run(self) -> None:
        """slow reads the version outside the lock, fast's commit writes it: fast's write first makes slow STALE."""
        race = _load(ROOT / "scenarios" / "race_two_requests.py")
        found = explore_scenario(race, variant="CheckOutsideLockSession")
        explanation = _explained(found)
        assert explanation.found and explanation.swap is not None
        read = (
            "read",
            "obj:self.session",
            "_version",
            VERSIONED,
            _line(ROOT / VERSIONED, "ticket.version != self._version"),
        )
        write = ("write", "obj:self.session", "_version", VERSIONED, _line(ROOT / VERSIONED, "self._version += 1"))
        first, second = explanation.swap.first, explanation.swap.second
        assert (first.actor, second.actor) == ("slow", "fast") and first.step < second.step
        assert _accesses(first.touches) == {read} and _accesses(second.touches) == {write}
        text = "\n".join(explanation.sentences())
        assert f"slow, step {first.step}: read self.session._version at {VERSIONED}:{read[4]}" in text
        assert f"fast, step {second.step}: write self.session._version at {VERSIONED}:{write[4]}" in text
        assert explanation.swapped is not None and explanation.swapped.grade == "ACCEPTABLE"
        assert explanation.swapped.observed["slow"] == "STALE" and explanation.swapped.observed["fast"] == "COMMITTED"
        _assert_swap_is_allowed(race, found, explanation)
        assert 1 <= explanation.tried <= explanation.swaps <= explanation.races
        assert Explanation.from_json(explanation.to_json()) == explanation

    def test_run_py_prints_it_at_80_columns_between_words(self) -> None:
        """Every wrapped line fits (a path or name longer than a line stands alone, uncut), no word is split, and
        the allowed run's replay command follows whole."""
        found = explore_scenario(_load(ROOT / "scenarios" / "race_two_requests.py"), variant="CheckOutsideLockSession")
        explanation = _explained(found)
        lines = explanation.lines(width=80, indent="    ")
        assert all(len(line) <= 80 or " " not in line.strip() for line in lines)
        assert " ".join(lines).split() == " ".join(explanation.sentences()).split()
        buffer = io.StringIO()
        print_counterexample(Console(file=buffer, width=80, color_system=None), found)
        out = buffer.getvalue().splitlines()
        start = out.index("  why:")
        assert out[start + 1 : start + 1 + len(lines)] == lines
        assert explanation.swapped is not None
        assert out[start + 1 + len(lines)] == (
            f"  allowed: lab replay race_two_requests:{explanation.swapped.schedule} --variant CheckOutsideLockSession"
        )


@pytest.mark.timeout(30)
class TestHonesty:
    def test_no_single_swap_says_so_and_lists_the_races(self) -> None:
        """Trimming single messages breaks whole pairs in every order two commits can take: no swap helps."""
        found = explore_scenario(_load(ROOT / "scenarios" / "race_two_requests.py"), variant="TrimByMessageSession")
        explanation = _explained(found)
        assert not explanation.found and explanation.swapped is None
        assert explanation.racing and explanation.tried == explanation.swaps
        assert explanation.sentences()[0].startswith("no single swap of two racing steps makes this run allowed")
        assert all(race.first.actor != race.second.actor for race in explanation.racing)


@pytest.mark.timeout(30)
def test_a_racy_scenario_of_ones_own_names_its_state_and_lines(tmp_path: Path) -> None:
    """A learner's scenario outside the lab: the key of the shared dict, the file and lines of the read and write."""
    folder = tmp_path / "scenarios"
    folder.mkdir()
    path = folder / "racy_counter.py"
    path.write_text(textwrap.dedent(RACY_COUNTER), encoding="utf-8")
    loaded = _load(path)
    found = explore_scenario(loaded, granularity="line")
    explanation = _explained(found)
    assert explanation.swap is not None
    shown = "scenarios/racy_counter.py"  # relative to the checkout the scenario sits in
    read = ("read", "obj:self.counter", "['hits']", shown, _line(path, "seen = self.counter"))
    write = ("write", "obj:self.counter", "['hits']", shown, _line(path, "] = seen + 1"))
    assert _accesses(explanation.swap.first.touches) == {read}
    assert _accesses(explanation.swap.second.touches) == {write}
    text = "\n".join(explanation.sentences())
    assert f"read self.counter['hits'] at {shown}:{read[4]}" in text
    assert f"write self.counter['hits'] at {shown}:{write[4]}" in text
    _assert_swap_is_allowed(loaded, found, explanation)


def test_an_access_without_a_place_is_named_without_one() -> None:
    """State noted without a file and line (a database row) and the lock operation that began a step get no
    made-up location."""
    row = Touch("read", "obj:db sqlite:chat.db.session:s1", "*", "", 0)
    assert row.describe() == "read db sqlite:chat.db.session:s1 (all of it)"
    lock = Touch("write", "lock", "s1.lock", "", 0)
    assert lock.describe() == "write lock s1.lock (the lock operation that began the step)"
