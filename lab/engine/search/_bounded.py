"""Iterative bounding: every schedule within a bound, bound 0 first, then 1, then 2 (Emmi, Qadeer and Rakamaric,
"Delay-bounded scheduling", POPL 2011; Musuvathi and Qadeer's CHESS for preemption bounding).

Most concurrency bugs need few unusual scheduling decisions. A bounded search runs, depth first and without
reduction, every schedule whose cost is at most the bound, and raises the bound only when every schedule within it
was run:

- **ipb** (iterative preemption bounding): the cost of a schedule is its number of preemptions, switching away
  from an actor that could have gone on. A switch where the running actor blocked or finished is free.
- **idb** (iterative delay bounding): the default scheduler is round robin (the running actor goes on until it
  blocks or ends, then the next one in declaration order after it); a *delay* skips the actor round robin would
  pick, so choosing the j-th runnable actor after the default costs j delays. Bound 0 is one schedule.

A bound whose search skipped nothing (no choice cost too much) covered every schedule there is: the search is then
complete and its PASS is a proof, as the naive enumeration it then was. Otherwise, cut by the budget, it states the
largest bound it exhausted ("no failure in any schedule with at most 2 delays"), a bounded result and never a PASS.

Raising the bound runs the cheaper schedules again (the search keeps no tree between bounds, to keep its memory
flat): those runs are counted as executions, not as new schedules, and reach no new outcome.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from lab.engine.core._policies import DecisionPoint
from lab.engine.core._run import RunResult, RunStatus
from lab.engine.search._exploration import Exploration, NondeterminismError, tally
from lab.engine.search._program import RunOnce

PREEMPTIONS = "ipb"
DELAYS = "idb"


@dataclass(frozen=True)
class _Choice:
    """One decision with a real choice: its options in the order the search tries them, each with its cost, the
    option taken, and the cost of the schedule before it."""

    options: tuple[tuple[str, int], ...]
    taken: int
    spent: int


class _BoundedPolicy:
    """Follows ``prefix`` (one actor per decision with a choice), then the default (cost 0) choice; notes every
    decision with a choice so the search can find the next schedule."""

    def __init__(self, kind: str, actors: Sequence[str], prefix: Sequence[str]) -> None:
        self._kind = kind
        self._order = {name: i for i, name in enumerate(actors)}
        self._actors = tuple(actors)
        self._prefix = prefix
        self.choices: list[_Choice] = []
        self.cost = 0
        self.preemptions = 0

    def _options(self, point: DecisionPoint) -> tuple[tuple[str, int], ...]:
        runnable = point.runnable
        current = point.current
        going_on = current is not None and current in runnable
        if self._kind == PREEMPTIONS:
            first = current if going_on else runnable[0]
            assert first is not None
            rest = [name for name in runnable if name != first]
            return ((first, 0), *((name, int(going_on)) for name in rest))
        # round robin from the running actor (itself first when it can go on)
        start = self._order[current] if current is not None else 0
        if not going_on:
            start += 1
        n = len(self._actors)
        ring = [self._actors[(start + i) % n] for i in range(n)]
        return tuple((name, delay) for delay, name in enumerate(a for a in ring if a in runnable))

    def choose(self, point: DecisionPoint) -> str:
        """The prefix's choice while there is one, then the default."""
        runnable = point.runnable
        if len(runnable) == 1:
            return runnable[0]
        options = self._options(point)
        k = len(self.choices)
        taken = 0
        if k < len(self._prefix):
            wanted = self._prefix[k]
            names = [name for name, _ in options]
            if wanted not in names:
                raise NondeterminismError(f"choice {k + 1}: {wanted} was runnable before, now {', '.join(runnable)}")
            taken = names.index(wanted)
        self.choices.append(_Choice(options, taken, self.cost))
        name, cost = options[taken]
        self.cost += cost
        self.preemptions += point.preempts(name)
        return name


class IterativeBounding:
    """The ``ipb`` or ``idb`` strategy: one execution per step, bound after bound, until every schedule was run."""

    reports_progress = False  # the driver reports each of its runs

    def __init__(
        self,
        kind: str,
        run_once: RunOnce,
        actors: Sequence[str],
        observe: Callable[[RunResult], None] | None = None,
    ) -> None:
        self.name = kind
        self._kind = kind
        self._run_once = run_once
        self._actors = tuple(actors)
        self._observe = observe
        self.found = Exploration()
        self.bound = 0
        self.exhausted: int | None = None  # the largest bound every schedule within which was run
        self.proved = False  # a bound skipped nothing: every schedule there is was run

    def covered(self) -> str:
        """What it covered, in words."""
        unit = "preemptions" if self._kind == PREEMPTIONS else "delays"
        if self.proved:
            return f"every schedule ({self.found.schedules})"
        if self.exhausted is None:
            return f"part of the schedules with 0 {unit}"
        return f"every schedule with at most {self.exhausted} {unit}, and part of those with {self.exhausted + 1}"

    def estimated_schedules(self) -> float | None:
        """No estimate of its own (the random walk makes one)."""
        return None

    def runs(self) -> Iterator[Exploration]:
        """One execution per step; ends when a bound skipped nothing."""
        found = self.found
        found.budget_hit = True
        while True:
            cut = False
            prefix: list[str] | None = []
            while prefix is not None:
                policy = _BoundedPolicy(self._kind, self._actors, prefix)
                ran = self._run_once(policy)
                run, key, payload = ran.run, ran.key, ran.payload
                if run.status == RunStatus.DIVERGED:
                    raise NondeterminismError(run.problem)
                if self._observe is not None:
                    self._observe(run)
                if policy.cost < self.bound:  # run at a lower bound already
                    found.pruned += 1
                    found.last_key = None
                else:
                    found.schedules += 1
                    found.last_key = key
                    tally(found, run, key, payload, policy.preemptions, self._actors)
                prefix, skipped = self._next(policy.choices)
                cut = cut or skipped
                if prefix is None and not cut:
                    self.proved = True
                    found.budget_hit = False
                yield found
                if self.proved:
                    return
            self.exhausted = self.bound
            self.bound += 1

    def _next(self, choices: list[_Choice]) -> tuple[list[str] | None, bool]:
        """The next schedule depth first (``None`` when the bound is exhausted), and whether a choice was skipped
        for costing too much on the way there."""
        skipped = False
        for k in range(len(choices) - 1, -1, -1):
            choice = choices[k]
            for j in range(choice.taken + 1, len(choice.options)):
                name, cost = choice.options[j]
                if choice.spent + cost <= self.bound:
                    return [c.options[c.taken][0] for c in choices[:k]] + [name], skipped
                skipped = True
        return None, skipped
