"""What a search found: the runs it made, tallied by outcome, with one example per outcome and the classes named.

Every strategy (optimal DPOR, the samplers, the bounded searches) counts its finished runs through :func:`tally`, so
their explorations read alike and merge (:func:`lab.engine.search._driver.merge`). Which run becomes an outcome's
example never depends on the order a search found them: the one with the fewest preemptions, then the shortest
schedule string, then the smallest (:attr:`Execution.rank`). Classes are named from the run alone
(:func:`run_class`), not from any search's bookkeeping, so that a count of classes checks the search. Beside
them, the two settings every search shares: the default schedule budget and how many processes it may use.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field

from lab.engine.core._run import RunResult
from lab.engine.core._schedule import schedule_length, schedule_string
from lab.engine.search._happens_before import class_of
from lab.errors import ScheduleError, UsageError

DEFAULT_MAX_SCHEDULES = 20_000


def resolve_jobs(jobs: int | None) -> int:
    """How many processes an exploration may use: ``None`` means one per core; fewer than one is a mistake."""
    if jobs is None:
        return max(os.cpu_count() or 1, 1)
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise UsageError(f"jobs must be a whole number of processes, at least 1 (got {jobs!r})")
    return jobs


class NondeterminismError(ScheduleError):
    """Raised when re-running a prefix does not offer the same choices: the code under test is not deterministic."""


@dataclass(frozen=True)
class Execution:
    """One explored run: its schedule string, the run itself, and what the caller made of it."""

    schedule: str
    preemptions: int
    run: RunResult
    key: str
    payload: object

    @property
    def rank(self) -> tuple[int, int, str]:
        """The order examples are chosen in, whatever order a search found them: fewest preemptions, then the
        shortest schedule, then the smallest."""
        return _canonical(self.preemptions, self.schedule)


@dataclass
class Exploration:
    """What an exploration found. ``executions`` holds one run per distinct outcome key: the one with the fewest
    preemptions, then the shortest schedule string, then the smallest (so it never depends on the order of search).

    ``schedules`` counts the executions that ran to their end, ``pruned`` those cut short (``blocked`` of them as
    redundant, every runnable actor asleep; the others by the preemption bound), and ``classes`` the distinct
    classes of equivalent interleavings the finished ones belong to, named independently of the search
    (:func:`class_of`): an optimal search has ``schedules == classes`` and ``blocked == 0``.
    """

    schedules: int = 0
    pruned: int = 0
    blocked: int = 0
    bounded: bool = False
    budget_hit: bool = False
    naive_bound: int = 0
    counts: dict[str, int] = field(default_factory=dict)
    executions: dict[str, Execution] = field(default_factory=dict)
    class_names: set[bytes] = field(default_factory=set, repr=False)
    reused: int = 0  # runs taken from worker processes: how the time was spent, never part of a result
    last_key: str | None = None
    """The outcome the latest execution reached (``None``: it was cut short); what a stepping caller judges."""

    @property
    def complete(self) -> bool:
        """True when every schedule that matters was run (no bound or budget cut the search)."""
        return not (self.bounded or self.budget_hit)

    @property
    def classes(self) -> int:
        """How many distinct classes of equivalent interleavings the finished executions belong to."""
        return len(self.class_names)

    @property
    def executions_run(self) -> int:
        """Every execution started: the finished ones and the redundant ones cut short."""
        return self.schedules + self.pruned


def tally(
    found: Exploration,
    run: RunResult,
    key: str,
    payload: object,
    preemptions: int,
    actors: Sequence[str],
    name: bytes | None = None,
) -> None:
    """Count one finished run into ``found``: its outcome, its class, and (if it is the best yet for its outcome:
    fewest preemptions, then the shortest schedule) its example. Every search strategy tallies through here, so
    their explorations read the same way."""
    found.counts[key] = found.counts.get(key, 0) + 1
    if not found.naive_bound:
        found.naive_bound = _multinomial(run)
    found.class_names.add(name if name is not None else run_class(run))
    best = found.executions.get(key)
    if best is not None:  # most runs repeat an outcome: write the schedule only if it may be the better example
        if preemptions > best.preemptions:
            return
        if preemptions == best.preemptions and schedule_length(run.decisions, actors) > len(best.schedule):
            return
    schedule = schedule_string(run.decisions, actors)
    if best is None or _canonical(preemptions, schedule) < _canonical(best.preemptions, best.schedule):
        found.executions[key] = Execution(schedule, preemptions, run, key, payload)


def run_class(run: RunResult) -> bytes:
    """The name of the class of equivalent interleavings ``run`` belongs to (see :func:`class_of`)."""
    return class_of([decision.chosen for decision in run.decisions], run.step_footprints)


def _canonical(preemptions: int, schedule: str) -> tuple[int, int, str]:
    """The order in which an outcome's example is picked: fewest preemptions, shortest, smallest."""
    return (preemptions, len(schedule), schedule)


def _multinomial(run: RunResult) -> int:
    """How many orders a naive enumeration would try: all interleavings of each actor's steps in this run."""
    per_actor: dict[str, int] = {}
    for decision in run.decisions:
        per_actor[decision.chosen] = per_actor.get(decision.chosen, 0) + 1
    total = math.factorial(sum(per_actor.values()))
    for steps in per_actor.values():
        total //= math.factorial(steps)
    return total
