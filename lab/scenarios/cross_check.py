# size: real runs, their tally, their comparison with an exploration and their containment make one check
"""Real threads check the model: the actors run many times on fresh, free threads, and what they reach is compared
with what the exploration reached.

An exploration is only as sound as its model of the program: the scheduling points it sees, the footprints it
records, the primitives it knows. A shape the model misses (state the recording cannot see, a primitive it does not
know) makes the explorer call a racy program PASS. Real threads do not share the model's blind spots, so an outcome
they reach that the exploration never reached is a **MODEL GAP**: the model is wrong about this program, and no
verdict on it can be PASS. The converse proves nothing: real threads reach few of the possible interleavings, which
is why the explorer exists.

Each real run builds the scenario afresh (``setup()``), starts every actor on its own new thread at once (a barrier),
with the interpreter switching threads as often as it can (``sys.setswitchinterval``), and waits a bounded time.
Past the barrier each actor spins for a moment of its own before it begins (up to :data:`JITTER` seconds, drawn
from a generator seeded by the run's number): threads released together otherwise start in nearly the same order
every run, and reach nearly the same outcome.
Probe holds and signals still apply (an actor on a free thread is named to them: ``FREE_ACTOR``), and the lab's
latches behave as their ``threading`` counterparts; nothing else of the lab is involved: no scheduler, no stand-ins,
no rewritten code. An actor that has not finished by the deadline is HUNG; its thread is left behind (a daemon),
unless the runs were made in a child process (``contained``, as the command makes them), which takes it along.

Real runs run on real time. A scenario whose outcome is a time (the scripted transport's deadlines run on the run's
virtual clock) reads it differently there, and cannot be cross-checked for it: it says why in ``not_cross_checked``,
and a cross-check names it with that reason instead of running it (:func:`check_exploration`).

Real runs are not deterministic. A :class:`CrossCheck` is kept apart from traces and records the audit replays: the
counts may differ from one run to the next, only what kind of thing it says is fixed.
"""

from __future__ import annotations

import json
import os
import random
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields

from lab.engine.core import Json, Scheduler, sorted_detail
from lab.engine.sync import FREE_ACTOR
from lab.errors import ScenarioError, UsageError
from lab.scenarios.base import Lab, Scenario
from lab.scenarios.exploring import ExploreVerdict, ScenarioExploration, outcome_key
from lab.scenarios.loader import LoadedScenario
from lab.scenarios.results import outcome_text

SWITCH_INTERVAL = 1e-6
"""Seconds between the interpreter's forced thread switches during a real run (CPython's default is 5 ms)."""

RUN_SECONDS = 5.0
"""How long one real run may take before its unfinished actors are HUNG (beside the deadlines of its scripted
transports, which a real run waits out in real time)."""

JITTER = 200e-6
"""The longest a real run's actor spins past the start barrier before it begins (each its own, seeded by the run's
number): a few hundred microseconds spread the starting order (a check-then-act race's two orders, nearly always
the same one without it, come out about as often as each other)."""

_REAL_MONOTONIC = time.monotonic
_REAL_PERF_COUNTER = time.perf_counter

UNCHECKED = "(invariants not readable on real threads)"
"""What a real run's broken invariants are when ``invariants()`` raised there (it read the trace, say)."""

_STOPPED = frozenset({"DEADLOCK", "HUNG"})
_UNFINISHED = frozenset({"BLOCKED", "HUNG"})


@dataclass(frozen=True)
class CrossCheck:
    """What ``runs`` real runs reached: each outcome (an exploration's outcome key) with how many runs reached it."""

    name: str
    runs: int
    reached: Mapping[str, int] = field(default_factory=dict)
    setup_failures: int = 0

    def gaps(self, found: ScenarioExploration) -> list[str]:
        """The outcome keys real threads reached and ``found`` (an exploration of the same scenario) never did.

        Two differences are not gaps. A real run whose actors did not finish in time is HUNG, where the explorer
        says DEADLOCK (it sees who waits for what; real threads only stop): it matches an explored deadlock or hang
        in which the same actors finished alike. A real run whose invariants could not be read (they read the trace,
        which a real run has not) is compared by what it observed alone."""
        explored = [json.loads(key) for key in found.outcomes]
        return sorted(key for key in self.reached if not any(outcome_matches(json.loads(key), e) for e in explored))

    def describe_gaps(self, found: ScenarioExploration) -> list[str]:
        """One line per MODEL GAP: what real threads reached, in how many runs, and that exploring never did."""
        lines = []
        for key in self.gaps(found):
            observed = json.loads(key)
            shown = ", ".join(f"{k}={v}" for k, v in sorted(observed["observed"].items()))
            broken = f"; broken: {', '.join(observed['broken'])}" if observed["broken"] else ""
            lines.append(
                f"MODEL GAP: real threads reached {shown}{broken} in {self.reached[key]} of {self.runs} runs; "
                f"no explored schedule of {found.granularity} granularity did"
            )
        return lines

    def to_json(self) -> dict[str, Json]:
        """Its own section of the evidence: outside every record the audit replays (the counts are not repeatable)."""
        return {
            "name": self.name,
            "runs": self.runs,
            "reached": dict(sorted(self.reached.items())),
            "setup_failures": self.setup_failures,
        }


