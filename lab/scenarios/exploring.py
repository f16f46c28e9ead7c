# size: exploring a scenario, grading what it reached and confirming its counterexample are one verdict
"""Explore a scenario under every schedule that matters and grade what comes out against its outcome table.

A latch-ordered scenario must leave exactly the one outcome it teaches; a race scenario may reach every row of its
table but no FORBIDDEN row and nothing undeclared, and its invariants must hold in every schedule. A failure is
re-run once from its schedule string before it is reported, so a reported counterexample is one that replays.
"""

from __future__ import annotations

import contextlib
import json
import math
import time
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import cast

from lab.engine.core import ActorEnd, Granularity, Json, Policy, ReplayPolicy, RunResult, RunStatus, collector_relaxed
from lab.engine.record import line_events_kept
from lab.engine.search import (
    DEFAULT_MAX_SCHEDULES,
    AtomicityCheck,
    Digest,
    Execution,
    Exploration,
    Explorer,
    Program,
    Ran,
    RunPart,
    SearchReport,
    SplitStep,
    check_strategy,
    minimise,
    run_parts,
    search,
)
from lab.scenarios.counter_steps import CounterStep, counter_steps
from lab.scenarios.explaining import Explanation, explain_failure, replay_command
from lab.scenarios.loader import LoadedScenario
from lab.scenarios.outcomes import UNDECLARED, Grade, Outcome, row_for
from lab.scenarios.runner import ScenarioResult, Verdict, run_scenario, search_run

EXPLORE_WATCHDOG_SECONDS = 5.0
"""How long an explored run may make no progress before it is HUNG: long enough that a loaded machine (a pause of
a second or two in one actor, seen under a parallel test run) is not taken for an actor blocked outside the lab;
a real hang costs this much once per schedule that reaches it."""


class ExploreVerdict(StrEnum):
    """An exploration's grade. INCOMPLETE is never a pass."""

    PASS = "PASS"
    """Every schedule that matters was run; every outcome is allowed and every invariant held."""
    FAIL = "FAIL"
    """Some schedule reached a FORBIDDEN or undeclared outcome, or broke an invariant (and replayed doing so)."""
    INCOMPLETE = "INCOMPLETE"
    """Nothing failed in what was run, but that is not all there is: a preemption bound or the schedule budget cut
    the search short, a step the granularity treats as atomic can be split by another actor (the problem line
    names it and the granularity to re-explore with), or an actor started a thread the lab does not see."""


@dataclass(frozen=True)
class TableRow:
    """One row of the graded table: declared (or found and undeclared), and how many schedules reached it."""

    grade: str
    reason: str
    expect: dict[str, Json]
    schedules: int
    example: str = ""


@dataclass(frozen=True)
class Counterexample:
    """The shortest schedule that reached a failing outcome, what it reached, and why that fails.

    ``explanation`` says which racing steps decided it and the one swap that turns the run allowed (see
    :mod:`lab.scenarios.explaining`); ``None`` when the schedule did not replay to the same outcome.
    """

    schedule: str
    observed: dict[str, Json]
    why: str
    replayed: bool
    preemptions: int
    explanation: Explanation | None = None
    steps: tuple[CounterStep, ...] = ()
    """The failing run step by step (:mod:`lab.scenarios.counter_steps`); empty when it did not replay."""
    steps_left_out: int = 0


@dataclass(frozen=True)
class ScenarioExploration:
    """Everything an exploration of one scenario (and one session variant, at one granularity) found."""

    name: str
    variant: str
    granularity: str
    verdict: ExploreVerdict
    schedules: int
    pruned: int
    naive_bound: int
    distinct: int
    rows: tuple[TableRow, ...]
    counterexample: Counterexample | None
    preemption_bound: int | None
    max_schedules: int
    bounded: bool
    budget_hit: bool
    problem: str = ""
    seconds: float = 0.0
    outcomes: dict[str, int] = field(default_factory=dict)
    classes: int = 0
    """Distinct classes of equivalent interleavings the finished schedules belong to (optimal: == schedules)."""
    naive_count: int | None = None
    """How many schedules a naive enumeration runs: known only when this exploration was one, and complete."""
    blocked: int = 0
    """Executions that ended redundant: every runnable actor asleep (0 for optimal DPOR; part of ``pruned``)."""
    strategy: str = "dpor"
    """The search strategy (:data:`lab.engine.search.STRATEGIES`)."""
    mode: str = "prove"
    """``find`` stopped at the first failure; ``prove`` ran the whole budget and counted every outcome."""
    seed: int = 0
    """The seed of the sampling strategies: the same seed, budget and program run the same executions."""
    seconds_budget: float | None = None
    """The time budget it was given (``None``: none)."""
    time_hit: bool = False
    """The time budget is what stopped it (the one thing in an exploration that depends on the clock)."""
    first_failure: int | None = None
    """The 1-based index of the first failing execution (find mode; ``None`` when nothing failed)."""
    covered: str = ""
    """For a search cut short: what it covered, in words, per strategy."""
    by_strategy: dict[str, int] = field(default_factory=dict)
    """Executions run by each strategy (a portfolio's share)."""
    shrink_runs: int = 0
    """Runs the minimiser made to simplify the counterexample (not among ``executions``)."""

    @property
    def executions(self) -> int:
        """Executions run: the finished schedules and the redundant ones."""
        return self.schedules + self.pruned

    @property
    def replay_command(self) -> str:
        """The command that replays the counterexample (empty when there is none)."""
        if self.counterexample is None:
            return ""
        return replay_command(self.name, self.counterexample.schedule, self.granularity, self.variant)


