"""The differential fuzzer: reduced exploration reaches exactly the outcomes naive enumeration reaches.

Hypothesis draws small programs (``tests/fuzz``: 2-4 actors of 1-4 steps over every access path the recorder knows:
attributes, items, lists and deques, globals, closure cells, nested containers, generators, callables, a module not
under test, class state, C calls, the standard primitives and queues, sleeps) and each is explored twice at the same
granularity, line or instruction: naively (the ground truth) and with optimal DPOR. Any outcome one reaches and the
other does not fails the test, which prints the smallest such program Hypothesis shrinks to, as a scenario file. A
program whose naive enumeration would not finish within its budget is skipped (``assume``): there is nothing to
compare it with. Deadlocks and actors' errors are outcomes like any other.

The default run takes a fixed set of programs (one fixed seed per shard, :data:`DEFAULT_SHARDS`, so that xdist
spreads them); ``pytest -m deep`` takes thousands, in shards that pytest-xdist runs side by side. The open findings
(``tests/fuzz/findings.py``) are kept out of both and run here as strict xfails. The last tests feed the comparison
a "reduced" exploration that drops an outcome, and check that it fails, and says so readably.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, seed, settings

from lab.scenarios.exploring import ScenarioExploration
from lab.scenarios.loader import LoadedScenario
from tests.fuzz.findings import FINDINGS, FIXED, KNOWN
from tests.fuzz.programs import Program, Step, programs, source
from tests.fuzz.running import Comparison, Explore, explore_both, line_exploration, tally


@dataclasses.dataclass(frozen=True)
class Shard:
    """One test's share of the programs: its granularity, seed, count, and the size of its programs."""

    granularity: str
    seed: int
    examples: int
    limit: int
    """The estimated naive count a program stays within (:func:`tests.fuzz.programs.programs`)."""
    max_actors: int = 3
    min_actors: int = 2

    @property
    def max_naive(self) -> int:
        """The naive enumeration's budget: a program measured over it is skipped."""
        return max(4 * self.limit, 240)

    def __str__(self) -> str:
        return f"{self.granularity}-{self.seed}"


DEFAULT_SHARDS = [
    *(Shard("line", n, 40, 60) for n in range(5)),
    *(Shard("instruction", 100 + n, 40, 60) for n in range(3)),
]
"""The default run: 320 programs in 8 shards (about 1.5 s each on this 2-core machine, 6 s per xdist worker)."""

