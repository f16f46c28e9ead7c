"""The reduction loses no outcome: tiny racy programs, each explored with and without it, at every granularity.

Partial-order reduction is only as sound as its footprints: two steps declared independent are run in one order
only, so a conflict the footprints miss (a module global, a closure cell, a container passed along, a helper in
another module, ``self.store.version``, a property, a slot, a class attribute, ``getattr``, one spelling of the
state against another) prunes the very schedule that breaks the program. These tests hold the explorer to three
promises, over the programs in ``tests/soundness/`` (each a racy program and its correct twin):

1. reduction keeps every outcome: the set of outcomes reached with reduction is the set a naive enumeration of the
   same scheduling points reaches;
2. a racy program FAILs at line and at instruction granularity (the one-line read-modify-write may be INCOMPLETE at
   line granularity, never PASS), and at probe granularity it is never called a PASS when its race lies between
   probes; its correct twin PASSes everywhere;
3. every outcome that seeded random schedules of a shipped race scenario reach is in its reduced exploration.

The naive baseline is exhaustive wherever that stays cheap: for every racy program up to 300 schedules (100 at
instruction granularity, where every access is a scheduling point), for a twin when its naive bound (the
multinomial of its steps) is at most 300. Where the naive enumeration is cut short or not run, the baseline is what
it did reach plus a fixed number of seeded random schedules, and the reduced set must contain all of it (equality
needs every schedule). At instruction granularity that comparison runs with ``pytest -m deep`` (run by .ci/run),
which also takes each racy program cut short to 1,000 naive schedules, and checks that two processes find what one
finds. Which comparisons fall back depends only on the
programs and the engine, never on luck: today most racy programs at instruction granularity, two_locks,
split_critical_section and lab_release_then_write at line too, and the locked twins at line and instruction (a few
hundred naive schedules each, for one or two outcomes that any random schedule of each lock order reaches).
"""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

from lab.engine.core import DecisionPoint
from lab.evidence.records.exploration import exploration_record
from lab.scenarios.exploring import (
    EXPLORE_WATCHDOG_SECONDS,
    ExploreVerdict,
    ScenarioExploration,
    explore_scenario,
    outcome_key,
)
from lab.scenarios.loader import LoadedScenario, discover, load
from lab.scenarios.runner import run_scenario

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # the programs import their helpers as tests.soundness._shared

PROGRAMS = ROOT / "tests" / "soundness"
SCENARIOS = ROOT / "scenarios"