def _key_of(result: ScenarioResult) -> str:
    """``result``'s outcome key; a run whose checks could not be made is an outcome of its own, by its problem
    (with its state left out, it would otherwise share the key of a run that observed nothing)."""
    observed = result.observed
    if result.verdict is Verdict.ERROR:
        observed = {**observed, "error": result.problem}
    return outcome_key(observed, result.failed_invariants)


def outcome_key(observed: dict[str, Json], failed_invariants: tuple[str, ...]) -> str:
    """A stable string for an outcome: equal keys, same outcome."""
    return json.dumps({"observed": observed, "broken": list(failed_invariants)}, sort_keys=True, ensure_ascii=False)


def explore_scenario(
    loaded: LoadedScenario,
    *,
    granularity: str = Granularity.PROBE,
    variant: str | None = None,
    preemption_bound: int | None = None,
    max_schedules: int = DEFAULT_MAX_SCHEDULES,
    reduction: bool = True,
    progress: Callable[[Exploration], None] | None = None,
    jobs: int | None = 1,
    done: Sequence[bytes] = (),
    strategy: str = "dpor",
    mode: str = "prove",
    seed: int = 0,
    seconds: float | None = None,
) -> ScenarioExploration:
    """Explore ``loaded`` and grade every outcome reached against its table.

    ``strategy`` and ``mode`` choose the search (:mod:`lab.engine.search`): the default, optimal DPOR proving,
    runs every class and counts every outcome; ``mode="find"`` stops at the first failing execution, minimises it
    and confirms it by replay. ``seconds`` is a time budget beside ``max_schedules``.

    ``jobs`` is how many processes run schedules (``None``: one per core); any number gives the same result,
    byte for byte, because every result is defined by the one-process search's order (see
    :mod:`lab.engine.search._parallel`).
    ``done`` are runs other machines made of parts of the same exploration (``explore_work``), taken the same way.
    Only DPOR in prove mode spreads over processes; every other search runs in this one.
    """
    check_strategy(strategy, mode, seed, seconds)
    begun = time.perf_counter()
    table = tuple(loaded.cls.outcomes)
    atomicity = AtomicityCheck()
    started = _FirstThread()
    explorer = scenario_explorer(
        loaded,
        granularity=granularity,
        variant=variant,
        preemption_bound=preemption_bound,
        max_schedules=max_schedules,
        reduction=reduction,
        progress=progress,
        jobs=jobs,
        atomicity=atomicity,
        started=started,
    )
    actors = loaded.cls.actors
    report: SearchReport | None = None
    shrink_runs = 0
    left = 0.0
    with collector_relaxed(), line_events_kept() if granularity == Granularity.LINE else contextlib.nullcontext():
        if strategy == "dpor" and mode == "prove":
            found = explorer.explore(done)
            proved = found.complete
            left = max(explorer.estimated_classes() - found.classes, 0) if found.budget_hit else 0
        else:
            judge = _judge(table, actors) if mode == "find" else None
            report = search(
                explorer,
                strategy=strategy,
                seed=seed,
                max_executions=max_schedules,
                seconds=seconds,
                judge=judge,
                progress=progress,
            )
            found, proved = report.found, report.proved
            if report.failing is not None and judge is not None:
                shrunk, shrink_runs = minimise(report.failing, explorer.program.run, actors, judge)
                report.failing = shrunk
    rows, failing = _grade(table, actors, found)
    if report is not None and report.failing is not None:
        failing = [(report.failing, _why(table, actors, report.failing))]
    counterexample = None
    problem = ""
    if failing:
        execution = min(failing, key=lambda item: _canonical(item[0]))
        counterexample, problem = _confirm(loaded, execution[0], execution[1], granularity, variant)
    split = atomicity.finding()
    verdict = (
        ExploreVerdict.FAIL
        if failing
        else ExploreVerdict.PASS
        if proved and not split and started.first is None and started.fair is None
        else ExploreVerdict.INCOMPLETE
    )
    if started.first is not None and not failing:
        problem = started.first.describe()
    elif started.fair is not None and not failing:
        problem = started.fair.describe()
    elif split and not failing:
        problem = split.describe(granularity)
    elif report is None and found.budget_hit and not failing:
        problem = (
            f"the budget ({max_schedules} executions) ended the search; covered: dpor: {found.classes} classes of "
            f"interleavings (about {left:,.0f} more by Knuth's estimate)"
        )
    elif report is not None and not failing and not proved:
        cut = f"the time budget ({seconds:g} s)" if report.time_hit else f"the budget ({max_schedules} executions)"
        problem = f"{cut} ended the search; covered: {'; '.join(report.covered) or 'nothing'}"
        if report.estimate is not None:
            size = f"about {report.estimate:,.0f}" if math.isfinite(report.estimate) else "more than 10^308"
            problem += f"; the naive tree holds {size} schedules (Knuth's estimate)"
    first_variant = variant if variant is not None else next(iter(loaded.cls.variants), "")
    return ScenarioExploration(
        name=loaded.name,
        variant=first_variant,
        granularity=granularity,
        verdict=verdict,
        schedules=found.schedules,
        pruned=found.pruned,
        naive_bound=found.naive_bound,
        distinct=len(found.counts),
        rows=rows,
        counterexample=counterexample,
        preemption_bound=preemption_bound,
        max_schedules=max_schedules,
        bounded=found.bounded,
        budget_hit=found.budget_hit,
        problem=problem,
        seconds=time.perf_counter() - begun,
        outcomes=dict(sorted(found.counts.items())),
        classes=found.classes,
        blocked=found.blocked,
        naive_count=found.schedules if not reduction and found.complete and report is None else None,
        strategy=strategy,
        mode=mode,
        seed=seed,
        seconds_budget=seconds,
        time_hit=report.time_hit if report is not None else False,
        first_failure=report.first_failure if report is not None else None,
        covered="; ".join(report.covered) if report is not None else "",
        by_strategy=dict(report.by_strategy) if report is not None else {"dpor": found.executions_run},
        shrink_runs=shrink_runs,
    )