DEEP_PER_SHARD = int(os.environ.get("LAB_FUZZ_PROGRAMS_PER_SHARD", "250"))
DEEP_SHARDS = [
    *(Shard("line", 1000 + n, DEEP_PER_SHARD, 150) for n in range(11)),
    *(Shard("instruction", 2000 + n, DEEP_PER_SHARD, 150) for n in range(9)),
    Shard("line", 3000, max(DEEP_PER_SHARD // 25, 1), 2600, max_actors=4, min_actors=4),
]
"""``-m deep``: 20 shards of ``LAB_FUZZ_PROGRAMS_PER_SHARD`` programs (250 by default: 5,000) of 2-3 actors at line
and instruction granularity, and one shard of a 25th as many 4-actor programs (10 more; four actors of one step
each are already about 2,500 naive schedules, 3 s a program)."""

CHECKOUT = Path(__file__).resolve().parents[1]

SETTINGS = {"deadline": None, "database": None, "suppress_health_check": [HealthCheck.too_slow]}


def compare(program: Program, granularity: str, max_naive: int, explore: Explore | None = None) -> None:
    """Explore ``program`` both ways (in a Hypothesis test); skip it if naive enumeration would not finish."""
    found = explore_both(program, granularity=granularity, max_naive=max_naive, explore=explore)
    assume(found is not None)
    assert found is not None
    check(found)


def check(found: Comparison) -> None:
    """Fail, printing the program as a scenario file, if the outcomes reached differ, or if the reduced exploration
    ran a redundant execution (optimal DPOR runs none; one is a footprint that changed between runs)."""
    if not found.reduced_complete:
        raise AssertionError(f"the reduced exploration did not finish:\n{found.text}")
    if found.missing or found.extra or found.redundant:
        tally["different"] += 1
        raise AssertionError(found.message())  # raised, not asserted: pytest would indent the program's lines


def run_shard(shard: Shard) -> None:
    @seed(shard.seed)
    @settings(max_examples=shard.examples, **SETTINGS)  # type: ignore[arg-type]
    @given(
        programs(
            shard.granularity,
            min_actors=shard.min_actors,
            max_actors=shard.max_actors,
            limit=shard.limit,
            exclude=KNOWN,
        )
    )
    def run(program: Program) -> None:
        compare(program, shard.granularity, shard.max_naive)

    tally.clear()
    run()
    print(f"shard {shard}: {dict(tally)}")


@pytest.mark.timeout(120)
@pytest.mark.parametrize("shard", DEFAULT_SHARDS, ids=str)
def test_reduced_exploration_reaches_the_outcomes_naive_enumeration_reaches(shard: Shard) -> None:
    run_shard(shard)


@pytest.mark.deep
@pytest.mark.timeout(1_200)
@pytest.mark.parametrize("shard", DEEP_SHARDS, ids=str)
def test_thousands_of_programs_reduce_soundly(shard: Shard) -> None:
    run_shard(shard)


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(name, marks=pytest.mark.xfail(strict=True, reason=finding.title))
        for name, finding in FINDINGS.items()
    ],
)
def test_an_open_finding_still_differs(name: str) -> None:
    """Each open finding's program, compared as the fuzzer compares: it fails while the finding is open (xfail);
    once its cause is fixed it passes, the strict xfail fails, and its steps go back into the grammar."""
    finding = FINDINGS[name]
    found = explore_both(finding.program, granularity=finding.granularity)
    assert found is not None
    check(found)


@pytest.mark.parametrize("name", sorted(FIXED))
def test_a_fixed_finding_stays_fixed(name: str) -> None:
    """Each fixed finding's program, compared as the fuzzer compares: reduced reaches what naive reaches."""
    finding = FIXED[name]
    found = explore_both(finding.program, granularity=finding.granularity)
    assert found is not None
    check(found)


def test_steps_left_out_are_never_drawn() -> None:
    """What keeps an open finding's steps out of the generated programs (``exclude``), on steps drawn often."""
    left_out = frozenset({"read_x", "write_x", "sleep", "append"}) | KNOWN

    @seed(7)
    @settings(max_examples=50, **SETTINGS)  # type: ignore[arg-type]
    @given(programs("line", exclude=left_out))
    def run(program: Program) -> None:
        assert not program.kinds() & left_out

    run()


def _dropping(loaded: LoadedScenario, reduction: bool, max_schedules: int) -> ScenarioExploration:
    """A broken "reduced" exploration: the real one, less the last of its outcomes when it has two or more."""
    found = line_exploration(loaded, reduction, max_schedules)
    if not reduction or len(found.outcomes) < 2:
        return found
    kept = dict(sorted(found.outcomes.items())[:-1])
    return dataclasses.replace(found, outcomes=kept)


def test_a_comparison_with_a_reduction_that_drops_an_outcome_fails_on_a_fixed_race() -> None:
    race = (Step("read_x"), Step("write_x", 1))
    found = explore_both(Program((race, race)), explore=_dropping)
    assert found is not None and len(found.naive.outcomes) == 3  # a lost update among them
    assert len(found.missing) == 1 and not found.extra
    with pytest.raises(AssertionError, match="only naive reached"):
        check(found)


