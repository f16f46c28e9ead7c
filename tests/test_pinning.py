"""Pinned counterexamples: a saved file is a readable, lint-clean lesson that passes, and a bad pin is one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from lab import Granularity, Pin
from lab.engine.core import schedule_string
from lab.scenarios.exploring import ExploreVerdict, explore_scenario, replay_scenario
from lab.scenarios.kill_matrix import build_kill_matrix, race_scenario
from lab.scenarios.loader import BrokenScenario, LoadedScenario, load
from lab.scenarios.pinning import OUTCOME_INVARIANT, describe_pin, is_pinned, save_counterexample
from lab.scenarios.runner import Verdict, run_scenario

ROOT = Path(__file__).resolve().parent.parent

# Two actors append to one list under a lab lock; the table forbids the order "b before a". The observed state
# carries a backslash and a triple quote, which the saved docstring must survive.
RACE = '''"""A tiny race whose FORBIDDEN row is reachable."""

from lab import Scenario, acceptable, actor, forbidden


class Tiny(Scenario):
    source = "a test"
    variants = {"Plain": list, "Also": list}
    outcomes = (
        acceptable("a first", order='a\\\\"""b'),
        forbidden("b first, and the history says so", order='b\\\\"""a'),
    )

    def setup(self):
        self.lock = self.lab.lock("log.lock")
        self.log = self.variant()

    @actor
    def a(self):
        with self.lock:
            self.log.append("a")

    @actor
    def b(self):
        with self.lock:
            self.log.append("b")

    def observe(self):
        return {"order": '\\\\"""'.join(self.log)}

    def invariants(self):
        yield "two entries", len(self.log) == 2
'''


def _write(folder: Path, name: str, text: str) -> Path:
    path = folder / f"{name}.py"
    path.write_text(text, encoding="utf-8")
    return path


def _default_schedule(folder: Path) -> str:
    """The schedule in which ``a`` goes first (the default policy's), as a string to pin."""
    race = _loaded(_write(folder, "tiny", RACE))
    result = run_scenario(race, variant="Also")
    assert result.run is not None and result.state == {"order": 'a\\"""b'}
    return schedule_string(result.run.decisions, race.cls.actors)


def _loaded(path: Path) -> LoadedScenario:
    item = load(path)
    assert isinstance(item, LoadedScenario), str(item)
    return item


@pytest.mark.timeout(30)
class TestSavedFile:
    def test_a_forbidden_outcome_is_saved_as_a_passing_lint_clean_lesson(self, tmp_path: Path) -> None:
        """The saved file compiles, keeps every line within 120 characters, and its run passes with the bug shown."""
        race = _loaded(_write(tmp_path, "tiny", RACE))
        found = explore_scenario(race, variant="Also")
        assert found.verdict is ExploreVerdict.FAIL and found.counterexample is not None
        replayed = replay_scenario(race, found.counterexample.schedule, variant="Also")
        path = save_counterexample(tmp_path, "b_first", found, replayed, race.cls.actors)
        text = path.read_text("utf-8")
        compile(text, str(path), "exec")
        assert max(len(line) for line in text.splitlines()) <= 120
        assert 'variant="Also"' in text and f'expect_broken=("{OUTCOME_INVARIANT}",)' in text
        assert "pin=Pin(" in text and "outcomes=only(" in text

        pinned = _loaded(path)
        assert is_pinned(pinned.cls) and not race_scenario(pinned) and race_scenario(race)
        assert pinned.cls.pin == Pin(found.counterexample.schedule, Granularity.PROBE, "Also", race="tiny")
        assert describe_pin(pinned.cls) == "one schedule of tiny (variant Also, probe granularity)"
        assert pinned.lesson.startswith("Counterexample of tiny over Also: FORBIDDEN: b first")
        result = run_scenario(pinned)
        assert result.passed, [(c.name, c.reason) for c in result.checks if not c.passed]
        assert result.state == {"order": 'b\\"""a'} and result.variant == "Also"
        assert result.mutant  # "Also" is not the race's first (correct) variant
        assert any(c.name == f"the bug shows: {OUTCOME_INVARIANT} is broken" and c.passed for c in result.checks)

    def test_an_allowed_outcome_keeps_the_table_invariant_holding(self, tmp_path: Path) -> None:
        """Pinning a schedule whose outcome the table allows: the invariant must hold, and breaking it fails."""
        schedule = _default_schedule(tmp_path)
        allowed = _write(tmp_path, "a_first", PINNED.format(schedule=schedule, order='a\\\\"""b', broken=""))
        result = run_scenario(_loaded(allowed))
        assert result.passed, [(c.name, c.reason) for c in result.checks if not c.passed]
        assert any(c.name == OUTCOME_INVARIANT and c.passed for c in result.checks)
        wrong = _write(
            tmp_path,
            "a_first_wrong",
            PINNED.format(schedule=schedule, order='a\\\\"""b', broken=f"expect_broken=({OUTCOME_INVARIANT!r},),"),
        )
        result = run_scenario(_loaded(wrong))
        assert result.verdict is Verdict.FAIL
        assert [c.name for c in result.checks if not c.passed] == [f"the bug shows: {OUTCOME_INVARIANT} is broken"]

    def test_a_line_granularity_pin_replays_every_recorded_choice(self, tmp_path: Path) -> None:
        """The race's own file is code under test: its lines are scheduling points in the pinned replay too."""
        race = _loaded(_write(tmp_path, "tiny", RACE))
        found = explore_scenario(race, variant="Also", granularity="line")
        assert found.counterexample is not None
        replayed = replay_scenario(race, found.counterexample.schedule, granularity="line", variant="Also")
        pinned = _loaded(save_counterexample(tmp_path, "b_first_lines", found, replayed, race.cls.actors))
        assert pinned.cls.pin is not None and pinned.cls.pin.granularity is Granularity.LINE
        assert "granularity=Granularity.LINE" in (tmp_path / "b_first_lines.py").read_text("utf-8")
        again = replay_scenario(pinned, pinned.cls.pin.schedule, granularity="line", variant="Also")
        assert again.run_status == "FINISHED", again.problem
        assert run_scenario(pinned).passed

    def test_loading_the_pin_and_its_race_gives_one_race_class(self, tmp_path: Path) -> None:
        """A pin loads its race file; loading the race again must not replace the module the pin's class uses."""
        _write(tmp_path, "tiny", RACE)
        pinned = _loaded(_write(tmp_path, "a_first", PINNED.format(schedule="0:01", order="ab", broken="")))
        race = _loaded(tmp_path / "tiny.py")
        assert pinned.cls.__mro__[1] is race.cls
        (tmp_path / "tiny.py").write_text(RACE.replace("A tiny race", "An edited tiny race"), encoding="utf-8")
        assert _loaded(tmp_path / "tiny.py").cls is not race.cls  # an edited file is executed afresh

    def test_the_kill_matrix_leaves_a_pinned_scenario_out(self, tmp_path: Path) -> None:
        _write(tmp_path, "tiny", RACE)
        pinned = _loaded(_write(tmp_path, "a_first", PINNED.format(schedule="0:01", order='a\\\\"""b', broken="")))
        matrix = build_kill_matrix([pinned])
        assert matrix.cells == () and matrix.scenarios == ()


PINNED = '''"""A pinned schedule of tiny."""

