"""One actor of a run, as the scheduler sees it: its state, its baton, what it waits for and what it is about to do.

Every part of the scheduler reads these records (the handoff to choose who can run, the watchdog to unwind who did
not end, the decision-point view to tell the policy what each is about to touch), so they live apart from all of
them. :class:`_Aborted` is here for the same reason: the handoff raises it, the actor's life catches it.
"""

from __future__ import annotations

import _thread
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum

from lab.engine.core._footprint import EVERYTHING, NOTHING, Footprint
from lab.engine.core._run import Waiting


class _Aborted(BaseException):
    """Raised inside actor threads to unwind them when a run is stopped (deadlock, hang).

    A BaseException, so that an actor's ``except Exception`` cannot swallow it.
    """


class ActorState(StrEnum):
    """Where an actor is in its run."""

    NEW = "new"
    RUNNABLE = "runnable"
    BLOCKED = "blocked"
    DONE = "done"


DONE, BLOCKED = ActorState.DONE, ActorState.BLOCKED
"""Module-level names for the two states the handoff tests at every point (one global load, not an attribute)."""


@dataclass(eq=False, slots=True)
class Actor:
    """One actor: its number and name, its body, and the state the scheduler keeps for it."""

    index: int
    name: str
    body: Callable[[], object]
    bit: int = 0  # 1 << index: a decision's runnable actors are one int (see lab.engine.core._handoff)
    baton: _thread.LockType | None = None  # its pooled worker's: released to let this actor run
    thread: threading.Thread | None = None
    done: _thread.LockType = field(default_factory=_thread.allocate_lock)  # held while the actor's body may run
    state: ActorState = ActorState.NEW
    waiting: Waiting | None = None
    pending: Footprint = EVERYTHING
    op: Footprint = NOTHING
    outcome: str | None = None
    error: str | None = None
    locks: set[str] = field(default_factory=set)
    lockset: frozenset[str] = frozenset()
    opaque: list[Footprint] = field(default_factory=list)
    gate: Waiting | None = None  # the next step cannot begin until this is ready (a lock it is about to take)


OutcomeText = Callable[[object], str]
"""How the value an actor's body returned becomes its outcome (the scenario layer passes its own)."""


def default_outcome(value: object) -> str:
    """``DONE`` for ``None``, an enum's value, else the value's text."""
    return "DONE" if value is None else str(getattr(value, "value", value))


def waits_for(actor: Actor) -> str:
    """What a stuck actor waits for, in the words of the deadlock report."""
    waiting = actor.waiting if actor.waiting is not None else actor.gate
    return waiting.describe() if waiting is not None else "nothing (never scheduled)"


def ran() -> None:
    """What an actor's body becomes once its run is over (see :meth:`lab.engine.core._scheduler.Scheduler.run`)."""
