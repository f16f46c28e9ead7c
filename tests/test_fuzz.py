"""The differential fuzzer: reduced exploration reaches exactly the outcomes naive enumeration reaches.

Hypothesis draws small programs (``tests/fuzz/programs.py``: 2-3 actors of 1-4 steps over attributes, items, a
list, a module global, a standard lock, event and condition) and each is explored at line granularity twice, naively
(the ground truth) and with optimal DPOR; any outcome one reaches and the other does not fails the test, which
prints the smallest such program Hypothesis shrinks to, as a scenario file. A program whose naive enumeration does
not finish within its budget is skipped (``assume``): there is nothing to compare it with.

The default run takes a fixed set of programs (``derandomize=True``); ``pytest -m deep`` takes thousands, in shards
(one seed each) that pytest-xdist runs side by side. The last test feeds the comparison a "reduced" exploration that
drops an outcome, and checks that it fails, and says so readably.
"""

from __future__ import annotations

import dataclasses
import os
from collections import Counter

import pytest
from hypothesis import HealthCheck, assume, given, seed, settings

from lab.scenarios.exploring import ScenarioExploration
from lab.scenarios.loader import LoadedScenario
from tests.fuzz.programs import Comparison, Explore, Program, Step, explore_both, line_exploration, programs, source

DEFAULT_EXAMPLES = 60
"""Programs the default run compares (a fixed set): 5.1 s on this 2-core machine."""

DEEP_SHARDS = 4
DEEP_EXAMPLES = int(os.environ.get("LAB_FUZZ_PROGRAMS_PER_SHARD", "300"))
"""Programs per shard of ``-m deep``: 300 by default (1,200 in all, about two minutes in one process on this 2-core
machine, so that CI stays within its ten minutes); ``LAB_FUZZ_PROGRAMS_PER_SHARD=1250`` runs 5,000 (measured: 8 min
6 s in one process, 109-137 s a shard; 5 min 44 s with ``-n 2``; no difference found)."""

SETTINGS = {"deadline": None, "database": None, "suppress_health_check": [HealthCheck.too_slow]}

tally: Counter[str] = Counter()


def compare(program: Program, explore: Explore = line_exploration) -> None:
    """Explore ``program`` both ways (in a Hypothesis test); skip it if naive enumeration did not finish."""
    found = explore_both(program, explore=explore)
    if found is None:
        tally["skipped"] += 1
    assume(found is not None)
    assert found is not None
    check(found)


def check(found: Comparison) -> None:
    """Fail, printing the program as a scenario file, if the outcomes reached differ."""
    tally["compared"] += 1
    if not found.reduced_complete:
        raise AssertionError(f"the reduced exploration did not finish:\n{found.text}")
    if found.missing or found.extra:
        tally["different"] += 1
        raise AssertionError(found.message())  # raised, not asserted: pytest would indent the program's lines


@pytest.mark.timeout(120)
@settings(derandomize=True, max_examples=DEFAULT_EXAMPLES, **SETTINGS)  # type: ignore[arg-type]
@given(programs())
def test_reduced_exploration_reaches_the_outcomes_naive_enumeration_reaches(program: Program) -> None:
    compare(program)


@pytest.mark.deep
@pytest.mark.timeout(1_200)
@pytest.mark.parametrize("shard", range(DEEP_SHARDS))
def test_thousands_of_programs_reduce_soundly(shard: int) -> None:
    tally.clear()

    @seed(shard)
    @settings(max_examples=DEEP_EXAMPLES, **SETTINGS)  # type: ignore[arg-type]
    @given(programs())
    def run(program: Program) -> None:
        compare(program)

    run()
    print(
        f"shard {shard}: {tally['compared']} programs compared, {tally['skipped']} skipped, "
        f"{tally['different']} different"
    )


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


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_the_fuzzer_finds_and_shrinks_a_reduction_that_drops_an_outcome() -> None:
    @settings(derandomize=True, max_examples=200, **SETTINGS)  # type: ignore[arg-type]
    @given(programs())
    def run(program: Program) -> None:
        compare(program, explore=_dropping)

    with pytest.raises(AssertionError) as caught:
        run()
    message = str(caught.value)
    assert "reduced and naive exploration differ" in message and "only naive reached" in message
    text = message[message.index('"""A program the differential fuzzer generated') :]
    assert "class Fuzzed(Scenario):" in text and "def b(self)" in text
    assert "def c(self)" not in text  # shrunk: two actors are enough to race
    assert compile(text, "shrunk.py", "exec")  # the program as printed is a scenario file


def test_a_printed_program_is_a_scenario_file() -> None:
    program = Program(((Step("locked", 1, (Step("read_item"), Step("write_item", 2))),), (Step("wait_event"),)))
    text = source(program)
    assert 'with self.lock:\n            seen.append(v := self.d["k"])' in text
    compile(text, "program.py", "exec")