def scenario_explorer(
    loaded: LoadedScenario,
    *,
    granularity: str = Granularity.PROBE,
    variant: str | None = None,
    preemption_bound: int | None = None,
    max_schedules: int = DEFAULT_MAX_SCHEDULES,
    reduction: bool = True,
    progress: Callable[[Exploration], None] | None = None,
    jobs: int | None = 1,
    atomicity: AtomicityCheck | None = None,
    started: _FirstThread | None = None,
) -> Explorer:
    """The explorer of ``loaded`` with these settings, ungraded: what :func:`explore_scenario` runs, and what
    :func:`lab.engine.search.split_work` and :func:`lab.engine.search.explore_work` take to
    spread one
    exploration over machines (every machine must build it with the same settings). Each run's digest (made where
    it ran) goes to ``atomicity``, and the first thread an actor started to ``started``."""

    def adopt(parts: Digest) -> None:
        if parts and isinstance(parts[0], _ThreadStarted):
            if started is not None and started.first is None:
                started.first = parts[0]
            parts = parts[1:]
        if parts and isinstance(parts[0], _FairYield):
            if started is not None and started.fair is None:
                started.fair = parts[0]
            parts = parts[1:]
        if atomicity is not None:  # the rest is run_parts' (see _digest)
            atomicity.merge(cast("Sequence[RunPart | SplitStep]", parts))

    def run(policy: Policy) -> Ran:
        # the graded payload keeps no trace and no run: a worker process sends little and the explorer keeps little
        run, graded = search_run(
            loaded, policy, granularity=granularity, variant=variant, watchdog_seconds=EXPLORE_WATCHDOG_SECONDS
        )
        return Ran(run, _key_of(graded), graded)

    checked = atomicity is not None or started is not None
    return Explorer(
        Program(loaded.cls.actors, run, _digest if checked else None, adopt if checked else None),
        reduction=reduction,
        preemption_bound=preemption_bound,
        max_schedules=max_schedules,
        progress=progress,
        jobs=jobs,
    )


