"""Systematic exploration: every outcome found, reductions sound, replay honest, mutants killed."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from lab.engine.core import Decision, Policy, ReplayPolicy, RunResult, Scheduler, parse_schedule, schedule_string
from lab.engine.search import Explorer, Program, Ran
from lab.engine.sync import LabLock
from lab.errors import UsageError
from lab.scenarios.exploring import ExploreVerdict, explore_scenario, replay_scenario
from lab.scenarios.kill_matrix import build_kill_matrix
from lab.scenarios.loader import LoadedScenario, load
from lab.scenarios.pinning import save_counterexample
from lab.scenarios.runner import run_scenario

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ROOT / "scenarios"


def _load(name: str, folder: Path = SCENARIOS) -> LoadedScenario:
    item = load(folder / f"{name}.py")
    assert isinstance(item, LoadedScenario), str(item)
    return item


def _counter_race(locks: tuple[str, str], steps: int = 2) -> Program:
    """Two actors, each doing ``steps`` lock round trips; with one shared lock every order matters."""

    def run_once(policy: Policy) -> Ran:
        scheduler = Scheduler(policy=policy)
        order: list[str] = []
        made = {name: LabLock(scheduler, name) for name in set(locks)}

        def actor(name: str, lock: LabLock):  # type: ignore[no-untyped-def]
            def body() -> None:
                for _ in range(steps):
                    with lock:
                        order.append(name)

            return body

        scheduler.add_actor("a", actor("a", made[locks[0]]))
        scheduler.add_actor("b", actor("b", made[locks[1]]))
        run = scheduler.run()
        return Ran(run, "".join(order))

    return Program(("a", "b"), run_once)


@pytest.mark.timeout(30)
class TestExplorer:
    def test_finds_every_order_of_conflicting_steps(self) -> None:
        """With one shared lock, every interleaving of the critical sections is reached."""
        found = Explorer(_counter_race(("l", "l"))).explore()
        assert set(found.counts) == {"aabb", "abab", "abba", "baab", "baba", "bbaa"}
        assert found.complete

    def test_independent_actors_need_one_schedule(self) -> None:
        """Actors on different locks commute: reduction runs one schedule, naive runs them all."""
        reduced = Explorer(_counter_race(("l1", "l2"))).explore()
        naive = Explorer(_counter_race(("l1", "l2")), reduction=False).explore()
        assert reduced.schedules == 1
        assert naive.schedules > 1
        assert {k for k in naive.counts} >= {k for k in reduced.counts}

    def test_reduction_never_loses_an_outcome(self) -> None:
        """The reduced exploration reaches exactly the outcomes the naive one reaches, with fewer schedules."""
        reduced = Explorer(_counter_race(("l", "l"), steps=3)).explore()
        naive = Explorer(_counter_race(("l", "l"), steps=3), reduction=False).explore()
        assert set(reduced.counts) == set(naive.counts)
        assert len(naive.counts) == math.comb(6, 3)
        assert reduced.schedules <= naive.schedules

    def test_preemption_bound_is_incomplete_not_pass(self) -> None:
        """A bound that cut the search makes the result incomplete."""
        found = Explorer(_counter_race(("l", "l"), steps=3), preemption_bound=0).explore()
        assert found.bounded and not found.complete
        assert len(found.counts) < math.comb(6, 3)

    def test_budget_is_incomplete(self) -> None:
        """Running out of schedule budget is reported, never a pass."""
        found = Explorer(_counter_race(("l", "l"), steps=3), max_schedules=3).explore()
        assert found.budget_hit and not found.complete


class TestScheduleStrings:
    def test_round_trip(self) -> None:
        """A schedule string names each choice and the actors that could run there."""
        decisions = [Decision(("a", "b"), "a"), Decision(("b",), "b"), Decision(("a", "b"), "b")]
        text = schedule_string(decisions, ("a", "b"))
        assert text == "0:01-1:01"
        assert parse_schedule(text, ("a", "b")) == [("a", ("a", "b")), ("b", ("a", "b"))]

    @pytest.mark.parametrize("bad", ["0", "9:01", "0:0z", "1:0", "x:01"])
    def test_malformed_strings_are_usage_errors(self, bad: str) -> None:
        """A schedule string that does not fit the actors is refused in one line."""
        with pytest.raises(UsageError, match="schedule step 1"):
            ReplayPolicy(bad, ("a", "b"))


@pytest.mark.timeout(60)
class TestScenarioExploration:
    def test_latch_scenario_leaves_exactly_its_one_outcome(self) -> None:
        """out_of_order_commit's latches allow one outcome under every schedule."""
        found = explore_scenario(_load("out_of_order_commit"))
        assert found.verdict is ExploreVerdict.PASS
        assert found.distinct == 1 and found.rows[0].schedules == found.schedules

    def test_correct_race_passes_at_both_granularities(self) -> None:
        """The correct session's two-request race is fully explored, PASS, probe and line."""
        for granularity in ("probe", "line"):
            found = explore_scenario(_load("race_two_requests"), granularity=granularity)
            assert found.verdict is ExploreVerdict.PASS, granularity
            assert found.distinct == 3
            assert [row.schedules > 0 for row in found.rows] == [True, True, True, False]  # FORBIDDEN: 0

    def test_counterexample_replays_and_is_shortest_reported(self) -> None:
        """A mutant's forbidden outcome comes with a schedule that replays to it."""
        found = explore_scenario(_load("race_two_requests"), variant="CheckOutsideLockSession")
        assert found.verdict is ExploreVerdict.FAIL
        example = found.counterexample
        assert example is not None and example.replayed
        assert example.observed["slow"] == example.observed["fast"] == "COMMITTED"
        replayed = replay_scenario(_load("race_two_requests"), example.schedule, variant="CheckOutsideLockSession")
        assert replayed.observed == example.observed

    def test_replay_stops_where_the_code_diverges(self) -> None:
        """A schedule recorded on one variant diverges on another, and the replay says where."""
        found = explore_scenario(_load("race_two_requests"), variant="CheckOutsideLockSession")
        assert found.counterexample is not None
        replayed = replay_scenario(_load("race_two_requests"), found.counterexample.schedule)
        assert replayed.run_status == "DIVERGED"
        assert "choice" in replayed.problem

    def test_unprobed_mutant_needs_line_granularity(self) -> None:
        """The mutant with no probes and no lock is INCOMPLETE (not PASS) at the default granularity, dies at line."""
        race = _load("race_two_requests")
        at_probe = explore_scenario(race, variant="UnlockedSession")
        assert at_probe.verdict is ExploreVerdict.INCOMPLETE  # never a silent PASS: the race lies between probes
        assert "re-explore with --granularity line" in at_probe.problem and "_version" in at_probe.problem
        assert explore_scenario(race, variant="UnlockedSession", granularity="line").verdict is ExploreVerdict.FAIL

    @pytest.mark.slow
    def test_kill_matrix_kills_every_mutant_and_spares_the_correct(self) -> None:
        """Every mutant is killed by some race scenario; no correct variant is killed by any."""
        races = [
            _load(n)
            for n in ("race_two_requests", "race_duplicate_delivery", "race_failed_reply", "race_chat_two_questions")
        ]
        matrix = build_kill_matrix(races)
        assert matrix.problems() == []
        assert set(matrix.correct) == {"VersionedSession", "TransactionalChat"}
        assert len(matrix.variants) == 8

    def test_saved_counterexample_is_a_passing_lesson(self, tmp_path: Path) -> None:
        """--save-scenario writes a readable pinned scenario that replays the race and shows the bug."""
        (tmp_path / "race_two_requests.py").write_text((SCENARIOS / "race_two_requests.py").read_text("utf-8"))
        race = _load("race_two_requests", tmp_path)
        found = explore_scenario(race, variant="CheckOutsideLockSession")
        assert found.counterexample is not None
        replayed = replay_scenario(race, found.counterexample.schedule, variant="CheckOutsideLockSession")
        path = save_counterexample(tmp_path, "double_commit", found, replayed, race.cls.actors)
        text = path.read_text("utf-8")
        assert "pinned_scenario(" in text and "switch" not in text.splitlines()[0]
        pinned = _load("double_commit", tmp_path)
        result = run_scenario(pinned)
        assert result.passed, [c for c in result.checks if not c.passed]
        assert result.mutant
        with pytest.raises(UsageError, match="already exists"):
            save_counterexample(tmp_path, "double_commit", found, replayed, race.cls.actors)