RACY_TWINS: dict[str, str] = {
    "global_counter": "global_counter_locked",
    "nonlocal_counter": "nonlocal_counter_locked",
    "closure_list": "closure_list_locked",
    "argument_dict": "argument_dict_locked",
    "helper_module": "helper_module_locked",
    "helper_outside": "helper_outside_locked",
    "deposit_outside": "deposit_outside_locked",
    "nested_object": "nested_object_locked",
    "property_balance": "property_balance_separate",
    "slots_seat": "slots_seat_locked",
    "dataclass_stock": "dataclass_stock_locked",
    "class_attribute": "class_attribute_locked",
    "inherited_class_attribute": "inherited_class_attribute_locked",
    "super_attribute": "super_attribute_locked",
    "shadowed_class_attribute": "shadowed_class_attribute_locked",
    "cached_total": "cached_total_locked",
    "decorated_method": "decorated_method_locked",
    "getattr_setattr": "getattr_setattr_locked",
    "vars_alias": "vars_alias_locked",
    "bound_method": "bound_method_locked",
    "default_argument": "default_argument_locked",
    "aliased_attributes": "aliased_attributes_locked",
    "check_then_act": "check_then_act_locked",
    "one_line_rmw": "one_line_rmw_locked",
    "three_actors": "three_actors_capped",
    "two_preemptions": "two_preemptions_locked",
    "one_sided_lock": "counter_one_lock",
    "two_locks": "counter_one_lock",
    "split_critical_section": "single_critical_section",
    "registry_set_up": "registry_set_up_locked",
    "class_default_set_up": "class_default_set_up_locked",
    "globals_dict": "globals_dict_locked",
    "missing_key_subclass": "missing_key_subclass_locked",
    "comprehension_global": "comprehension_global_locked",
    "walrus_global": "walrus_global_locked",
    "walrus_nonlocal": "walrus_nonlocal_locked",
    "for_target_global": "for_target_global_locked",
    "passed_bound_method": "passed_bound_method_locked",
    "key_bound_method": "key_bound_method_locked",
    "partial_method": "partial_method_locked",
    "loop_pop": "loop_pop_locked",
    "genexpr_pop": "genexpr_pop_locked",
    "map_callback": "map_callback_locked",
    "dict_view": "dict_view_locked",
    "dict_iterator": "dict_iterator_locked",
    "nested_compare": "nested_compare_locked",
    "dataclass_equal": "dataclass_equal_locked",
    "fstring_nested": "fstring_nested_locked",
    "sorted_nested": "sorted_nested_locked",
    "try_acquire_mid_section": "try_acquire_under_lock",
    "locked_query_mid_section": "locked_query_under_lock",
    "lab_lock_locked_query": "lab_lock_locked_query_under_lock",
    "sleep_vs_timed_wait": "sleep_within_timed_wait",
    "timed_acquire": "timed_acquire_patient",
    "signal_then_write": "write_then_signal",
    "lab_signal_then_write": "lab_write_then_signal",
    "release_then_write": "write_then_release",
    "lab_release_then_write": "lab_write_then_release",
    "weak_entry_dropped": "weak_entry_dropped_after",
    "weak_set_member": "weak_set_member_kept",
    "sloppy_getattr": "sloppy_getattr_locked",
    "shared_generator": "shared_generator_locked",
    "quiet_generator": "quiet_generator_locked",
    "generator_send_throw": "generator_send_throw_locked",
    "coroutine_send": "coroutine_send_locked",
    "barrier_broken": "barrier_broken_locked",
    "queue_unfinished": "queue_unfinished_locked",
    "queue_contents": "queue_contents_locked",
    "semaphore_value": "semaphore_value_locked",
    "methodcaller_inside": "methodcaller_inside_locked",
    "helper_outside_deep": "helper_outside_deep_locked",
    "chainmap_write": "chainmap_write_locked",
    "exec_shared": "exec_shared_locked",
    "eval_global": "eval_global_locked",
    "singledispatch_registry": "singledispatch_registry_locked",
    "getter_outside": "getter_outside_locked",
    "barrier_waiting": "barrier_waiting_after",
    "lab_latch_count": "lab_latch_count_locked",
    "chainmap_iterate": "chainmap_iterate_locked",
    "callback_outside": "callback_outside_locked",
    "chainmap_len": "chainmap_len_locked",
    "getattr_outside": "getattr_outside_locked",
    "sleep_then_write": "sleep_then_write_ordered",
    "asyncio_sleep": "asyncio_sleep_locked",
    "busy_wait": "busy_wait_locked",
    "thread_local_id": "thread_local_id_locked",
    "context_var_id": "context_var_id_locked",
    "logging_handlers": "logging_handler_shared",
    "count_ids": "count_ids_local",
    "weak_cache": "weak_cache_checked",
    "finalizer_count": "finalizer_log",
}
"""Each racy program and its correct twin (the same program under one lab lock, or with the race removed)."""

RACY = tuple(RACY_TWINS)
TWINS = tuple(dict.fromkeys(RACY_TWINS.values()))
PROGRAM_NAMES = (*RACY, *TWINS)

VISIBLE_AT_PROBES = frozenset(
    {
        "split_critical_section",
        "three_actors",
        "nested_compare",
        "dataclass_equal",
        "fstring_nested",
        "sorted_nested",
        "missing_key_subclass",
        "try_acquire_mid_section",
        "locked_query_mid_section",
        "lab_lock_locked_query",
        "sleep_vs_timed_wait",
        "timed_acquire",
    }
)
"""Racy programs whose race falls at probe points (lock operations, actor boundaries): probe granularity FAILs."""