@dataclass(frozen=True)
class _ThreadStarted:
    """In some run, ``actor`` started a thread running ``target``: the lab neither schedules that thread nor sees
    what it touches (a part of a run's digest, ahead of the atomicity check's)."""

    actor: str
    target: str

    def describe(self) -> str:
        """One line: what happened, and why the exploration is not complete."""
        return (
            f"actor {self.actor} started a thread ({self.target}) that the lab neither schedules nor observes: what it "
            "touches is in no footprint, so the interleavings explored are not all there are; run that code in an "
            "actor instead"
        )


@dataclass(frozen=True)
class _FairYield:
    """In some run, ``actor`` ran so many steps in a row while another actor could run that the scheduler made it
    let another go first (:data:`lab.engine.core._handoff.FAIR_STREAK`): longer runs of it were never explored."""

    actor: str
    steps: int

    def describe(self) -> str:
        """One line: what happened, and why the exploration is not complete."""
        return (
            f"actor {self.actor} ran {self.steps:,} steps in a row while another actor could run (a spin wait?), "
            "so the scheduler made it yield, as a fair one does: schedules in which it runs longer were not explored"
        )


@dataclass
class _FirstThread:
    """The first thread an actor started, and the first fair yield, in the search's order (``None``: none)."""

    first: _ThreadStarted | None = None
    fair: _FairYield | None = None


def _digest(run: RunResult) -> Digest:
    """What a run adds to the checks besides its outcome: the first thread an actor started in it (see
    :func:`lab.engine.sync._standard._start_thread`), then the atomicity check's parts."""
    parts: list[Hashable] = [*run_parts(run)]
    fair = next((event for event in run.trace if event.op == "fair.yield"), None)
    if fair is not None:
        steps = fair.detail.get("steps")
        parts.insert(0, _FairYield(fair.actor, steps if isinstance(steps, int) else 0))
    started = next((event for event in run.trace if event.op == "thread.start"), None)
    if started is not None:
        parts.insert(0, _ThreadStarted(started.actor, started.obj))
    return parts


def _grade(
    table: tuple[Outcome, ...], actors: Sequence[str], found: Exploration
) -> tuple[tuple[TableRow, ...], list[tuple[Execution, str]]]:
    counts = [0] * len(table)
    examples: list[Execution | None] = [None] * len(table)
    undeclared: list[TableRow] = []
    failing: list[tuple[Execution, str]] = []
    for key, count in found.counts.items():
        execution = found.executions[key]
        result = execution.payload
        if not isinstance(result, ScenarioResult):  # an invariant of this module's own run, not a user's mistake
            raise TypeError("the program's run must return a ScenarioResult payload")
        observed = result.observed
        errored = result.verdict is Verdict.ERROR  # its checks could not be made: no row grades it
        row = None if errored else row_for(table, observed, actors)
        index = table.index(row) if row is not None else None
        if result.failed_invariants:
            failing.append((execution, "invariant broken: " + "; ".join(result.failed_invariants)))
        if index is None:
            why = result.problem if errored else run_failure(result, actors)
            undeclared.append(
                TableRow(
                    UNDECLARED, why or "reached, but matches no row of the table", observed, count, execution.schedule
                )
            )
            failing.append((execution, why or "undeclared outcome"))
            continue
        counts[index] += count
        best = examples[index]
        if best is None or _canonical(execution) < _canonical(best):
            examples[index] = execution
        if table[index].grade is Grade.FORBIDDEN:
            failing.append((execution, f"FORBIDDEN: {table[index].reason}"))
    rows = tuple(
        TableRow(row.grade.value, row.reason, dict(row.expect), counts[i], _schedule(examples[i]))
        for i, row in enumerate(table)
    )
    return (*rows, *undeclared), failing


def _judge(table: tuple[Outcome, ...], actors: Sequence[str]) -> Callable[[str, object], bool]:
    """Whether one outcome fails the table: an invariant broke, no row admits it, or a FORBIDDEN row does."""

    def fails(key: str, payload: object) -> bool:
        return bool(_why(table, actors, payload))

    return fails


def _why(table: tuple[Outcome, ...], actors: Sequence[str], what: object) -> str:
    """Why an execution (or its payload) fails the table, as the verdict says it (``""``: it does not)."""
    result = what.payload if isinstance(what, Execution) else what
    if not isinstance(result, ScenarioResult):  # an invariant of this module's own run, not a user's mistake
        raise TypeError("the program's run must return a ScenarioResult payload")
    return failure_reason(table, actors, result)