def test_a_naive_bound_past_the_float_range_still_prints() -> None:
    """Line granularity on a long scenario has a multinomial beyond 1e308: it printed a traceback once."""
    from lab.render import naive_text

    assert naive_text(705_432) == "705432"
    assert naive_text(705_432 * 10**20) == "7.1e+25"
    assert naive_text(15 * 10**399) == "1.5e+400"


def test_a_partial_kill_matrix_notes_survivors_instead_of_failing() -> None:
    """--scenario NAME builds the matrix of NAME only: a mutant another race kills is noted, not a failure."""
    from lab.scenarios.kill_matrix import KillCell, KillMatrix

    cells = (
        KillCell("Correct", "race_a", "probe", "survived", 4),
        KillCell("Mutant", "race_a", "probe", "survived", 4),
    )
    whole = KillMatrix(("Correct", "Mutant"), ("race_a",), ("Correct",), cells)
    part = KillMatrix(("Correct", "Mutant"), ("race_a",), ("Correct",), cells, partial=True)
    assert whole.problems() == ["mutant Mutant survived every race scenario"] and whole.notes() == []
    assert part.problems() == []
    assert part.notes() == [
        "mutant Mutant was not killed by race_a; whether another race scenario kills it, only "
        "the whole matrix (every race scenario) says"
    ]
    killed_correct = KillMatrix(
        ("Correct",),
        ("race_a",),
        ("Correct",),
        (KillCell("Correct", "race_a", "probe", "killed", 4, "0:01", "FORBIDDEN"),),
        partial=True,
    )
    assert killed_correct.problems()  # a correct variant killed is a failure, whatever the selection


class TestProgram:
    """The explorer's contract with its callers is one object; a malformed one is refused with one line."""

    def test_a_program_is_refused_when_malformed(self) -> None:
        run = _counter_race(("l", "l")).run
        with pytest.raises(UsageError, match="tuple of names"):
            Program(["a", "b"], run)  # type: ignore[arg-type]
        with pytest.raises(UsageError, match="distinct names"):
            Program(("a", "a"), run)
        with pytest.raises(UsageError, match="both a digest and an adopt"):
            Program(("a", "b"), run, digest=lambda run: ())
        with pytest.raises(UsageError, match="explores a Program"):
            Explorer(run)  # type: ignore[arg-type]

    def test_every_run_is_digested_and_adopted_in_the_search_order(self) -> None:
        """What a run adds to the caller's checks reaches ``adopt`` once per execution, in the order they ran."""
        base = _counter_race(("l", "l"))
        adopted: list[tuple[str, ...]] = []

        def digest(run: RunResult) -> tuple[str, ...]:
            return tuple(decision.chosen for decision in run.decisions)

        program = Program(base.actors, base.run, digest, lambda parts: adopted.append(tuple(map(str, parts))))
        found = Explorer(program).explore()
        assert len(adopted) == found.executions_run == 6
        assert len(set(adopted)) == 6  # six different schedules, each adopted once