ONE_LINE = frozenset({"one_line_rmw"})
"""Racy programs whose read and write share one line: line granularity cannot split them, so FAIL or INCOMPLETE."""

INSIDE_UNSEEN = frozenset({"deposit_outside"})
"""Racy programs whose race lies inside one call of the program's code outside the modules under test: no
granularity puts a scheduling point inside it, so INCOMPLETE everywhere (the advice: put its module under test),
never a PASS."""

GRANULARITIES = ("probe", "line", "instruction")
RACY_NAIVE_BUDGET = {"probe": 300, "line": 300, "instruction": 100}
"""A racy program's naive enumeration stops after this many schedules (then random schedules check it too); the
``deep`` run (``pytest -m deep``, which .ci/run runs) takes those that stopped to :data:`DEEP_NAIVE_BUDGET`."""
DEEP_NAIVE_BUDGET = 1_000
TWIN_NAIVE_BOUND = 300
"""A twin is enumerated naively when its naive bound is at most this; above, random schedules check it."""
NAIVE_SAMPLES = 24
REDUCED_BUDGET = 5_000
SHIPPED_SAMPLES = 60

PASS, FAIL, INCOMPLETE = ExploreVerdict.PASS, ExploreVerdict.FAIL, ExploreVerdict.INCOMPLETE


class _RandomPolicy:
    """Picks a runnable actor at random at every scheduling point, from a fixed seed: a reproducible schedule."""

    def __init__(self, seed: str) -> None:
        self._random = random.Random(seed)

    def choose(self, point: DecisionPoint) -> str:
        return self._random.choice(point.runnable)


@cache
def _load(path: Path) -> LoadedScenario:
    item = load(path)
    assert isinstance(item, LoadedScenario), str(item)
    return item


def _program(name: str) -> LoadedScenario:
    return _load(PROGRAMS / f"{name}.py")


@cache
def _explore(name: str, granularity: str, reduction: bool, jobs: int = 1) -> ScenarioExploration:
    """One exploration, shared by the tests that judge it (each program is explored once per setting)."""
    budget = REDUCED_BUDGET if reduction else RACY_NAIVE_BUDGET[granularity]
    return explore_scenario(
        _program(name), granularity=granularity, reduction=reduction, max_schedules=budget, jobs=jobs
    )


def _record(found: ScenarioExploration) -> str:
    """The exploration's record as written to an evidence folder, but its timing: what must not depend on jobs."""
    record = exploration_record(found, default_variant=True)
    record.pop("timing")
    return json.dumps(record, sort_keys=True)


def _random_outcomes(loaded: LoadedScenario, granularity: str, variant: str | None, runs: int) -> Iterator[str]:
    """The outcome keys that ``runs`` seeded random schedules reach."""
    for i in range(runs):
        policy = _RandomPolicy(f"{loaded.name}:{variant}:{granularity}:{i}")
        result = run_scenario(
            loaded, policy=policy, granularity=granularity, variant=variant, watchdog_seconds=EXPLORE_WATCHDOG_SECONDS
        )
        yield outcome_key(result.observed, result.failed_invariants)


def _short(keys: set[str]) -> str:
    return "; ".join(sorted(keys)) or "(none)"


COARSE_AT_PROBES = frozenset({"logging_handler_shared"})
"""Correct twins whose one step at probe granularity is a call the lab cannot see into and code under test it calls
(``logger.warning`` and the handler's ``emit``): two operations with no point between, which another actor's call
may split (INCOMPLETE, never FAIL); at line granularity each line of ``emit`` is a step, and they PASS."""


