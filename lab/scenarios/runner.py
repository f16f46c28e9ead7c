"""Run one scenario on the scheduler and grade it: outcomes, final state, invariants, each a named check."""

from __future__ import annotations

import contextlib
import sys
import traceback
from collections.abc import Iterator, Mapping
from dataclasses import replace

from lab.engine.core import (
    DEFAULT_WATCHDOG_SECONDS,
    ActorEnd,
    Granularity,
    Json,
    Policy,
    ReplayPolicy,
    RunResult,
    RunStatus,
    Scheduler,
    TraceEvent,
    sorted_detail,
)
from lab.engine.record import LineTracer, Recording, start_recording
from lab.engine.sync import scheduler_aware_primitives
from lab.errors import Unavailable, UsageError
from lab.scenarios.base import Lab, Scenario
from lab.scenarios.loader import LoadedScenario
from lab.scenarios.outcomes import Grade, Outcome, row_for
from lab.scenarios.results import NOT_RUN, Check, ScenarioResult, Verdict, outcome_text
from lab.scenarios.under_test import files_under_test, instrumented_modules, traced_code
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
    pin = loaded.cls.pin
    if pin is not None and policy is None:  # a pinned counterexample replays its recorded interleaving
        policy = ReplayPolicy(pin.schedule, loaded.cls.actors)
        granularity = pin.granularity
        variant = variant or pin.variant or None
    if granularity not in GRANULARITIES:
        raise UsageError(f"granularity is one of {', '.join(GRANULARITIES)}, not {granularity!r}")
    granularity = Granularity(granularity)
    scheduler = Scheduler(policy=policy, watchdog_seconds=watchdog_seconds, outcome_text=outcome_text)
    record = record_accesses or granularity is not Granularity.PROBE
    recorder = _Recorder(loaded.cls, scheduler, granularity) if record else None
    tracer = None
    if granularity is Granularity.LINE and recorder is not None:
        files, codes = traced_code(loaded.cls)
        tracer = LineTracer(scheduler, files, codes, recorded=True)
        scheduler.set_actor_hooks(tracer.install, tracer.uninstall)
    scenario = loaded.cls()
    scenario.lab = lab = Lab(scheduler, loaded.cls)
    variant_name = _pick_variant(loaded.cls, variant)
    if variant_name:
        scenario.variant = loaded.cls.variants[variant_name]
    for name in loaded.cls.actors:
        scheduler.add_actor(name, getattr(scenario, name))
    # threading.Lock, queue.Queue, time.sleep... are scheduler-aware from setup to the end of the run
    with scheduler_aware_primitives(scheduler, code=(loaded.cls, *loaded.cls.line_modules)):
        try:
            with recorder.installed() if recorder is not None else contextlib.nullcontext():
                scenario.setup()
        except Unavailable as missing:  # not this machine's to run: recorded as such, with the reason
            return replace(_errored(loaded, str(missing), ""), verdict=Verdict.SKIPPED, checks=(), errors={})
        except Exception as error:
            return _errored(loaded, f"setup() raised {one_line(error)}", traceback.format_exc())
        state_rows: list[tuple[int, Mapping[str, Json]]] = []
        if watch_states:
            scheduler.watch_ends(lambda actor, step: state_rows.append((step, _safe_observe(scenario))))

        if recorder is not None:
            lines = tracer.active() if tracer is not None else contextlib.nullcontext()
            with recorder.installed(), recorder.recording(scenario), lines:
                run = scheduler.run()
        else:
            run = scheduler.run()
    requests = tuple(body for transport in lab.transports for body in transport.requests)
    calls = sum(transport.calls for transport in lab.transports)
    try:
        state = sorted_detail(dict(scenario.observe()))
        invariants = [(str(name), bool(held)) for name, held in scenario.invariants()]
    except Exception as error:
        problem = f"observe() or invariants() raised {one_line(error)}"
        if run.problem:  # the run's own problem (a divergence, a deadlock) is what the user needs first
            problem = f"{run.problem}; then {problem}"
        return _errored(loaded, problem, traceback.format_exc(), run=run)
    trace = (*run.trace, TraceEvent(len(run.trace), "lab", "final", "", state))
    store = stores_used(scenario)
    checks = _grade(loaded.cls, run, state, invariants)
    verdict = Verdict.PASS if all(check.passed for check in checks) else Verdict.FAIL
    return ScenarioResult(
        name=loaded.name,
        lesson=loaded.lesson,
        description=loaded.description,
        source=loaded.cls.source,
        mutant=loaded.cls.mutant,
        verdict=verdict,
        run_status=str(run.status),
        expect=expected_outcomes(loaded.cls),
        outcomes=dict(run.outcomes),
        state=state,
        checks=checks,
        trace=trace,
        requests=requests,
        transport_calls=calls,
        blocked=run.blocked,
        errors=dict(run.errors),
        problem=run.problem,
        seconds=run.seconds,
        variant=variant_name,
        granularity=granularity,
        store=store,
        run=run,
        state_rows=tuple(state_rows),
    )


def _safe_observe(scenario: Scenario) -> Mapping[str, Json]:
    try:
        return sorted_detail(dict(scenario.observe()))
    except Exception as error:  # another actor may hold the lock observe() needs: say so, do not stop the run
        return {"unreadable": one_line(error)}


def line_files(cls: type[Scenario]) -> list[str]:
    """The source files of the modules under test (see :mod:`lab.scenarios.under_test`), symlinks resolved."""
    return files_under_test(cls)


class _Recorder:
    """Instruments the modules under test for one run and records each actor's accesses by object identity."""

    def __init__(self, cls: type[Scenario], scheduler: Scheduler, granularity: Granularity) -> None:
        self._modules, codes = instrumented_modules(cls)
        self._recording = Recording(
            scheduler,
            every_access_schedules=granularity is Granularity.INSTRUCTION,
            instrumented=codes,
            leave_alone=("lab.scenarios.base",),  # the scenario's Lab and its helpers: machinery, not state
            stateless_modules=("lab.",),  # the lab's own modules keep no state a call of theirs could change
        )

    @contextlib.contextmanager
    def installed(self) -> Iterator[None]:
        """The rewritten bodies in place (outside a recording they behave exactly like the originals)."""
        for module in self._modules:
            module.install()
        try:
            yield
        finally:
            for module in self._modules:
                module.uninstall()

    @contextlib.contextmanager
    def recording(self, scenario: Scenario) -> Iterator[None]:
        """Record accesses while the actors run, with the scenario's state named by path first."""
        modules = tuple(sys.modules[module.name] for module in self._modules)
        # the scenario's lab and variant class are not state: the walk skips them
        self._recording.name_roots({"self": scenario}, modules=modules)
        start_recording(self._recording)
        try:
            yield
        finally:
            start_recording(None)
            self._recording.close()


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


def _errored(loaded: LoadedScenario, problem: str, details: str, *, run: RunResult | None = None) -> ScenarioResult:
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
        trace=run.trace if run is not None else (),
        errors={"lab": details} if details else {},
        problem=problem,
        seconds=run.seconds if run is not None else 0.0,
        run=run,
    )


__all__ = ["Check", "RunStatus", "ScenarioResult", "Verdict", "outcome_text", "run_scenario"]
