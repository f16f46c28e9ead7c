"""Shrinking a failing schedule: fewer preemptions first, then fewer steps.

The first failing execution a sampler draws is usually a thrashing one, switching actors at every other line; the
person reading it wants the few switches that matter. Like Hypothesis shrinking an example, the minimiser tries
simpler schedules and keeps any that still fails: it takes one preemption out (the running actor goes on at that
point) and lets the run follow the rest of the old schedule where it still can (a *soft* replay: a recorded
choice that is not runnable any more gives way to the running actor). It keeps the candidate when it fails too,
with fewer preemptions, or as many in fewer steps, and tries again until no removal helps or its tries are spent.

Every schedule it returns was run and judged failing; the caller still confirms it by a strict replay.
"""

from __future__ import annotations

from collections.abc import Sequence

from lab.engine.core._policies import DecisionPoint
from lab.engine.core._run import RunStatus
from lab.engine.core._schedule import schedule_string
from lab.engine.search._driver import Judge
from lab.engine.search._exploration import Execution
from lab.engine.search._program import RunOnce

DEFAULT_TRIES = 60


class _SoftReplay:
    """Follows ``wanted`` (the actor chosen at each decision with a choice) where it can; where the wanted actor is
    not runnable, or at the decision ``skip`` (a preemption to take out), the running actor goes on."""

    def __init__(self, wanted: Sequence[str], skip: int) -> None:
        self._wanted = wanted
        self._skip = skip
        self._k = 0
        self.preemptions = 0

    def choose(self, point: DecisionPoint) -> str:
        """The recorded choice, or the running actor."""
        runnable = point.runnable
        if len(runnable) == 1:
            return runnable[0]
        k = self._k
        self._k += 1
        current = point.current
        going_on = current is not None and current in runnable
        wanted = self._wanted[k] if k < len(self._wanted) else None
        if wanted in runnable and not (k == self._skip and going_on):
            chosen = wanted
        elif going_on and current is not None:
            chosen = current
        else:
            chosen = runnable[0]
        self.preemptions += point.preempts(chosen)
        return chosen


def _choices_and_preemptions(execution: Execution) -> tuple[list[str], list[int]]:
    """The actor chosen at each decision with a choice, and which of those decisions were preemptions."""
    wanted: list[str] = []
    preempted: list[int] = []
    current: str | None = None
    for decision in execution.run.decisions:
        if len(decision.runnable) > 1:
            if current is not None and current in decision.runnable and decision.chosen != current:
                preempted.append(len(wanted))
            wanted.append(decision.chosen)
        current = decision.chosen
    return wanted, preempted


def minimise(
    execution: Execution, run_once: RunOnce, actors: Sequence[str], judge: Judge, tries: int = DEFAULT_TRIES
) -> tuple[Execution, int]:
    """A failing execution at least as simple as ``execution`` (fewest preemptions, then fewest choices), and how
    many runs the shrinking took."""
    best = execution
    runs = 0
    improved = True
    while improved and runs < tries:
        improved = False
        wanted, preempted = _choices_and_preemptions(best)
        for skip in reversed(preempted):  # the latest first: removing it disturbs the least of what came before
            if runs >= tries:
                break
            policy = _SoftReplay(wanted, skip)
            ran = run_once(policy)
            run, key, payload = ran.run, ran.key, ran.payload
            runs += 1
            if run.status == RunStatus.DIVERGED or not judge(key, payload):
                continue
            schedule = schedule_string(run.decisions, actors)
            candidate = Execution(schedule, policy.preemptions, run, key, payload)
            if (candidate.preemptions, len(schedule)) < (best.preemptions, len(best.schedule)):
                best = candidate
                improved = True
                break
    return best, runs