def _expected_verdicts(name: str, granularity: str) -> frozenset[ExploreVerdict]:
    if name in COARSE_AT_PROBES and granularity == "probe":
        return frozenset({PASS, INCOMPLETE})
    if name in TWINS:
        return frozenset({PASS})
    if granularity == "probe" and name not in VISIBLE_AT_PROBES:
        return frozenset({FAIL, INCOMPLETE})  # the race lies between probes: never a PASS
    if granularity == "line" and name in ONE_LINE:
        return frozenset({FAIL, INCOMPLETE})
    if name in INSIDE_UNSEEN:
        return frozenset({INCOMPLETE})
    return frozenset({FAIL})


@pytest.mark.timeout(30)
def test_every_program_is_listed_and_loads() -> None:
    """Each file in tests/soundness is a program in the table (a racy one or a twin), and each loads cleanly."""
    on_disk = {path.stem for path in discover(PROGRAMS)}
    assert on_disk == set(PROGRAM_NAMES)
    assert len(RACY) >= 20
    for name in PROGRAM_NAMES:
        loaded = _program(name)
        assert loaded.cls.outcomes, f"{name} declares no outcomes"
        first_line = loaded.lesson
        assert first_line.startswith("Correct twin of" if name in TWINS else "Racy"), f"{name}: {first_line}"


NAIVE_GRANULARITIES = (
    "probe",
    "line",
    pytest.param("instruction", marks=pytest.mark.deep),  # a naive enumeration there is the longest: -m deep
)
"""Where the default run compares the reduction with naive enumeration; .ci/run's ``-m deep`` adds instruction."""


@pytest.mark.slow
@pytest.mark.timeout(60)
@pytest.mark.parametrize("granularity", NAIVE_GRANULARITIES)
@pytest.mark.parametrize("name", PROGRAM_NAMES)
def test_reduction_reaches_every_outcome_naive_enumeration_reaches(name: str, granularity: str) -> None:
    """Reduced and naive exploration of the same scheduling points reach the same set of outcomes."""
    reduced = _explore(name, granularity, True)
    assert not reduced.budget_hit, f"{name} at {granularity}: the reduced exploration ran out of budget"
    found = set(reduced.outcomes)
    baseline: set[str] = set()
    if name in RACY or reduced.naive_bound <= TWIN_NAIVE_BOUND:
        naive = _explore(name, granularity, False)
        baseline = set(naive.outcomes)
        if not naive.budget_hit:
            assert found == baseline, (
                f"{name} at {granularity}: reduction lost {_short(baseline - found)}; "
                f"reached only {_short(found)} in {reduced.schedules} schedules (naive: {naive.schedules})"
            )
            return
    baseline |= set(_random_outcomes(_program(name), granularity, None, NAIVE_SAMPLES))
    assert baseline <= found, (
        f"{name} at {granularity}: reduction lost {_short(baseline - found)}, which naive or random schedules "
        f"reached; it reached only {_short(found)}"
    )


@pytest.mark.timeout(60)
@pytest.mark.deep
@pytest.mark.parametrize("granularity", ("line", "instruction"))
@pytest.mark.parametrize("name", RACY)
def test_racy_programs_against_a_longer_naive_enumeration(name: str, granularity: str) -> None:
    """Where the default naive enumeration stopped at its budget, a longer one (up to 1,000 schedules) reaches no
    outcome the reduction misses, and, when it completes, exactly the reduction's outcomes."""
    if not _explore(name, granularity, False).budget_hit:
        return  # the default run compared it with the complete naive enumeration already
    found = set(_explore(name, granularity, True).outcomes)
    naive = explore_scenario(_program(name), granularity=granularity, reduction=False, max_schedules=DEEP_NAIVE_BUDGET)
    if naive.budget_hit:
        assert set(naive.outcomes) <= found, (
            f"{name} at {granularity}: reduction lost {_short(set(naive.outcomes) - found)}"
        )
    else:
        assert set(naive.outcomes) == found, (
            f"{name} at {granularity}: reduction lost {_short(set(naive.outcomes) - found)}"
        )


