"""One budget, one or several strategies: the loop every search runs in, and what it reports.

Each strategy is an iterator of executions (:class:`Strategy`). The driver takes one execution at a time from the
strategy whose turn it is (a portfolio interleaves several in a fixed rotation), judges every outcome the first
time any strategy reaches it, and stops at the first that fails when it is finding rather than proving. It stops
too when a strategy has covered everything (systematic DPOR that ended, or a bounded search that skipped nothing:
nothing is left for the others to find), when the schedule budget is spent, or when the time budget is.

The order of executions depends only on the strategies, their seeds and the rotation; only where a time budget
cuts it depends on the clock, which is why the record says whether time was what stopped it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from lab.engine.search._exploration import Execution, Exploration


class Strategy(Protocol):
    """A search strategy: a name, its own tally, and its executions one at a time."""

    name: str
    found: Exploration
    reports_progress: bool
    """True when it calls the caller's progress callback itself (DPOR's explorer does); the driver does otherwise."""

    @property
    def proved(self) -> bool:
        """True once its executions covered every schedule there is (only systematic strategies ever are)."""
        ...

    def runs(self) -> Iterator[Exploration]:
        """Run one execution per step and yield the tally after it (``last_key`` is that run's outcome)."""
        ...

    def covered(self) -> str:
        """What its executions covered, in words, for an INCOMPLETE verdict."""
        ...

    def estimated_schedules(self) -> float | None:
        """An estimate of how large its search space is (``None``: it makes none)."""
        ...


Judge = Callable[[str, object], bool]
"""Whether an outcome (its key and the payload of a run that reached it) is a failure."""


@dataclass
class SearchReport:
    """What a search did: the merged tally of every strategy, where the first failure was, and why it stopped."""

    found: Exploration
    strategy: str
    seed: int
    executions: int = 0
    first_failure: int | None = None
    """The 1-based index, among all executions of the search, of the first that failed (``None``: none did)."""
    failing: Execution | None = None
    """That execution's example (the run that reached the failing outcome first)."""
    proved: bool = False
    """Every schedule was covered: a PASS is a proof."""
    time_hit: bool = False
    by_strategy: dict[str, int] = field(default_factory=dict)
    covered: list[str] = field(default_factory=list)
    """Per strategy, what it covered, in words (for an INCOMPLETE verdict)."""
    estimate: float | None = None
    """An estimate of the schedules there are (Knuth's estimator, from the random walks), when one was made."""


def drive(
    strategies: Sequence[Strategy],
    rotation: Sequence[int],
    *,
    strategy: str,
    seed: int,
    max_executions: int,
    seconds: float | None = None,
    judge: Judge | None = None,
    progress: Callable[[Exploration], None] | None = None,
) -> SearchReport:
    """Run ``strategies`` in ``rotation`` (indices into ``strategies``, repeated) until one proves the program,
    the first failure (with a ``judge``), or a budget; every strategy's executions count against one budget."""
    deadline = time.perf_counter() + seconds if seconds is not None else None
    iterators: dict[int, Iterator[Exploration]] = {i: s.runs() for i, s in enumerate(strategies)}
    live = list(dict.fromkeys(rotation))
    turn = 0
    judged: dict[str, bool] = {}
    report = SearchReport(Exploration(), strategy, seed)
    counts = {s.name: 0 for s in strategies}
    while live:
        if report.executions >= max_executions:
            break
        if deadline is not None and time.perf_counter() >= deadline:
            report.time_hit = True
            break
        index = rotation[turn % len(rotation)]
        turn += 1
        if index not in live:
            continue
        chosen = strategies[index]
        try:
            found = next(iterators[index])
        except StopIteration:  # it ended without a run: nothing left in it
            live.remove(index)
            if chosen.proved:
                report.proved = True
                break
            continue
        report.executions += 1
        counts[chosen.name] += 1
        if progress is not None and not chosen.reports_progress:
            progress(found)
        key = found.last_key
        if key is not None and judge is not None and key not in judged:
            judged[key] = judge(key, found.executions[key].payload)
            if judged[key]:
                report.first_failure = report.executions
                report.failing = found.executions[key]
                break
        if chosen.proved:
            report.proved = True
            break
        if not found.budget_hit:  # it ended (a bounded DPOR, say) without covering all
            live.remove(index)
    report.found = merge([s.found for s in strategies])
    report.found.budget_hit = not report.proved
    report.by_strategy = {name: n for name, n in counts.items() if n}
    report.covered = [f"{s.name}: {s.covered()}" for s in strategies if counts[s.name]]
    report.estimate = next((e for s in strategies if (e := s.estimated_schedules()) is not None), None)
    return report


def merge(parts: Sequence[Exploration]) -> Exploration:
    """One tally of several strategies' explorations: counts added, the best example per outcome kept."""
    if len(parts) == 1:
        return parts[0]
    merged = Exploration()
    for part in parts:
        merged.schedules += part.schedules
        merged.pruned += part.pruned
        merged.blocked += part.blocked
        merged.bounded = merged.bounded or part.bounded
        merged.naive_bound = max(merged.naive_bound, part.naive_bound)
        merged.class_names |= part.class_names
        for key, count in part.counts.items():
            merged.counts[key] = merged.counts.get(key, 0) + count
            mine, best = part.executions[key], merged.executions.get(key)
            if best is None or mine.rank < best.rank:
                merged.executions[key] = mine
    return merged
