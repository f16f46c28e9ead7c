"""Search strategies behind one interface, and the portfolio that interleaves them in one budget.

=============  ===================================================  ===========================================
strategy       what it runs                                          what it can say without a failure
=============  ===================================================  ===========================================
``dpor``       optimal DPOR (:mod:`lab.engine.search._explorer`), the prover  PASS once every class was run
``pct``        probabilistic concurrency testing, depth 3            INCOMPLETE (it samples)
``random``     seeded uniform random walks                           INCOMPLETE (it samples)
``ipb``        iterative preemption bounding                         PASS if a bound skipped nothing, else the
                                                                     largest bound exhausted (INCOMPLETE)
``idb``        iterative delay bounding                              the same, in delays
``portfolio``  all of them in one budget, in a fixed rotation:       PASS when DPOR (or a bounded search) ended
               dpor, pct, dpor, random, dpor, idb, dpor, pct
=============  ===================================================  ===========================================

The portfolio is the default for finding bugs. DPOR takes every other execution, so a small correct program is
still proved (its tree ends within half the budget); PCT, random walks and delay bounding take the rest, because
bugs that need many actors in one order near the root lie where a depth-first search arrives last (Thomson,
Donaldson and Betts measured PCT and random scheduling finding more bugs than bounded systematic search). The
portfolio's PCT cycles through depths 1, 2 and 3, one per run.

Every strategy is deterministic for its seed: the same seed, budget and program give the same executions in the
same order, and every schedule it reports replays with ``lab replay``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from lab.engine.core._run import RunResult
from lab.engine.search._bounded import DELAYS, PREEMPTIONS, IterativeBounding
from lab.engine.search._driver import Judge, SearchReport, Strategy, drive, merge
from lab.engine.search._exploration import Exploration
from lab.engine.search._explorer import Explorer
from lab.engine.search._minimise import minimise
from lab.engine.search._walks import pct_sampler, random_sampler
from lab.errors import UsageError

STRATEGIES = ("portfolio", "dpor", "pct", "random", "ipb", "idb")
"""The strategies a search may be asked for, by name."""

MODES = ("find", "prove")
"""*find* stops at the first failure, confirms and minimises it; *prove* runs the whole budget and counts every
outcome (a lesson's table is graded on all of them)."""

PORTFOLIO_ROTATION = ("dpor", "pct", "dpor", "random", "dpor", "idb", "dpor", "pct")
"""The portfolio's turns, repeated: which strategy runs each execution."""


class Systematic:
    """The ``dpor`` strategy: the explorer's search, stepped one execution at a time."""

    name = "dpor"
    reports_progress = True  # the explorer calls the caller's progress itself

    def __init__(self, explorer: Explorer) -> None:
        self._explorer = explorer
        self.found = Exploration()
        self._ended = False

    @property
    def proved(self) -> bool:
        """The search ended, and no preemption bound cut it."""
        return self._ended and not self.found.bounded

    def runs(self) -> Iterator[Exploration]:
        """The explorer's executions, in its order."""
        for found in self._explorer.steps():
            self.found = found
            self._ended = not found.budget_hit
            yield found

    def covered(self) -> str:
        """Classes run, and the estimate of the classes there are."""
        estimate = self._explorer.estimated_classes()
        left = max(estimate - self.found.classes, 0)
        return f"{self.found.classes} classes of interleavings (about {left:,.0f} more by Knuth's estimate)"

    def estimated_schedules(self) -> float | None:
        """No estimate of the naive tree (its own estimate is of classes, in ``covered``)."""
        return None


def check_strategy(strategy: str, mode: str, seed: int, seconds: float | None) -> None:
    """Refuse a strategy, mode, seed or time budget the search cannot act on, with one line."""
    if strategy not in STRATEGIES:
        raise UsageError(f"strategy must be one of {', '.join(STRATEGIES)} (got {strategy!r})")
    if mode not in MODES:
        raise UsageError(f"mode must be 'find' or 'prove' (got {mode!r})")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise UsageError(f"seed must be a whole number, 0 or more (got {seed!r})")
    if seconds is not None and (isinstance(seconds, bool) or not isinstance(seconds, int | float) or seconds <= 0):
        raise UsageError(f"seconds must be a positive number of seconds (got {seconds!r})")


def search(
    explorer: Explorer,
    *,
    strategy: str,
    seed: int = 0,
    max_executions: int,
    seconds: float | None = None,
    judge: Judge | None = None,
    progress: Callable[[Exploration], None] | None = None,
) -> SearchReport:
    """Search the schedules of ``explorer``'s program with ``strategy``: every strategy runs its executions
    through the explorer's program (and hands them to its digest), so they all explore the same program the
    same way. With a ``judge`` the search stops at the first failing outcome (find mode).

    Only the strategies that can prove (DPOR, the bounded searches) hand their runs to the explorer's digest (the
    atomicity check, the threads an actor started): those checks only ever turn a PASS into an INCOMPLETE, and a
    sampler never passes, so digesting its runs would cost time (most of a run's, with many actors) for nothing.
    A PASS rests on the prover's own runs, every one of them digested."""
    actors = explorer.actors
    run_once = explorer.program.run
    observe: Callable[[RunResult], None] = explorer.observe

    def make(name: str) -> Strategy:
        if name == "dpor":
            return Systematic(explorer)
        if name == "random":  # a sampler's runs feed no check that could turn a PASS it never gives
            return random_sampler(run_once, actors, seed)
        if name == "pct":
            return pct_sampler(run_once, actors, seed, None if strategy == "portfolio" else 3)
        return IterativeBounding(PREEMPTIONS if name == "ipb" else DELAYS, run_once, actors, observe)

    names = PORTFOLIO_ROTATION if strategy == "portfolio" else (strategy,)
    strategies = [make(name) for name in dict.fromkeys(names)]
    order = {s.name: i for i, s in enumerate(strategies)}
    rotation = [order[name] for name in names]
    return drive(
        strategies,
        rotation,
        strategy=strategy,
        seed=seed,
        max_executions=max_executions,
        seconds=seconds,
        judge=judge,
        progress=progress,
    )


__all__ = [
    "MODES",
    "PORTFOLIO_ROTATION",
    "STRATEGIES",
    "Judge",
    "SearchReport",
    "Strategy",
    "Systematic",
    "check_strategy",
    "drive",
    "merge",
    "minimise",
    "search",
]