@pytest.mark.timeout(60)
@pytest.mark.deep
@pytest.mark.parametrize("granularity", ("line",))
@pytest.mark.parametrize("name", PROGRAM_NAMES)
def test_two_processes_reach_what_one_and_naive_enumeration_reach(name: str, granularity: str) -> None:
    """With ``jobs=2`` the reduced exploration is the same search: the same record, byte for byte, as with one
    process (so the same outcomes, which the test above compares with naive enumeration), and where the naive
    enumeration is complete, the very set it reaches. At line granularity only: how the work is split between
    processes does not depend on the granularity, and tests/test_parallel_exploration.py covers the others."""
    one, two = _explore(name, granularity, True), _explore(name, granularity, True, jobs=2)
    assert _record(two) == _record(one), f"{name} at {granularity}: two processes found something else than one"
    if name in RACY or two.naive_bound <= TWIN_NAIVE_BOUND:
        naive = _explore(name, granularity, False)
        if not naive.budget_hit:
            assert set(two.outcomes) == set(naive.outcomes), f"{name} at {granularity}: jobs=2 differs from naive"


@pytest.mark.timeout(60)
@pytest.mark.parametrize("granularity", GRANULARITIES)
@pytest.mark.parametrize("name", PROGRAM_NAMES)
def test_verdict(name: str, granularity: str) -> None:
    """A racy program FAILs (never PASSes where a race hides between scheduling points); its twin PASSes."""
    found = _explore(name, granularity, True)
    expected = _expected_verdicts(name, granularity)
    assert found.verdict in expected, (
        f"{name} at {granularity}: {found.verdict} ({found.problem or 'no problem reported'}), "
        f"expected {' or '.join(sorted(expected))}; outcomes: {_short(set(found.outcomes))}"
    )
    if found.verdict is FAIL:  # a reported failure comes with a schedule that replays to it
        assert found.counterexample is not None and found.counterexample.replayed, found.problem


@pytest.mark.timeout(60)
@pytest.mark.parametrize("granularity", ["line", "instruction"])
def test_a_bug_that_needs_two_preemptions_is_not_a_pass_under_a_bound_of_one(granularity: str) -> None:
    """two_preemptions: a bound of one preemption cannot reach the forbidden order, and says INCOMPLETE, not PASS;
    the naive enumeration bounded alike confirms that the order really needs two."""
    loaded = _program("two_preemptions")
    bounded = explore_scenario(loaded, granularity=granularity, preemption_bound=1)
    assert bounded.verdict is INCOMPLETE, f"{bounded.verdict}: {bounded.problem}"
    naive_bounded = explore_scenario(loaded, granularity=granularity, preemption_bound=1, reduction=False)
    unbounded = _explore("two_preemptions", granularity, False)
    forbidden = {key for key in unbounded.outcomes if json.loads(key)["observed"]["reader"] == "half>done"}
    assert forbidden, "the unbounded naive enumeration must reach the forbidden order"
    assert not forbidden & set(naive_bounded.outcomes)


def _shipped_races() -> list[tuple[str, str | None]]:
    cases: list[tuple[str, str | None]] = []
    for path in discover(SCENARIOS):
        if path.stem.startswith("race_"):
            variants: list[str | None] = [*_load(path).cls.variants] or [None]
            cases.extend((path.stem, variant) for variant in variants)
    return cases


@pytest.mark.timeout(60)
@pytest.mark.parametrize(("name", "variant"), _shipped_races())
def test_random_schedules_of_shipped_races_reach_nothing_the_reduction_misses(name: str, variant: str | None) -> None:
    """Every outcome of seeded random schedules of a shipped race scenario is in its reduced exploration."""
    loaded = _load(SCENARIOS / f"{name}.py")
    reduced = explore_scenario(loaded, variant=variant)
    assert not reduced.budget_hit
    sampled = set(_random_outcomes(loaded, "probe", variant, SHIPPED_SAMPLES))
    assert sampled <= set(reduced.outcomes), f"reduction lost {_short(sampled - set(reduced.outcomes))}"
