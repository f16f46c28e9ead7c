"""Run one scenario on the scheduler and grade it: outcomes, final state, invariants, each a named check."""

from __future__ import annotations

import traceback
from collections.abc import Mapping
from dataclasses import replace

from lab.engine.core import (
    DEFAULT_WATCHDOG_SECONDS,
    ActorEnd,
    Granularity,
    Json,
    Policy,
    ReplayPolicy,
    RunResult,
    RunSettings,
    RunStatus,
    TraceEvent,
    execute,
    sorted_detail,
)
from lab.errors import ScenarioError, UsageError
from lab.scenarios.base import Scenario
from lab.scenarios.loader import LoadedScenario
from lab.scenarios.outcomes import Grade, Outcome, row_for
from lab.scenarios.results import NOT_RUN, Check, ScenarioResult, Verdict, outcome_text
from lab.scenarios.under_test import files_under_test
from lab.scenarios.world import SetupFailed, World
from lab.sessions.stores import stores_used
from lab.text import one_line, shorten

GRANULARITIES = tuple(Granularity)


def run_scenario(
    loaded: LoadedScenario,
    *,
    policy: Policy | None = None,
    watchdog_seconds: float = DEFAULT_WATCHDOG_SECONDS,
    granularity: str = Granularity.PROBE,
    variant: str | None = None,
    record_accesses: bool = False,
    watch_states: bool = False,
) -> ScenarioResult:
    """Build a fresh world for ``loaded``, run its actors under ``policy``, and grade the run.

    ``granularity="line"`` makes every line of the modules under test a scheduling point, ``"instruction"`` every
    access to shared state; ``variant`` picks one of a race scenario's session classes (the first, the correct one,
    by default). ``record_accesses`` records, by object identity, what each step touched in the modules under test
    (the explorer needs it; line and instruction granularity always record).
    ``watch_states`` records ``observe()`` after each actor ends (replay prints these as state rows).
    """
    return _run_and_grade(loaded, policy, watchdog_seconds, granularity, variant, record_accesses, watch_states)[0]


def search_run(
    loaded: LoadedScenario,
    policy: Policy,
    *,
    watchdog_seconds: float,
    granularity: str = Granularity.PROBE,
    variant: str | None = None,
) -> tuple[RunResult, ScenarioResult]:
    """One recorded run for a search: the engine's :class:`RunResult` (its decisions, footprints, accesses) and the
    graded result, which keeps no trace and no run (a worker process sends it back, the explorer keeps one per
    outcome). A scenario whose setup fails has no run to explore: :class:`~lab.errors.ScenarioError`."""
    graded, run = _run_and_grade(
        loaded, policy, watchdog_seconds, granularity, variant, record=True, watch_states=False, keep=False
    )
    if run is None:
        raise ScenarioError(f"{loaded.name}: {graded.problem}")
    return run, graded


def _run_and_grade(
    loaded: LoadedScenario,
    policy: Policy | None,
    watchdog_seconds: float,
    granularity: str,
    variant: str | None,
    record: bool,
    watch_states: bool,
    *,
    keep: bool = True,
) -> tuple[ScenarioResult, RunResult | None]:
    """Run ``loaded`` once through :func:`lab.engine.core.execute` and grade it; ``keep`` keeps the trace, the
    run and the state rows in the graded result. The run is ``None`` when setup raised (nothing ran)."""
    pin = loaded.cls.pin
    if pin is not None and policy is None:  # a pinned counterexample replays its recorded interleaving
        policy = ReplayPolicy(pin.schedule, loaded.cls.actors)
        granularity = pin.granularity
        variant = variant or pin.variant or None
    if granularity not in GRANULARITIES:
        raise UsageError(f"granularity is one of {', '.join(GRANULARITIES)}, not {granularity!r}")
    world = World(loaded, Granularity(granularity), _pick_variant(loaded.cls, variant), watch_states)
    record = record or world.granularity is not Granularity.PROBE
    settings = RunSettings(
        watchdog_seconds=watchdog_seconds,
        outcome_text=outcome_text,
        installs=(world.stand_ins, world.instrumented) if record else (world.stand_ins,),
        around_run=(world.recording, world.lines) if record else (),
    )
    try:
        run = execute(world.actors, policy, settings, setup=world.setup)
    except SetupFailed as failed:
        if failed.skipped:  # not this machine's to run: recorded as such, with the reason
            return replace(_errored(loaded, failed.problem, ""), verdict=Verdict.SKIPPED, checks=(), errors={}), None
        return _errored(loaded, failed.problem, failed.details), None
    return _graded(loaded, world, run, keep), run


def _graded(loaded: LoadedScenario, world: World, run: RunResult, keep: bool) -> ScenarioResult:
    """The checks of one finished run, and everything the evidence records of it."""
    scenario = world.scenario
    assert world.lab is not None  # the actors were made
    requests = tuple(body for transport in world.lab.transports for body in transport.requests)
    calls = sum(transport.calls for transport in world.lab.transports)
    try:
        state = sorted_detail(dict(scenario.observe()))
        invariants = [(str(name), bool(held)) for name, held in scenario.invariants()]
    except Exception as error:
        problem = f"observe() or invariants() raised {one_line(error)}"
        if run.problem:  # the run's own problem (a divergence, a deadlock) is what the user needs first
            problem = f"{run.problem}; then {problem}"
        return _errored(loaded, problem, traceback.format_exc(), run=run, keep=keep)
    clash = sorted(set(state) & {*run.outcomes, "run"})
    if clash:  # one outcome holds both: observe()'s value would hide the actor's (or the run's) end
        names = ", ".join(repr(name) for name in clash)
        problem = f"observe() returned {names}, which names an actor or the run itself: rename that key"
        return _errored(loaded, problem, "", run=run, keep=keep)
    checks = _grade(loaded.cls, run, state, invariants)
    return ScenarioResult(
        name=loaded.name,
        lesson=loaded.lesson,
        description=loaded.description,
        source=loaded.cls.source,
        mutant=loaded.cls.mutant,
        verdict=Verdict.PASS if all(check.passed for check in checks) else Verdict.FAIL,
        run_status=str(run.status),
        expect=expected_outcomes(loaded.cls),
        outcomes=dict(run.outcomes),
        state=state,
        checks=checks,
        trace=(*run.trace, TraceEvent(len(run.trace), "lab", "final", "", state)) if keep else (),
        requests=requests,
        transport_calls=calls,
        blocked=run.blocked,
        errors=dict(run.errors),
        problem=run.problem,
        seconds=run.seconds,
        variant=world.variant,
        granularity=world.granularity,
        store=stores_used(scenario),
        run=run if keep else None,
        state_rows=tuple(world.state_rows or ()) if keep else (),
    )


