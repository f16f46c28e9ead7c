"""What each step of a run touched: the executed footprints the explorer reasons with, and the logged accesses.

The scheduler decides who runs; it does not keep the explorer's books. At each decision it tells a
:class:`StepObserver` that a step begins, and it forwards what primitives and the instrumented code report while the
step runs. :class:`StepLog`, the observer every run has, keeps one footprint per step (the explorer's happens-before
and races, :attr:`lab.engine.run.RunResult.step_footprints`) and every access with its place and locks (the
atomicity check and the explanation of a counterexample, :attr:`lab.engine.run.RunResult.accesses`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol

from lab.engine.footprint import Entry, Footprint
from lab.engine.run import Access

_NOTHING: Footprint = frozenset()


class StepObserver(Protocol):
    """The three things the scheduler reports about steps, in the order they happen."""

    def step(self, actor: str, executes: Footprint, opaque: Sequence[Footprint]) -> None:
        """A new step of ``actor`` begins: it executes ``executes`` (the operation that opened it) and, inside code
        the lab cannot see, may touch each of ``opaque``."""
        ...

    def touched(self, entries: Iterable[Entry]) -> None:
        """The running step was seen to touch ``entries`` (a query of a primitive: no place to log)."""
        ...

    def accessed(self, actor: str, entry: Entry, where: tuple[str, int], locks: frozenset[str]) -> None:
        """The running step, of ``actor``, touched ``entry`` at ``where`` (file, line) while holding ``locks``."""
        ...


class StepLog:
    """Keeps each step's executed footprint and every access, cheaply: one set per step, one tuple per access."""

    __slots__ = ("_accesses", "_current", "_steps")

    def __init__(self) -> None:
        self._steps: list[set[Entry]] = []
        self._current: set[Entry] = set()
        self._accesses: list[tuple[int, str, Entry, tuple[str, int], frozenset[str]]] = []

    def step(self, actor: str, executes: Footprint, opaque: Sequence[Footprint]) -> None:
        """Open the next step with what its operation executes (see :class:`StepObserver`)."""
        current = set(executes)
        for footprint in opaque:
            current.update(footprint)
        self._current = current
        self._steps.append(current)

    def touched(self, entries: Iterable[Entry]) -> None:
        """Add ``entries`` to the running step's footprint."""
        if self._steps:
            self._current.update(entries)

    def accessed(self, actor: str, entry: Entry, where: tuple[str, int], locks: frozenset[str]) -> None:
        """Add ``entry`` to the running step's footprint and log the access."""
        self._current.add(entry)
        self._accesses.append((len(self._steps) - 1, actor, entry, where, locks))

    def last(self) -> Footprint:
        """The footprint of the latest step so far (empty before the first)."""
        return frozenset(self._current) if self._steps else _NOTHING

    def footprints(self) -> tuple[Footprint, ...]:
        """Every step's executed footprint, in order."""
        return tuple(map(frozenset, self._steps))

    def accesses(self) -> tuple[Access, ...]:
        """Every access logged, in order."""
        return tuple(map(Access._make, self._accesses))
