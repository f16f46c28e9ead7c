"""What each step of a run touched: the executed footprints the explorer reasons with, and the logged accesses.

The scheduler decides who runs; it does not keep the explorer's books. At each decision it tells a
:class:`StepObserver` that a step begins, and it forwards what primitives and the instrumented code report while the
step runs. :class:`StepLog`, the observer every run has, keeps one footprint per step (the explorer's happens-before
and races, :attr:`lab.engine.core._run.RunResult.step_footprints`) and every access with its place and locks (the
atomicity check and the explanation of a counterexample, :attr:`lab.engine.core._run.RunResult.accesses`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import repeat
from typing import Protocol

from lab.engine.core._footprint import Entry, Footprint
from lab.engine.core._run import Access

_NOTHING: Footprint = frozenset()
_new_tuple = tuple.__new__  # tuple.__new__(Access, t) is Access._make(t) without its Python frame: hundreds per run


class StepObserver(Protocol):
    """What the scheduler reports about steps, in the order it happens. One actor runs at a time, so every report
    after :meth:`step` is about that step of that actor, until the next :meth:`step`."""

    def step(self, actor: str, executes: Footprint, opaque: Sequence[Footprint], locks: frozenset[str]) -> None:
        """A new step of ``actor`` begins, holding ``locks``: it executes ``executes`` (the operation that opened it)
        and, inside code the lab cannot see, may touch each of ``opaque``."""
        ...

    def touched(self, entries: Iterable[Entry]) -> None:
        """The running step was seen to touch ``entries`` (a query of a primitive: no place to log)."""
        ...

    def accessed(self, entry: Entry, where: tuple[str, int]) -> None:
        """The running step touched ``entry`` at ``where`` (file, line)."""
        ...

    def relocked(self, locks: frozenset[str]) -> None:
        """The running actor now holds ``locks`` (it took or gave up a lock within its step)."""
        ...

    def close(self) -> None:
        """The run is being stopped: what unwinding actors touch from now on is not part of any step."""
        ...


class StepLog:
    """Keeps each step's executed footprint and every access, cheaply: one set per step, one tuple per access.

    Its running-step fields are public for one reason: the instrumented code records hundreds of accesses a run,
    and at line granularity on Python 3.11 every Python call it makes costs a trace event, so
    :meth:`lab.engine.record._accesses.Recording.access` appends to ``current`` and ``log`` itself (what
    :meth:`accessed`
    does), without a call, and the scheduler opens each step itself (what :meth:`step` does). Nothing else writes
    them.
    """

    __slots__ = ("actor", "closed", "current", "index", "joined", "locks", "log", "opened")

    def __init__(self) -> None:
        self.opened: list[set[Entry]] = []
        """Every step's footprint so far, the running one last."""
        self.current: set[Entry] = set()
        """The running step's footprint so far."""
        self.index = -1
        """The running step's number."""
        self.actor = ""
        """The running step's actor."""
        self.locks: frozenset[str] = frozenset()
        """The locks the running actor holds."""
        self.closed = False
        """True once the run is being stopped: nothing more is recorded."""
        self.log: list[tuple[int, str, Entry, tuple[str, int], frozenset[str]]] = []
        """Every access so far: step, actor, entry, where, locks."""
        self.joined: list[int] = []
        """The positions in ``log`` of accesses made by one operation with the access before them (see
        :attr:`lab.engine.core._run.RunResult.joined`)."""

    def step(self, actor: str, executes: Footprint, opaque: Sequence[Footprint], locks: frozenset[str]) -> None:
        """Open the next step with what its operation executes (see :class:`StepObserver`)."""
        current = set(executes)
        for footprint in opaque:
            current.update(footprint)
        self.current = current
        self.actor = actor
        self.locks = locks
        self.index = len(self.opened)
        self.opened.append(current)

    def touched(self, entries: Iterable[Entry]) -> None:
        """Add ``entries`` to the running step's footprint."""
        if self.opened and not self.closed:
            self.current.update(entries)

    def accessed(self, entry: Entry, where: tuple[str, int]) -> None:
        """Add ``entry`` to the running step's footprint and log the access."""
        if not self.closed:
            self.current.add(entry)
            self.log.append((self.index, self.actor, entry, where, self.locks))

    def relocked(self, locks: frozenset[str]) -> None:
        """The running actor's locks changed."""
        self.locks = locks

    def close(self) -> None:
        """Record nothing more."""
        self.closed = True

    def last(self) -> Footprint:
        """The footprint of the latest step so far (empty before the first)."""
        return frozenset(self.current) if self.opened else _NOTHING

    def footprints(self) -> tuple[Footprint, ...]:
        """Every step's executed footprint, in order."""
        return tuple(map(frozenset, self.opened))

    def accesses(self) -> tuple[Access, ...]:
        """Every access logged, in order."""
        return tuple(map(_new_tuple, repeat(Access), self.log))