@pytest.mark.parametrize("granularity", ["line", "instruction"])
def test_a_step_taken_while_another_actor_is_parked_for_good_is_no_race_with_its_next_step(granularity: str) -> None:
    """Found by ``-m deep`` (shard line-1006, then shrunk): ``b`` waits alone on a two-party Barrier (parked for
    good), ``a`` then reads its ``broken`` flag, ``c`` does nothing shared. The race analysis raced b's announced
    next step with a's read and planned ``c`` before it, a plan that can never take b's step: its run ended with
    every runnable actor asleep (a redundant execution, 3 runs where 2 classes exist). Fixed in
    ``lab/engine/search/_races.py``: a parked actor's next step races only with steps taken while it could run."""
    program = Program(((Step("bar_broken"),), (Step("bar_wait"),), (Step("local"),)))
    found = explore_both(program, granularity=granularity)
    assert found is not None
    assert found.reduced.blocked == 0 and found.reduced.schedules == 2
    check(found)


def test_a_comparison_whose_reduced_exploration_ran_a_redundant_execution_fails() -> None:
    race = (Step("read_x"), Step("write_x", 1))
    found = explore_both(Program((race, race)))
    assert found is not None and not found.redundant
    check(found)  # the outcomes agree and nothing was redundant
    cut = dataclasses.replace(found, reduced=dataclasses.replace(found.reduced, blocked=1))
    with pytest.raises(AssertionError, match="cut 1 runs as redundant"):
        check(cut)


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_the_fuzzer_finds_and_shrinks_a_reduction_that_drops_an_outcome(tmp_path: Path) -> None:
    @seed(0)
    @settings(max_examples=200, **SETTINGS)  # type: ignore[arg-type]
    @given(programs("line", limit=60, exclude=KNOWN))
    def run(program: Program) -> None:
        compare(program, "line", 240, explore=_dropping)

    with pytest.raises(AssertionError) as caught:
        run()
    message = str(caught.value)
    assert "reduced and naive exploration differ" in message and "only naive reached" in message
    text = message[message.index('"""A program the differential fuzzer generated') :]
    assert "class Fuzzed(Scenario):" in text and "def b(self)" in text
    assert "def c(self)" not in text  # shrunk: two actors are enough to race
    folder = tmp_path / "scenarios"
    folder.mkdir()
    (folder / "fuzzed.py").write_text(text, encoding="utf-8")
    command = message[message.index("PYTHONPATH=. ") :].splitlines()[0].split()[1:]
    command = [part.replace("DIR", str(folder)).replace("OUT", str(tmp_path / "out")) for part in command]
    explored = subprocess.run(
        [sys.executable, "-m", "lab", *command[1:]],
        cwd=CHECKOUT,
        env={**os.environ, "PYTHONPATH": str(CHECKOUT)},
        capture_output=True,
        text=True,
        timeout=100,
    )
    # the command as printed explores it (its verdict is the lab's: INCOMPLETE when the atomicity check wants a
    # finer granularity, exit 1)
    assert explored.returncode in (0, 1) and not explored.stderr, explored.stdout + explored.stderr
    assert "explored fuzzed (line)" in explored.stdout


def test_every_step_of_the_grammar_makes_a_scenario_file_the_lab_explores() -> None:
    """Each kind of step, alone in one actor against a reader of the same place, is a loadable scenario whose two
    explorations finish (guards around a local step)."""
    from tests.fuzz.grammar import STEPS

    for kind, step in STEPS.items():
        made = Step(kind, 2, (Step("local"),)) if step.guard else Step(kind, 2)
        found = explore_both(Program(((made,), (Step("local"),))), granularity="instruction")
        assert found is not None, kind
        assert found.naive.outcomes and found.reduced_complete, kind


def test_a_printed_program_is_a_scenario_file() -> None:
    program = Program(((Step("locked", 1, (Step("read_item"), Step("write_item", 2))),), (Step("wait_event"),)))
    text = source(program)
    assert 'with self.lock:\n            seen += (v := self.d["k"],)' in text
    assert "self.ev = threading.Event()" in text and "self.box" not in text  # only the parts it uses
    compile(text, "program.py", "exec")
