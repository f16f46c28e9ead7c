"""What one run knows as it goes: its actors, its trace, its decisions, how it is ending; and the trace's one writer.

The scheduler is one state machine whose parts live in their own modules, each a mixin of :class:`RunState`: the
handoff of the baton (:mod:`lab.engine.core._handoff`), what primitives report while an actor runs
(:mod:`lab.engine.core._reports`), an actor's life on its thread (:mod:`lab.engine.core._actor_life`), the watchdog
(:mod:`lab.engine.core._watchdog`) and what a decision point shows the policy (:mod:`lab.engine.core._view`). They
share these fields as plain attributes of one object, read directly on the hot path: a property or a call per read
would cost a trace event each at line granularity on Python 3.11.
"""

from __future__ import annotations

import _thread
import threading
from collections.abc import Callable, Mapping

from lab.engine.core._actor import Actor, OutcomeText
from lab.engine.core._policies import Policy
from lab.engine.core._run import BlockedActor, Decision, RunStatus
from lab.engine.core._steps import StepLog
from lab.engine.core._trace import Json, TraceEvent

Choices = tuple[tuple[str, ...], dict[str, Decision]]
"""For one set of runnable actors: their names (a decision point's ``runnable``) and the decision made there for
each chosen name, made once (see :func:`lab.engine.core._handoff.choices_for`)."""

new = object.__new__
# A trace event made without its dataclass __init__: a frozen dataclass sets each field through a Python frame and
# object.__setattr__, and the scheduler makes one per line an actor runs, on 3.11 each call also a trace event.
# tests/test_scheduler_speed_equivalence.py holds the events made this way equal to the constructor's.
set_step, set_actor, set_op, set_obj, set_detail = (
    TraceEvent.__dict__[name].__set__ for name in ("step", "actor", "op", "obj", "detail")
)


class RunState:
    """The fields every part of the scheduler shares, and :meth:`record`, which every part writes the trace with."""

    def __init__(
        self,
        *,
        policy: Policy,
        watchdog_seconds: float,
        outcome_text: OutcomeText,
        leak_grace_seconds: float,
        steps: StepLog,
    ) -> None:
        self._policy = policy
        self._choose = policy.choose
        self._watchdog = watchdog_seconds
        self._leak_grace = leak_grace_seconds
        self._actor_hooks: tuple[Callable[[], None], Callable[[], None]] | None = None
        self._end_watcher: Callable[[str, int], None] | None = None
        self._outcome_text = outcome_text
        self._actors: list[Actor] = []
        self._by_name: dict[str, Actor] = {}
        self.local = threading.local()
        """``local.actor`` is the calling thread's actor, if any: ``getattr(scheduler.local, "actor", None)`` tells
        an actor from another thread without a Python call (the recording path asks hundreds of times a run)."""
        self._trace: list[TraceEvent] = []
        self._decisions: list[Decision] = []
        self._step_events: list[int] = []  # per decision, how long the trace was: where its step's events begin
        self._streak = 0  # choices in a row of the running actor while another could run (see _handoff.FAIR_STREAK)
        self._choices: dict[int, Choices] = {}  # this run's actors' table (see _handoff.choices_for)
        self._steps = steps
        self._names: tuple[str, ...] = ()  # the actors' names, once the run has started (no actor joins after)
        self._finished = _thread.allocate_lock()
        self._finished.acquire()  # released once, when the run is over
        self._over = False
        self._aborted = False
        self._started = False
        self._blocked_report: tuple[BlockedActor, ...] = ()
        self._status = RunStatus.FINISHED
        self._problem = ""
        self._current: Actor | None = None
        self._outside = False  # the watchdog found the running actor blocked outside the lab (see _watchdog)
        self._sweep: Callable[[], None] | None = None  # run in the running actor at each point (sweep_with)
        self._sweeping: Actor | None = None  # the actor running the sweep: its points there switch to nobody

    def record(self, op: str, obj: str = "", detail: Mapping[str, Json] | None = None, *, actor: str = "") -> None:
        """Append one event to the trace, for the calling actor (or ``actor`` when given)."""
        if self._aborted:
            return
        if not actor:
            me: Actor | None = getattr(self.local, "actor", None)
            actor = me.name if me is not None else "lab"
        trace = self._trace
        event = new(TraceEvent)  # TraceEvent(len(trace), actor, op, obj, sorted_detail(detail) if detail else {})
        set_step(event, len(trace))
        set_actor(event, actor)
        set_op(event, op)
        set_obj(event, obj)
        set_detail(event, dict(sorted(detail.items())) if detail else {})  # sorted_detail, without its two calls
        trace.append(event)

    def _finish(self) -> None:
        """The run is over: let the thread waiting in :meth:`Scheduler.run` go on (once)."""
        if not self._over:
            self._over = True
            self._finished.release()