def failure_reason(table: Sequence[Outcome], actors: Sequence[str], result: ScenarioResult) -> str:
    """Why one graded run fails ``table`` (an invariant, a raise, a deadlock, a hang, an undeclared or FORBIDDEN
    outcome), in the words an exploration's verdict uses; ``""`` when it does not fail. A run whose checks could not
    be made (``observe()`` or ``invariants()`` raised, or returned a key that hides an actor's end) fails whatever
    its outcomes: graded by them alone, a race that breaks ``observe()`` in some schedule would pass."""
    if result.verdict is Verdict.ERROR:
        return result.problem or "the run's checks could not be made"
    if result.failed_invariants:
        return "invariant broken: " + "; ".join(result.failed_invariants)
    row = row_for(table, result.observed, actors)
    if row is None:
        return run_failure(result, actors) or "undeclared outcome"
    if row.grade is Grade.FORBIDDEN:
        return f"FORBIDDEN: {row.reason}"
    return ""


def run_failure(result: ScenarioResult, actors: Sequence[str]) -> str:
    """What went wrong in a run, named for the person reading the verdict: the first actor that raised (with its
    exception's line), a deadlock (who waits for what), a hang; ``""`` when every actor returned and the run
    finished. An outcome table admits such a run only where a row names it (see :meth:`Outcome.admits`)."""
    for name in actors:
        if result.outcomes.get(name) == ActorEnd.ERROR:
            lines = [line for line in result.errors.get(name, "").strip().splitlines() if line.strip()]
            return f"{name} raised {lines[-1].strip()}" if lines else f"{name} raised"
    if result.run_status == RunStatus.DEADLOCK:
        waits = "; ".join(f"{b.actor} waits for {b.waits_for}" for b in result.blocked)
        return "deadlock" + (f": {waits}" if waits else "")
    if result.run_status == RunStatus.HUNG:
        return "hung: " + (result.problem or "an actor made no progress")
    if result.run_status != RunStatus.FINISHED:
        return f"the run ended {result.run_status}" + (f": {result.problem}" if result.problem else "")
    return ""


def _canonical(execution: Execution) -> tuple[int, int, str]:
    """The order an example is chosen in (:attr:`Execution.rank`)."""
    return execution.rank


def _schedule(execution: Execution | None) -> str:
    return execution.schedule if execution is not None else ""


def _confirm(
    loaded: LoadedScenario, execution: Execution, why: str, granularity: str, variant: str | None
) -> tuple[Counterexample, str]:
    """Replay the failing schedule once from its string; report whether it reached the same outcome, and if it did,
    explain it from the explored run (its accesses were recorded), which is the run the schedule replays."""
    schedule, key = execution.schedule, execution.key
    replayed = replay_scenario(loaded, schedule, granularity=granularity, variant=variant)
    same = _key_of(replayed) == key
    problem = "" if same else f"the counterexample did not replay to the same outcome: {replayed.problem}"
    observed = json.loads(key)["observed"]
    explanation = (
        explain_failure(loaded, schedule, granularity=granularity, variant=variant, run=execution.run) if same else None
    )
    steps, left_out = counter_steps(replayed) if same else ((), 0)
    example = Counterexample(schedule, observed, why, same, execution.preemptions, explanation, steps, left_out)
    return example, problem


def replay_scenario(
    loaded: LoadedScenario,
    schedule: str,
    *,
    granularity: str = Granularity.PROBE,
    variant: str | None = None,
    watchdog_seconds: float = EXPLORE_WATCHDOG_SECONDS,
    watch_states: bool = False,
) -> ScenarioResult:
    """Run ``loaded`` under exactly ``schedule``; a divergence ends the run as DIVERGED, with where it happened."""
    policy = ReplayPolicy(schedule, loaded.cls.actors)
    result = run_scenario(
        loaded,
        policy=policy,
        granularity=granularity,
        variant=variant,
        watchdog_seconds=watchdog_seconds,
        watch_states=watch_states,
    )
    if result.run_status != RunStatus.DIVERGED and not policy.finished:
        return _diverged(result, f"the run ended with {policy.remaining} recorded choice(s) unused")
    return result


def _diverged(result: ScenarioResult, problem: str) -> ScenarioResult:
    return replace(result, run_status=RunStatus.DIVERGED.value, problem=problem)