@dataclass(frozen=True)
class CheckedExploration(ScenarioExploration):
    """An exploration and real threads' check of its model (``--cross-check``).

    ``verdict`` is the exploration's verdict after the check: FAIL when real threads reached an outcome it never
    did (a MODEL GAP), else the search's own, which ``search_verdict`` keeps and the exploration's record (replayed
    by the audit) still says. ``not_checked``: why the scenario was not cross-checked (its ``not_cross_checked``),
    then ``cross_check`` is ``None``."""

    cross_check: CrossCheck | None = None
    search_verdict: ExploreVerdict = ExploreVerdict.PASS
    not_checked: str = ""
    gap_lines: tuple[str, ...] = ()
    """One line per MODEL GAP (:meth:`CrossCheck.describe_gaps`)."""

    def lines(self) -> list[str]:
        """What the check found, in words: its MODEL GAP lines, or one line saying there is none (or why the
        scenario was not checked)."""
        title = f"{self.name} ({self.granularity}{', ' + self.variant if self.variant else ''})"
        if self.cross_check is None:
            return [f"not cross-checked: {title}: {self.not_checked}"]
        check = self.cross_check
        reached = len(check.reached)
        head = f"cross-check {title}: {check.runs} real runs, {reached} outcome{'' if reached == 1 else 's'} reached"
        failed = f", {check.setup_failures} setups raised" if check.setup_failures else ""
        if not self.gap_lines:
            return [f"{head}{failed}, no MODEL GAP"]
        gaps = len(self.gap_lines)
        return [f"{head}{failed}, {gaps} MODEL GAP{'s' if gaps > 1 else ''}: {self.name} is not PASS", *self.gap_lines]


def check_exploration(
    loaded: LoadedScenario,
    found: ScenarioExploration,
    runs: int,
    *,
    seconds: float = RUN_SECONDS,
    contained: bool = False,
) -> CheckedExploration:
    """``found`` checked by ``runs`` real runs of the same scenario and variant, or, for a scenario that says why it
    cannot be (``not_cross_checked``), marked so, with its verdict unchanged.

    ``contained``: make the runs in a child process (``os.fork``, where there is one), so that the threads of a run
    that HUNG, which nothing can stop, end with it instead of living on in the caller (a spinning one would take a
    core from everything after it)."""
    kept = {f.name: getattr(found, f.name) for f in fields(ScenarioExploration)}
    reason = str(getattr(loaded.cls, "not_cross_checked", "") or "")
    if reason:
        return CheckedExploration(**kept, search_verdict=found.verdict, not_checked=reason)
    variant = found.variant or None
    if contained and hasattr(os, "fork"):
        check = _in_a_child(loaded, runs, variant, seconds)
    else:
        check = cross_check(loaded, runs, variant=variant, seconds=seconds)
    gaps = tuple(check.describe_gaps(found))
    verdict = ExploreVerdict.FAIL if gaps else found.verdict
    kept["verdict"] = verdict
    return CheckedExploration(**kept, cross_check=check, search_verdict=found.verdict, gap_lines=gaps)


def cross_check(
    loaded: LoadedScenario, runs: int, *, variant: str | None = None, seconds: float = RUN_SECONDS
) -> CrossCheck:
    """Run ``loaded``'s actors ``runs`` times on fresh real threads and tally the outcomes they reach."""
    if isinstance(runs, bool) or not isinstance(runs, int) or runs < 1:
        raise UsageError(f"a cross-check needs a number of runs >= 1, not {runs!r}")
    reached: Counter[str] = Counter()
    failures = 0
    previous = sys.getswitchinterval()
    sys.setswitchinterval(SWITCH_INTERVAL)
    try:
        for number in range(runs):
            key = _one_run(loaded, variant, seconds, random.Random(number))
            if key is None:
                failures += 1
            else:
                reached[key] += 1
    finally:
        sys.setswitchinterval(previous)
    return CrossCheck(loaded.name, runs, dict(reached), failures)


