"""The vocabulary of one run of the scheduler: how it ended, what it decided, what it touched, what it produced.

These are plain values, shared by the scheduler that makes them and by everything that reads a run afterwards (the
explorer, the atomicity check, the runner, the evidence writers), so they live apart from the scheduler's machinery.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import NamedTuple, Protocol

from lab.engine.core._footprint import Entry, Footprint
from lab.engine.core._trace import TraceEvent


class RunStatus(StrEnum):
    """How a run of the scheduler ended."""

    FINISHED = "FINISHED"
    """Every actor returned or raised."""
    DEADLOCK = "DEADLOCK"
    """No actor could run and some had not finished."""
    HUNG = "HUNG"
    """An actor made no progress for the watchdog's time, blocked outside the lab's primitives."""
    DIVERGED = "DIVERGED"
    """The policy refused to go on (a replayed schedule no longer matches the code)."""


class ActorEnd(StrEnum):
    """The outcome the lab gives an actor that returned none of its own (what an actor returns is its outcome)."""

    ERROR = "ERROR"
    """The actor raised."""
    BLOCKED = "BLOCKED"
    """The actor was still waiting when the run deadlocked."""
    HUNG = "HUNG"
    """The actor had not ended when the watchdog stopped a hung run."""
    UNFINISHED = "UNFINISHED"
    """The actor never ended for another reason (the run diverged from a replayed schedule before its turn)."""

    @classmethod
    def unfinished(cls, status: str) -> ActorEnd:
        """What an actor that never ended is called in a run that ended with ``status`` (a RunStatus, or the text
        of one read from a record, which may be anything).

        >>> ActorEnd.unfinished(RunStatus.DEADLOCK), ActorEnd.unfinished("DIVERGED"), ActorEnd.unfinished("?")
        (<ActorEnd.BLOCKED: 'BLOCKED'>, <ActorEnd.UNFINISHED: 'UNFINISHED'>, <ActorEnd.UNFINISHED: 'UNFINISHED'>)
        """
        unfinished: dict[str, ActorEnd] = {RunStatus.DEADLOCK: cls.BLOCKED, RunStatus.HUNG: cls.HUNG}
        return unfinished.get(status, cls.UNFINISHED)


class Waiting(Protocol):
    """What a blocked actor waits for: a latch to open, a lock to be free, a barrier to trip."""

    def ready(self) -> bool:
        """True once the actor could go on."""
        ...

    def describe(self) -> str:
        """One line for the deadlock report: ``latch 'fast-committed' still needs 1 count_down``."""
        ...


@dataclass(frozen=True, slots=True)
class Decision:
    """One choice of the scheduler: who could run, who did."""

    runnable: tuple[str, ...]
    chosen: str


class Access(NamedTuple):
    """One access to shared state, recorded as it happened: in step ``step``, ``actor`` did ``entry`` at ``where``
    (file and line) while holding ``locks``. A named tuple: thousands are made per run, and cheaply."""

    step: int
    actor: str
    entry: Entry
    where: tuple[str, int]
    locks: frozenset[str]


@dataclass(frozen=True, slots=True)
class BlockedActor:
    """An actor that could not finish, and why."""

    actor: str
    waits_for: str


@dataclass(frozen=True)
class RunResult:
    """Everything one run produced. ``trace``, ``outcomes`` and ``decisions`` are deterministic; ``seconds`` is not."""

    status: RunStatus
    trace: tuple[TraceEvent, ...]
    outcomes: Mapping[str, str]
    errors: Mapping[str, str]
    blocked: tuple[BlockedActor, ...]
    decisions: tuple[Decision, ...]
    step_footprints: tuple[Footprint, ...] = ()
    accesses: tuple[Access, ...] = ()
    step_events: tuple[int, ...] = ()
    """Per step (per decision), the index of its first trace event: the trace read step by step, so that a table
    of the trace and an explanation of racing steps number steps alike."""
    hang_stack: str = ""
    leaked: tuple[str, ...] = ()
    problem: str = ""
    seconds: float = 0.0
    joined: frozenset[int] = frozenset()
    """Indices into ``accesses`` of each access that one operation made together with the access before it (a call
    the lab cannot see into, charged with several entries at once): nothing can run between the two."""

    @property
    def steps(self) -> int:
        """How many trace events the run recorded."""
        return len(self.trace)
