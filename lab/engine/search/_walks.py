"""Sampling strategies: seeded random walks and probabilistic concurrency testing (PCT).

Systematic search (DPOR) explores the schedule tree depth first from the left: a bug that needs many actors in a
particular order near the root (nine setters before one checker) lies in a corner it reaches last. A sampler
instead draws whole schedules at random, so every region of the tree is as close as any other. Thomson, Donaldson
and Betts ("Concurrency testing using controlled schedulers: an empirical study", TOPC 2016) found random and PCT
schedulers finding more of their benchmark's bugs than bounded systematic search, with fewer executions.

- **random**: at every scheduling point with a choice, each runnable actor is equally likely.
- **pct** (Burckhardt, Kothari, Musuvathi, Nagarakatte, "A randomized scheduler with probabilistic guarantees of
  finding bugs", ASPLOS 2010): each actor gets a distinct random priority and the highest runnable one always runs;
  at ``depth - 1`` random steps the running actor's priority drops below every other. A bug of depth ``d`` (``d``
  ordering constraints) among ``n`` actors and ``k`` steps is found by one run with probability at least
  ``1 / (n * k^(d-1))``.

A sampler never proves anything: it does not know what it has not drawn, so its exploration is never complete and
its verdict without a failure is INCOMPLETE. Each execution's randomness comes from ``(strategy, seed, index)``
alone, so execution 412 of seed 7 is the same schedule on every machine, and its schedule string replays it.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Sequence

from lab.engine.core._policies import DecisionPoint
from lab.engine.core._run import RunResult, RunStatus
from lab.engine.search._exploration import Exploration, NondeterminismError, tally
from lab.engine.search._program import RunOnce


def run_random(seed: int, strategy: str, index: int) -> random.Random:
    """The random source of one execution: the same ``(seed, strategy, index)`` gives the same schedule, wherever
    it runs and whatever ran before it (a string seed is hashed with SHA-512, never with Python's salted hash)."""
    return random.Random(f"{strategy}:{seed}:{index}")


class _Sampled:
    """A policy that draws one schedule: counts its preemptions (for the example's rank) and the Knuth product of
    the choices it was offered (for the estimate of the tree's size)."""

    def __init__(self) -> None:
        self.preemptions = 0
        self.product = 1.0

    def choose(self, point: DecisionPoint) -> str:
        """Pick an actor; a point with one runnable actor is no choice."""
        runnable = point.runnable
        if len(runnable) == 1:
            return runnable[0]
        chosen = self.pick(point)
        self.product *= len(runnable)
        self.preemptions += point.preempts(chosen)
        return chosen

    def pick(self, point: DecisionPoint) -> str:
        """The strategy's choice among at least two runnable actors."""
        raise NotImplementedError


class RandomWalk(_Sampled):
    """Each runnable actor equally likely at every choice."""

    def __init__(self, rng: random.Random) -> None:
        super().__init__()
        self._rng = rng

    def pick(self, point: DecisionPoint) -> str:
        """A uniform choice."""
        return point.runnable[self._rng.randrange(len(point.runnable))]


class PriorityWalk(_Sampled):
    """One PCT schedule: random distinct priorities, ``depth - 1`` priority change points among ``steps`` steps."""

    def __init__(self, rng: random.Random, actors: Sequence[str], depth: int, steps: int) -> None:
        super().__init__()
        order = list(actors)
        rng.shuffle(order)
        # the highest priority runs; actors get depth .. depth + n - 1, change points lower one to depth - 1 .. 1
        self._priority = {name: depth + rank for rank, name in enumerate(order)}
        points = rng.sample(range(1, max(steps, depth) + 1), depth - 1) if depth > 1 else []
        self._changes = {step: depth - 1 - n for n, step in enumerate(sorted(points))}

    def choose(self, point: DecisionPoint) -> str:
        """Lower the running actor's priority at a change point (whether or not the point is a choice)."""
        lowered = self._changes.get(point.index)
        if lowered is not None:
            running = max(point.runnable, key=self._priority.__getitem__)
            self._priority[running] = lowered
        return super().choose(point)

    def pick(self, point: DecisionPoint) -> str:
        """The runnable actor with the highest priority."""
        return max(point.runnable, key=self._priority.__getitem__)


class Sampler:
    """Runs one drawn schedule after another, tallying each like the systematic search does; never ends by itself
    (the caller's budget ends it). ``observe`` sees every run (the digests the checks beside the search want)."""

    reports_progress = False  # the driver reports each of its runs

    def __init__(
        self,
        name: str,
        run_once: RunOnce,
        actors: Sequence[str],
        draw: Callable[[int, int], _Sampled],
        observe: Callable[[RunResult], None] | None = None,
    ) -> None:
        self.name = name
        self._run_once = run_once
        self._actors = tuple(actors)
        self._draw = draw  # (execution index, longest run so far in steps) -> the policy of that execution
        self._observe = observe
        self.found = Exploration()
        self.longest = 0
        self._estimate_sum = 0.0

    @property
    def proved(self) -> bool:
        """A sampler never covers every schedule."""
        return False

    def estimated_schedules(self) -> float | None:
        """Knuth's estimator: the mean, over the runs drawn, of the product of the choices each was offered; an
        unbiased estimate of the naive tree's schedules when every choice was uniform (the random walk)."""
        runs = self.found.schedules
        return self._estimate_sum / runs if runs else None

    def covered(self) -> str:
        """What its executions covered, in words."""
        return f"{self.found.schedules} sampled schedules in {self.found.classes} classes"

    def runs(self) -> Iterator[Exploration]:
        """One execution per step, forever."""
        index = 0
        while True:
            policy = self._draw(index, self.longest)
            index += 1
            ran = self._run_once(policy)
            run, key, payload = ran.run, ran.key, ran.payload
            if run.status == RunStatus.DIVERGED:
                raise NondeterminismError(run.problem)
            if self._observe is not None:
                self._observe(run)
            self.longest = max(self.longest, len(run.decisions))
            self._estimate_sum += policy.product
            self.found.schedules += 1
            self.found.last_key = key
            self.found.budget_hit = True
            tally(self.found, run, key, payload, policy.preemptions, self._actors)
            yield self.found


def random_sampler(
    run_once: RunOnce, actors: Sequence[str], seed: int, observe: Callable[[RunResult], None] | None = None
) -> Sampler:
    """The ``random`` strategy."""
    return Sampler("random", run_once, actors, lambda i, _: RandomWalk(run_random(seed, "random", i)), observe)


def pct_sampler(
    run_once: RunOnce,
    actors: Sequence[str],
    seed: int,
    depth: int | None = 3,
    observe: Callable[[RunResult], None] | None = None,
) -> Sampler:
    """The ``pct`` strategy with bug depth ``depth`` (``None``: cycle through depths 1, 2 and 3, one per run, as the
    portfolio does: depth 1 is a random order of whole actors, the commonest shape of an ordering bug).

    The number of steps ``k`` is not known before a run: it is the longest run seen so far (ten per actor before
    the first), so change points fall anywhere in runs as long as the ones already seen."""

    def draw(index: int, longest: int) -> _Sampled:
        d = depth if depth is not None else 1 + index % 3
        steps = longest or 10 * len(actors)
        return PriorityWalk(run_random(seed, "pct", index), actors, d, steps)

    return Sampler("pct", run_once, actors, draw, observe)