def _in_a_child(loaded: LoadedScenario, runs: int, variant: str | None, seconds: float) -> CrossCheck:
    """:func:`cross_check` in a forked child, which reports its tally as JSON on a pipe and ends with ``os._exit``
    (its leftover threads with it); a child that ends without reporting is a :class:`ScenarioError`."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: nothing of it returns
        code = 1
        try:
            os.close(read)
            tally = cross_check(loaded, runs, variant=variant, seconds=seconds).to_json()
            with os.fdopen(write, "wb") as out:
                out.write(json.dumps(tally).encode("utf-8"))
            code = 0
        finally:
            os._exit(code)
    os.close(write)
    with os.fdopen(read, "rb") as source:
        data = source.read()
    _, status = os.waitpid(pid, 0)
    try:
        tally = json.loads(data)
        return CrossCheck(str(tally["name"]), int(tally["runs"]), dict(tally["reached"]), int(tally["setup_failures"]))
    except (ValueError, KeyError, TypeError):
        raise ScenarioError(
            f"cross-check of {loaded.name}: its real runs' process ended before it reported "
            f"({_ended(status)}); nothing of them was recorded"
        ) from None


def _ended(status: int) -> str:
    if os.WIFSIGNALED(status):
        return f"killed by signal {os.WTERMSIG(status)}"
    return f"exit code {os.waitstatus_to_exitcode(status)}"


def _one_run(loaded: LoadedScenario, variant: str | None, seconds: float, draw: random.Random) -> str | None:
    """One real run's outcome key, or ``None`` when ``setup()`` raised (no run to compare)."""
    cls = loaded.cls
    scenario: Scenario = cls()
    scheduler = Scheduler()  # never run: it names the actors for the lab, and its primitives act as threading's
    for name in cls.actors:
        scheduler.add_actor(name, lambda: None)
    scenario.lab = Lab(scheduler, cls)
    chosen = variant if variant is not None else next(iter(cls.variants), "")
    if chosen:
        scenario.variant = cls.variants[chosen]
    try:
        scenario.setup()
    except Exception:
        return None
    outcomes: dict[str, str] = {}
    start = threading.Barrier(len(cls.actors))
    threads = [
        threading.Thread(
            target=_body(name, getattr(scenario, name), start, outcomes, draw.random() * JITTER),
            daemon=True,
            name=f"cross-check {name}",
        )
        for name in cls.actors
    ]
    for thread in threads:
        thread.start()
    deadline = _REAL_MONOTONIC() + seconds + _waits(scenario.lab)
    for thread in threads:
        thread.join(max(deadline - _REAL_MONOTONIC(), 0.0))
    hung = [name for name, thread in zip(cls.actors, threads, strict=True) if thread.is_alive()]
    for name in hung:
        outcomes[name] = "HUNG"
    observed: dict[str, Json] = {"run": "HUNG" if hung else "FINISHED", **{a: outcomes[a] for a in cls.actors}}
    broken: tuple[str, ...] = ()
    if not hung:  # a hung actor may hold what observe() needs
        try:
            observed.update(sorted_detail(dict(scenario.observe())))
        except Exception as error:
            observed["unreadable"] = type(error).__name__
        try:
            broken = tuple(_failed(cls, scenario))
        except Exception:  # an invariant that reads the trace: a real run has none
            broken = (UNCHECKED,)
    return outcome_key(observed, broken)


def _waits(lab: Lab) -> float:
    """Seconds a real run may spend waiting on purpose: each scripted transport's deadline (a stalled stream sleeps
    until it, in real time on a free thread), so that a run that times out as its scenario means is not HUNG."""
    return sum(float(t.deadline) for t in lab.transports if isinstance(t.deadline, int | float) and t.deadline > 0)


def _failed(cls: type[Scenario], scenario: Scenario) -> list[str]:
    """The invariant checks that failed, named as a graded run names them (an expected break that held fails)."""
    failed = []
    for name, held in scenario.invariants():
        if name in cls.expect_broken:
            if held:
                failed.append(f"the bug shows: {name} is broken")
        elif not held:
            failed.append(str(name))
    return failed


def outcome_matches(real: Mapping[str, Json], explored: Mapping[str, Json]) -> bool:
    """Whether a real run's outcome (``{"observed": ..., "broken": [...]}``) is one the exploration reached (see
    :meth:`CrossCheck.gaps`); the evidence's audit asks it again of the records."""
    seen, there = dict(real["observed"]), dict(explored["observed"])
    if real["broken"] != [UNCHECKED] and real["broken"] != explored["broken"]:
        return False
    if seen.get("run") == "HUNG" and there.get("run") in _STOPPED:
        stuck = {k for k, v in seen.items() if v == "HUNG" and k != "run"}
        return all(there.get(k) in _UNFINISHED for k in stuck) and all(
            there.get(k) == v for k, v in seen.items() if k not in stuck and k != "run"
        )
    return seen == there


def _body(
    name: str, method: Callable[[], object], start: threading.Barrier, outcomes: dict[str, str], delay: float
) -> Callable[[], None]:
    def run() -> None:
        FREE_ACTOR.name = name
        try:
            start.wait()
            until = _REAL_PERF_COUNTER() + delay
            while _REAL_PERF_COUNTER() < until:  # a spin, not a sleep: the thread stays ready to run
                pass
            outcomes[name] = outcome_text(method())
        except BaseException:
            outcomes[name] = "ERROR"

    return run


def gaps_of(checks: Sequence[CrossCheck], found: ScenarioExploration) -> list[str]:
    """Every MODEL GAP line of ``checks`` against ``found``."""
    return [line for check in checks for line in check.describe_gaps(found)]


__all__ = [
    "RUN_SECONDS",
    "SWITCH_INTERVAL",
    "CheckedExploration",
    "CrossCheck",
    "check_exploration",
    "cross_check",
    "gaps_of",
    "outcome_matches",
]