from lab import Pin, only, pinned_scenario

AFirst = pinned_scenario(
    "tiny",
    pin=Pin(schedule="{schedule}", variant="Also"),
    outcomes=only(a="DONE", b="DONE", order='{order}'),
    {broken}
)
'''


class TestBadPins:
    @pytest.mark.parametrize(
        ("call", "problem"),
        [
            (
                'pinned_scenario("nowhere", pin=Pin("0:01"), outcomes=only())',
                "pinned_scenario names 'nowhere', which does not load: nowhere.py: cannot be read",
            ),
            (
                'pinned_scenario("tiny", pin=Pin("0:01", variant="Nope"), outcomes=only())',
                "tiny has no variant 'Nope' (variants: Plain, Also)",
            ),
            ('pinned_scenario("tiny", pin=Pin("7:01"), outcomes=only())', "pinned_scenario schedule: schedule step 1"),
            (
                'pinned_scenario("tiny", pin=Pin("0:01", granularity="both"), outcomes=only())',
                "pinned_scenario granularity is one of probe, line",
            ),
            ('pinned_scenario("pinned", pin=Pin("0:01"), outcomes=only())', "which is itself pinned"),
            ('pinned_scenario("tiny", schedule="0:01", outcomes=only())', "unexpected keyword argument 'schedule'"),
            ('pinned_scenario("tiny", pin="0:01", outcomes=only())', "needs pin=Pin(schedule=..."),
        ],
    )
    def test_a_bad_pin_is_one_line_and_the_file_is_broken(self, tmp_path: Path, call: str, problem: str) -> None:
        _write(tmp_path, "tiny", RACE)
        _write(tmp_path, "pinned", PINNED.format(schedule="0:01", order="ab", broken=""))
        text = f'"""A bad pin."""\n\nfrom lab import Pin, only, pinned_scenario\n\nBad = {call}\n'
        item = load(_write(tmp_path, "bad", text))
        assert isinstance(item, BrokenScenario)
        assert "\n" not in item.problem
        assert problem in item.problem, item.problem