def line_files(cls: type[Scenario]) -> list[str]:
    """The source files of the modules under test (see :mod:`lab.scenarios.under_test`), symlinks resolved."""
    return files_under_test(cls)


def _pick_variant(cls: type[Scenario], variant: str | None) -> str:
    if variant is None:
        return next(iter(cls.variants), "")
    if variant not in cls.variants:
        known = ", ".join(cls.variants) or "none"
        raise UsageError(f"scenario has no variant {variant!r} (variants: {known})")
    return variant


def expected_outcomes(cls: type[Scenario]) -> dict[str, str]:
    """What each actor must return, as the one row of ``only(...)`` says (empty for a race scenario's table)."""
    row = _exact_row(cls)
    if row is None:
        return {}
    return {actor: str(row.expect[actor]) for actor in row.expect if actor in cls.actors}


def _exact_row(cls: type[Scenario]) -> Outcome | None:
    table = tuple(cls.outcomes)
    return table[0] if len(table) == 1 and table[0].exact else None


def _grade(
    cls: type[Scenario], run: RunResult, state: Mapping[str, Json], invariants: list[tuple[str, bool]]
) -> tuple[Check, ...]:
    """The checks of one run: how it ended, each actor, the final state and what deadlocked actors wait for (the
    one row of ``only(...)``, key by key), or else the table row it matched; then every invariant."""
    exact = _exact_row(cls)
    wanted = dict(exact.expect) if exact is not None else {"run": RunStatus.FINISHED.value}
    blocked_on = dict(exact.blocked_on) if exact is not None else {}
    expect_run = str(wanted.pop("run", RunStatus.FINISHED))
    checks = [_equal("run", f"run ends {expect_run}", expect_run, str(run.status), run.problem)]
    for actor in cls.actors:
        if actor in wanted:
            checks.append(_equal("outcome", f"{actor} -> {wanted[actor]}", wanted[actor], run.outcomes[actor]))
        elif run.outcomes[actor] == ActorEnd.ERROR:
            checks.append(Check(f"{actor} does not raise", False, _last_line(run.errors.get(actor, "")), "outcome"))
    for key, value in wanted.items():
        if key not in cls.actors:
            checks.append(_equal("state", f"state {key} == {_short(value)}", value, state.get(key, "<not observed>")))
    blocked = {b.actor: b.waits_for for b in run.blocked}
    for actor, waits_for in blocked_on.items():
        checks.append(
            _equal("blocked", f"{actor} blocked on {waits_for}", waits_for, blocked.get(actor, "<not blocked>"))
        )
    if exact is None:
        observed = {"run": str(run.status), **run.outcomes, **state}
        row = row_for(cls.outcomes, observed, cls.actors)
        if row is None:
            checks.append(Check("the outcome is in the table", False, f"undeclared: {_short(observed)}", "table"))
        else:
            allowed = row.grade is not Grade.FORBIDDEN
            checks.append(
                Check("the outcome is in the table", allowed, "" if allowed else f"FORBIDDEN: {row.reason}", "table")
            )
    for name, held in invariants:
        if name in cls.expect_broken:
            checks.append(
                Check(f"the bug shows: {name} is broken", not held, "" if not held else "it holds", "invariant")
            )
        else:
            checks.append(Check(name, held, "" if held else "does not hold", "invariant"))
    return tuple(checks)


def _equal(kind: str, name: str, wanted: object, got: object, why: str = "") -> Check:
    if wanted == got:
        return Check(name, True, "", kind)
    return Check(name, False, f"got {_short(got)}" + (f": {why}" if why else ""), kind)


def _short(value: object) -> str:
    return shorten(value if isinstance(value, str) else repr(value), 80)


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else ""


def _errored(
    loaded: LoadedScenario, problem: str, details: str, *, run: RunResult | None = None, keep: bool = True
) -> ScenarioResult:
    """An ERROR: the scenario could not run, or its checks raised (after ``run``); ``keep`` keeps its trace."""
    return ScenarioResult(
        name=loaded.name,
        lesson=loaded.lesson,
        description=loaded.description,
        source=loaded.cls.source,
        mutant=loaded.cls.mutant,
        verdict=Verdict.ERROR,
        run_status=str(run.status) if run is not None else NOT_RUN,
        expect=expected_outcomes(loaded.cls),
        outcomes=dict(run.outcomes) if run is not None else {},
        state={},
        checks=(Check("scenario runs", False, problem, "run"),),
        trace=run.trace if run is not None and keep else (),
        errors={"lab": details} if details else {},
        problem=problem,
        seconds=run.seconds if run is not None else 0.0,
        run=run if keep else None,
    )


__all__ = ["Check", "RunStatus", "ScenarioResult", "Verdict", "outcome_text", "run_scenario", "search_run"]
