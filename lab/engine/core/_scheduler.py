# size: the Scheduler is one state machine (baton, blocking, watchdog, leaks); its vocabulary is apart
"""A deterministic scheduler over real threads.

Each actor runs on its own ``threading.Thread``, but only one runs at a time: the running actor holds the baton and
passes it on only at *scheduling points* (the lab's latch, event, barrier and lock operations, probe points, actor
start and end). At each point one pluggable decision, :meth:`Policy.choose`, names the actor that runs next, and
the baton goes straight to it: one lock release per switch, no central thread in the loop, no sleeps, no polling.

Because the order of every shared-state step is decided here, and recorded, the trace of a run depends only on the
scenario and the policy. When no actor can run and some have not finished, the run stops at once with a report
of who waits for what; a watchdog catches the one thing the scheduler cannot see, an actor blocked outside the lab.

The scheduler keeps no one else's books: what each step touched goes to a :class:`lab.engine.core._steps.StepObserver`,
the values a run produces are in :mod:`lab.engine.core._run`, the policies in :mod:`lab.engine.core._policies`, and
the pooled actor threads in :mod:`lab.engine.core._pool`.

Over 300 lines: one class, the whole life of a run (points, handoffs, blocking, stopping), clearer read in one place.
"""

from __future__ import annotations

import _thread
import contextlib
import contextvars
import ctypes
import gc
import os
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from lab.engine.core._footprint import EVERYTHING, NOTHING, Entry, Footprint
from lab.engine.core._policies import DecisionPoint, KeepCurrent, Policy
from lab.engine.core._pool import ACTOR_POOL, ThreadState
from lab.engine.core._run import ActorEnd, BlockedActor, Decision, RunResult, RunStatus, Waiting
from lab.engine.core._steps import StepLog
from lab.engine.core._trace import Json, TraceEvent
from lab.errors import UsageError

DEFAULT_WATCHDOG_SECONDS = 10.0

FAIR_STREAK = 2_000
"""How many choices in a row one actor may be given while another could run before it must let another go first.

A spin wait (``while not flag: pass``) under a policy that keeps the running actor would spin for ever: every real
thread scheduler is fair, and so is this one, past this many steps. The rule is deterministic (a replay meets it at
the same points) and recorded in the trace (``fair.yield``); schedules in which one actor runs longer than this while
another could run are never explored, so an exploration whose runs met it is not a proof (see
:mod:`lab.scenarios.exploring`)."""

MAX_DECISIONS = 200_000
"""The most scheduling points one run may take: past them it ends HUNG, naming the actor that was running (an actor
that spins waiting for something no other actor will ever do)."""
_LEAK_GRACE_SECONDS = 2.0


class _Aborted(BaseException):
    """Raised inside actor threads to unwind them when a run is stopped (deadlock, hang).

    A BaseException, so that an actor's ``except Exception`` cannot swallow it.
    """


class _State(StrEnum):
    NEW = "new"
    RUNNABLE = "runnable"
    BLOCKED = "blocked"
    DONE = "done"


@dataclass(eq=False, slots=True)
class _Actor:
    index: int
    name: str
    body: Callable[[], object]
    bit: int = 0  # 1 << index: a decision's runnable actors are one int (see _Choices)
    baton: _thread.LockType | None = None  # its pooled worker's: released to let this actor run
    thread: threading.Thread | None = None
    done: _thread.LockType = field(default_factory=_thread.allocate_lock)  # held while the actor's body may run
    state: _State = _State.NEW
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


def _default_outcome(value: object) -> str:
    return "DONE" if value is None else str(getattr(value, "value", value))


_DONE, _BLOCKED = _State.DONE, _State.BLOCKED

_Choices = tuple[tuple[str, ...], dict[str, Decision]]
"""For one set of runnable actors: their names (a decision point's ``runnable``) and the decision made there for
each chosen name, made once."""

_CHOICES: dict[tuple[str, ...], dict[int, _Choices]] = {}
"""Actor names -> runnable set (a bit per actor) -> its :data:`_Choices`, shared by every run of those actors: the
same few runnable sets and decisions recur at every point of every run of an exploration, so each tuple and
:class:`Decision` is made once, and the explorer, comparing a run's with an earlier run's, finds the same objects."""
_CHOICES_MAX = 256  # sets of actor names kept; past this the table starts afresh (a test suite's many scenarios)

_new = object.__new__
# A trace event made without its dataclass __init__: a frozen dataclass sets each field through a Python frame and
# object.__setattr__, and the scheduler makes one per line an actor runs, on 3.11 each call also a trace event.
# tests/test_scheduler_speed_equivalence.py holds the events made this way equal to the constructor's.
_set_step, _set_actor, _set_op, _set_obj, _set_detail = (
    TraceEvent.__dict__[name].__set__ for name in ("step", "actor", "op", "obj", "detail")
)


class _Point(DecisionPoint):
    """A decision point of a :class:`Scheduler`: what the explorer asks of it, read from the scheduler directly
    (not through :class:`RunView`'s methods, one Python call fewer per question)."""

    __slots__ = ()

    def pending(self) -> dict[str, Footprint]:
        """The pending footprint of every actor that has not finished, by name."""
        run: Scheduler = self._run  # type: ignore[assignment]  # a _Point is made by its scheduler only
        pending: dict[str, Footprint] = {}  # plain loops: on 3.11 a comprehension is a call, traced at line level
        for actor in run._actors:
            if actor.state is not _DONE:
                pending[actor.name] = actor.pending
        return pending

    def held(self) -> dict[str, str]:
        """Which actor holds each lock right now (lock name -> actor)."""
        run: Scheduler = self._run  # type: ignore[assignment]
        held: dict[str, str] = {}
        for actor in run._actors:
            for lock in actor.locks:
                held[lock] = actor.name
        return held

    def last_step(self) -> Footprint:
        """What the step that just ended was seen to touch (empty before the first step)."""
        run: Scheduler = self._run  # type: ignore[assignment]
        steps = run._steps  # StepLog.last, inline
        return frozenset(steps.current) if steps.opened else NOTHING


class Scheduler:
    """Runs actors one at a time on real threads, switching only at scheduling points.

    Primitives call :meth:`point` before an operation (a chance to switch), :meth:`record` to log what they did,
    and :meth:`block` to wait for a :class:`Waiting` condition. Calls from a thread that is not one of this run's
    actors (the main thread during setup, for instance) return ``None`` from :meth:`current`, and primitives then
    behave like plain threading objects. What each step touches goes to ``steps`` (a fresh :class:`StepLog` by
    default), whose books become the run's ``step_footprints`` and ``accesses``.
    """

    def __init__(
        self,
        *,
        policy: Policy | None = None,
        watchdog_seconds: float = DEFAULT_WATCHDOG_SECONDS,
        outcome_text: OutcomeText = _default_outcome,
        leak_grace_seconds: float = _LEAK_GRACE_SECONDS,
        steps: StepLog | None = None,
    ) -> None:
        self._policy = policy if policy is not None else KeepCurrent()
        self._choose = self._policy.choose
        self._watchdog = watchdog_seconds
        self._leak_grace = leak_grace_seconds
        self._actor_hooks: tuple[Callable[[], None], Callable[[], None]] | None = None
        self._end_watcher: Callable[[str, int], None] | None = None
        self._outcome_text = outcome_text
        self._actors: list[_Actor] = []
        self._by_name: dict[str, _Actor] = {}
        self.local = threading.local()
        """``local.actor`` is the calling thread's actor, if any: ``getattr(scheduler.local, "actor", None)`` tells
        an actor from another thread without a Python call (the recording path asks hundreds of times a run)."""
        self._trace: list[TraceEvent] = []
        self._decisions: list[Decision] = []
        self._streak = 0  # choices in a row of the running actor while another could run (see FAIR_STREAK)
        self._choices: dict[int, _Choices] = {}  # this run's actors' table in _CHOICES, from the start of the run
        self._steps = steps if steps is not None else StepLog()
        self._names: tuple[str, ...] = ()  # the actors' names, once the run has started (no actor joins after)
        self._finished = _thread.allocate_lock()
        self._finished.acquire()  # released once, when the run is over
        self._over = False
        self._aborted = False
        self._started = False
        self._blocked_report: tuple[BlockedActor, ...] = ()
        self._status = RunStatus.FINISHED
        self._problem = ""
        self._current: _Actor | None = None

    # -- building ------------------------------------------------------------------------------------------------

    def add_actor(self, name: str, body: Callable[[], object]) -> None:
        """Declare an actor; declaration order is the actors' number (lowest first)."""
        if self._started:
            raise UsageError("actors must be added before the run starts")
        if name in self._by_name:
            raise UsageError(f"two actors are named {name!r}")
        actor = _Actor(len(self._actors), name, body, 1 << len(self._actors))
        self._actors.append(actor)
        self._by_name[name] = actor

    def watch_ends(self, watcher: Callable[[str, int], None]) -> None:
        """Call ``watcher(actor, step)`` in each actor's thread right after it ends, outside the lab's view.

        While the watcher runs, the thread is not an actor: lab primitives behave like plain threading objects, so
        the watcher can read state (``session.snapshot()``) without creating scheduling points.
        """
        self._end_watcher = watcher

    def set_actor_hooks(self, on_start: Callable[[], None], on_end: Callable[[], None]) -> None:
        """Run ``on_start`` in each actor's thread before its body and ``on_end`` after (line tracing uses this)."""
        self._actor_hooks = (on_start, on_end)

    @property
    def actor_names(self) -> tuple[str, ...]:
        """The actors' names in declaration order."""
        return self._names if self._started else tuple(actor.name for actor in self._actors)

    # -- what primitives call ------------------------------------------------------------------------------------

    def current(self) -> str | None:
        """The name of the actor calling, or ``None`` when called from outside this run's actors."""
        actor: _Actor | None = getattr(self.local, "actor", None)
        return actor.name if actor is not None else None

    def is_actor(self) -> bool:
        """True when called from one of this run's actors (cheaper than :meth:`current` on the recording path)."""
        return getattr(self.local, "actor", None) is not None

    @property
    def steps(self) -> StepLog:
        """The books of this run's steps: the instrumented code logs its accesses there directly, one call each
        (every access is by the running step, and the scheduler would only pass it on)."""
        return self._steps

    @property
    def aborted(self) -> bool:
        """True once the run is being stopped; primitives then change state without scheduling."""
        return self._aborted

    def point(
        self, footprint: Footprint = EVERYTHING, *, executes: Footprint | None = None, gate: Waiting | None = None
    ) -> None:
        """A scheduling point: the policy may let another actor run before the caller's next operation.

        ``footprint`` says what the step that follows may touch, as far as the caller can tell beforehand; the
        default, "anything", is always safe. ``executes`` is what the operation itself touches, the start of the
        step's executed footprint (by default ``footprint``): a probe or a line announces "anything" but does
        nothing itself, and the accesses recorded while the step runs (:meth:`access`) say what it really did.
        ``gate``, when given, keeps the step from being scheduled until it is ready: acquiring a held lock is not
        a step anyone can take, so it is never offered as a choice (and a cycle of such gates is a deadlock).
        """
        actor: _Actor | None = getattr(self.local, "actor", None)
        if actor is None:
            return
        actor.pending = footprint
        actor.op = footprint if executes is None else executes
        if gate is None:
            self._switch(actor)
            return
        actor.gate = gate
        try:
            self._switch(actor)
        finally:
            actor.gate = None

    def line(self, label: str, line: int, *, join_invisible: bool = False) -> None:
        """A line of code under test is about to run (line granularity): a scheduling point that announces
        "anything" and executes nothing, then the ``line`` trace event. :meth:`point` and :meth:`record` in one call,
        since it is made before every line an actor runs.

        ``join_invisible`` says that every access the actors make is recorded (the instrumented code runs): then a
        line that follows a step which touched nothing joins that step instead of being a point of its own. Such a
        step commutes with every step of every other actor, so a switch before the line orders nothing that a
        switch before the step does not; about half of all lines touch only locals. Without recording, no step is
        seen to touch anything, and every line must stay a point.
        """
        actor: _Actor | None = getattr(self.local, "actor", None)
        if actor is None or self._aborted:
            return
        steps = self._steps
        if not join_invisible or steps.current or steps.actor != actor.name:
            actor.pending = EVERYTHING
            actor.op = NOTHING
            self._switch(actor)
        if not self._aborted:
            trace = self._trace
            event = _new(TraceEvent)  # TraceEvent(len(trace), actor.name, "line", label, {"line": line})
            _set_step(event, len(trace))
            _set_actor(event, actor.name)
            _set_op(event, "line")
            _set_obj(event, label)
            _set_detail(event, {"line": line})
            trace.append(event)

    def access(self, entry: Entry, where: tuple[str, int], *, schedule: bool = False) -> None:
        """Record that the calling actor's running step touches ``entry`` at ``where`` (file and line).

        With ``schedule`` the access is first a scheduling point of its own (instruction granularity).
        """
        actor: _Actor | None = getattr(self.local, "actor", None)
        if actor is None or self._aborted:
            return
        if schedule:
            actor.pending = actor.op = frozenset((entry,))
            self._switch(actor)
        steps = self._steps  # StepLog.accessed, inline (see StepLog)
        if not steps.closed:
            steps.current.add(entry)
            steps.log.append((steps.index, steps.actor, entry, where, steps.locks))

    def access_all(self, entries: list[Entry], where: tuple[str, int], *, schedule: bool = False) -> None:
        """Record several accesses made by one operation (a call the lab cannot see into), one point at most."""
        actor: _Actor | None = getattr(self.local, "actor", None)
        if actor is None or self._aborted or not entries:
            return
        if schedule:
            actor.pending = actor.op = frozenset(entries)
            self._switch(actor)
        steps = self._steps  # StepLog.accessed for each, inline (see StepLog)
        for entry in entries:
            if not steps.closed:
                steps.current.add(entry)
                steps.log.append((steps.index, steps.actor, entry, where, steps.locks))

    def enter_opaque(self, footprint: Footprint) -> None:
        """The calling actor enters code the lab cannot see, which may touch ``footprint`` in any step until it
        returns: every step that begins inside it starts with that footprint (a probe inside a transport's send)."""
        actor: _Actor | None = getattr(self.local, "actor", None)
        if actor is not None:
            actor.opaque.append(footprint)

    def leave_opaque(self) -> None:
        """The calling actor returned from the code entered last with :meth:`enter_opaque`."""
        actor: _Actor | None = getattr(self.local, "actor", None)
        if actor is not None and actor.opaque:
            actor.opaque.pop()

    def record(self, op: str, obj: str = "", detail: Mapping[str, Json] | None = None, *, actor: str = "") -> None:
        """Append one event to the trace, for the calling actor (or ``actor`` when given)."""
        if self._aborted:
            return
        if not actor:
            me: _Actor | None = getattr(self.local, "actor", None)
            actor = me.name if me is not None else "lab"
        trace = self._trace
        event = _new(TraceEvent)  # TraceEvent(len(trace), actor, op, obj, sorted_detail(detail) if detail else {})
        _set_step(event, len(trace))
        _set_actor(event, actor)
        _set_op(event, op)
        _set_obj(event, obj)
        _set_detail(event, dict(sorted(detail.items())) if detail else {})  # sorted_detail, without its two calls
        trace.append(event)

    def touch(self, footprint: Footprint) -> None:
        """Add what the running step was seen to touch to its executed footprint (a primitive's query)."""
        if getattr(self.local, "actor", None) is not None:
            self._steps.touched(footprint)

    def lock_taken(self, name: str) -> None:
        """The calling actor now holds the lock ``name`` (lock primitives call this; it feeds the lockset check)."""
        actor: _Actor | None = getattr(self.local, "actor", None)
        if actor is not None:
            actor.locks.add(name)
            actor.lockset = frozenset(actor.locks)
            self._steps.relocked(actor.lockset)

    def lock_given(self, name: str) -> None:
        """The calling actor no longer holds the lock ``name``."""
        actor: _Actor | None = getattr(self.local, "actor", None)
        if actor is not None:
            actor.locks.discard(name)
            actor.lockset = frozenset(actor.locks)
            self._steps.relocked(actor.lockset)

    def events(self) -> tuple[TraceEvent, ...]:
        """The events recorded so far, in order."""
        return tuple(self._trace)

    def block(self, waiting: Waiting, *, executes: Footprint | None = None) -> None:
        """Park the calling actor until ``waiting`` is ready and the policy picks it again.

        ``executes`` is what the step that resumes it touches by resuming (the latch it waited for), so that the
        step which opened the way and the resumed step are seen to depend on each other.
        """
        actor: _Actor | None = getattr(self.local, "actor", None)
        if actor is None:
            raise UsageError("block() is only for actors")
        if self._aborted:
            raise _Aborted
        if executes is not None:
            actor.pending = actor.op = executes
        actor.state = _State.BLOCKED
        actor.waiting = waiting
        self._switch(actor)
        actor.state = _State.RUNNABLE
        actor.waiting = None

    # -- what a decision point shows the policy (see lab.engine.core._policies.RunView)

    def pending_footprints(self) -> dict[str, Footprint]:
        """The pending footprint of every actor that has not finished, by name."""
        pending: dict[str, Footprint] = {}  # a plain loop: on 3.11 a comprehension is a call, at line level traced
        for actor in self._actors:
            if actor.state is not _DONE:
                pending[actor.name] = actor.pending
        return pending

    def locks_held(self) -> dict[str, str]:
        """Which actor holds each lab lock right now (lock name -> actor)."""
        held: dict[str, str] = {}
        for actor in self._actors:
            for lock in actor.locks:
                held[lock] = actor.name
        return held

    def last_step(self) -> Footprint:
        """What the step that just ended was seen to touch (empty before the first step)."""
        return self._steps.last()

    # -- running -------------------------------------------------------------------------------------------------

    def run(self) -> RunResult:
        """Run every actor to completion (or to a deadlock or hang) and return what happened."""
        if self._started:
            raise UsageError("a scheduler runs once; make a new one")
        self._names = names = tuple(actor.name for actor in self._actors)
        self._started = True
        begun = time.perf_counter()
        choices = _CHOICES.get(names)
        if choices is None:
            if len(_CHOICES) >= _CHOICES_MAX:
                _CHOICES.clear()
            choices = _CHOICES.setdefault(names, {})
        self._choices = choices
        for actor in self._actors:
            actor.state = _State.RUNNABLE
            actor.done.acquire()
            worker = ACTOR_POOL.take()
            actor.baton, actor.thread = worker.baton, worker.thread
            worker.assign(f"lab-actor-{actor.name}", self._actor_task(actor))
        paused = _pause_collector()
        try:
            if self._actors:
                self._hand_off(None)
            else:
                self._finish()
            hang_stack, leaked = self._wait_until_finished()
        finally:
            _resume_collector(paused)
        result = RunResult(
            status=self._status,
            trace=tuple(self._trace),
            outcomes={a.name: a.outcome if a.outcome is not None else self._unfinished_outcome() for a in self._actors},
            errors={a.name: a.error for a in self._actors if a.error is not None},
            blocked=self._blocked_report,
            decisions=tuple(self._decisions),
            step_footprints=self._steps.footprints(),
            accesses=self._steps.accesses(),
            hang_stack=hang_stack,
            leaked=leaked,
            problem=self._problem,
            seconds=time.perf_counter() - begun,
        )
        for actor in self._actors:
            # An actor's body is a method of the scenario, whose lab holds this scheduler: a cycle that only the
            # garbage collector could free, with the whole run's books in it. Cut it, so they go when unused.
            actor.body = _ran
            actor.waiting = actor.gate = None  # what a stopped actor waited for holds a primitive, which holds us
        # the same for the hooks and the end watcher (a line tracer, an observer: each holds this scheduler)
        self._actor_hooks = None
        self._end_watcher = None
        return result

    def _unfinished_outcome(self) -> str:
        return ActorEnd.unfinished(self._status).value  # outcomes are plain text: an actor's own are any string

    def _actor_task(self, actor: _Actor) -> Callable[[], None]:
        def task() -> None:
            try:
                self._actor_main(actor)
            finally:
                actor.done.release()

        return task

    def _actor_main(self, actor: _Actor) -> None:
        if self._aborted:  # the pooled worker was handed the baton only to unwind
            return
        self.local.actor = actor
        if self._actor_hooks is not None:
            self._actor_hooks[0]()  # e.g. start tracing lines in this thread
        # Every execution is a fresh program on fresh threads, though the thread is pooled: the body runs in a new
        # empty context (no ContextVar value from an earlier execution), and the thread-locals it touched go when
        # it ends, as a thread's do, while it still holds the baton (their finalizers belong to its last step).
        fresh = ThreadState()
        try:
            self.record("start")
            try:
                value = contextvars.Context().run(actor.body)
            finally:
                fresh.forget_new()
            actor.outcome = self._outcome_text(value)
            self.record("end", detail={"outcome": actor.outcome})
            if self._end_watcher is not None:
                self.local.actor = None
                try:
                    self._end_watcher(actor.name, len(self._trace) - 1)
                finally:
                    self.local.actor = actor
        except _Aborted:
            return
        # an actor's failure is the scenario's result, not the lab's crash; sys.exit() in an actor is a failure too
        # (SystemExit is no Exception: uncaught, the actor never finished and the run waited for the watchdog)
        except (Exception, SystemExit) as error:
            actor.outcome = ActorEnd.ERROR.value
            actor.error = "".join(traceback.format_exception(error))
            self.record("error", detail={"type": type(error).__name__})
        finally:
            if self._actor_hooks is not None:
                self._actor_hooks[1]()
        actor.state = _State.DONE
        actor.waiting = None
        if not self._aborted:
            self._hand_off(actor)

    def _finish(self) -> None:
        if not self._over:
            self._over = True
            self._finished.release()

    def _switch(self, actor: _Actor | None, park: bool = True) -> None:
        """Ask the policy who runs next and hand it the baton; with ``park``, wait until the baton comes back.

        One method for the whole decision (who can run, the policy, the decision, the step it opens), no helper
        calls: it runs at every scheduling point, and at line granularity on 3.11 every Python call an actor makes
        is a trace event too. Without ``park`` (the run's start, an actor's end) ``actor`` only gives the baton away.
        No actor can run when every one is done (the run is over), in a deadlock, or when the policy refused.
        """
        if park and self._aborted:
            raise _Aborted
        runnable = 0  # a bit per actor; plain loops: on Python 3.11 a comprehension is a call, traced at line level
        live = False
        for other in self._actors:
            state = other.state
            if state is _DONE:
                continue
            live = True
            if state is _BLOCKED:
                waiting = other.waiting
                if waiting is None or waiting.ready():
                    runnable |= other.bit
            else:
                gate = other.gate
                if gate is None or gate.ready():
                    runnable |= other.bit
        nxt: _Actor | None = None
        if actor is not None and self._streak >= FAIR_STREAK and runnable & actor.bit and runnable != actor.bit:
            runnable &= ~actor.bit  # fair: it has run long enough while others waited
            self._streak = 0
            self.record("fair.yield", detail={"steps": FAIR_STREAK})
        if not runnable:
            if live:
                self._declare_deadlock()
            self._finish()
        elif len(self._decisions) >= MAX_DECISIONS:
            self._status = RunStatus.HUNG
            name = actor.name if actor is not None else "?"
            self._blocked_report = (BlockedActor(name, f"still running after {MAX_DECISIONS:,} scheduling points"),)
            self._problem = (
                f"the run did not end within {MAX_DECISIONS:,} scheduling points: actor {name!r} was still running "
                "(a loop waiting for something no other actor will do?)"
            )
            self.record("hang", detail={"actor": name, "decisions": MAX_DECISIONS}, actor="lab")
            self._finish()
        else:
            choices = self._choices.get(runnable)
            if choices is None:
                choices = self._choices_of(runnable)
            names, made = choices
            decisions = self._decisions
            point: DecisionPoint = _new(_Point)  # DecisionPoint(...), without a Python __init__ per decision
            point.index = len(decisions)
            point.runnable = names
            point.current = actor.name if actor is not None else None
            point._run = self
            try:
                chosen = self._choose(point)
            except Exception as error:  # the policy refused: a replay diverged, or an exploration budget ran out
                self._status = RunStatus.DIVERGED
                self._problem = str(error)
                self._finish()
            else:
                if chosen not in names:
                    self._status = RunStatus.DIVERGED
                    self._problem = f"the policy chose {chosen!r}, which cannot run now (runnable: {', '.join(names)})"
                    self._finish()
                else:
                    decision = made.get(chosen)
                    if decision is None:
                        decision = made.setdefault(chosen, Decision(names, chosen))
                    decisions.append(decision)
                    nxt = self._by_name[chosen]
                    self._streak = self._streak + 1 if nxt is actor and len(names) > 1 else 0
                    # the step it opens (StepLog.step, inline): what its operation executes, and any opaque code
                    current = set(nxt.op)
                    for footprint in nxt.opaque:
                        current.update(footprint)
                    steps = self._steps
                    opened = steps.opened
                    steps.index = len(opened)
                    opened.append(current)
                    steps.current = current
                    steps.actor = chosen
                    steps.locks = nxt.lockset
        if nxt is actor:
            return
        if nxt is not None:
            self._current = nxt
            nxt.baton.release()  # type: ignore[union-attr]  # every actor has its worker's baton once running
        if park:
            actor.baton.acquire()  # type: ignore[union-attr]  # parked until the baton comes back (or the run stops)
            if self._aborted:
                raise _Aborted

    def _choices_of(self, runnable: int) -> _Choices:
        """The runnable names and decisions of the set of actors ``runnable`` (bits), the first time it is seen."""
        names = tuple(actor.name for actor in self._actors if actor.bit & runnable)
        return self._choices.setdefault(runnable, (names, {}))

    def _hand_off(self, finished: _Actor | None) -> None:
        self._switch(finished, park=False)

    def _declare_deadlock(self) -> None:
        self._status = RunStatus.DEADLOCK
        stuck = [a for a in self._actors if a.state is not _State.DONE]
        self._blocked_report = tuple(BlockedActor(a.name, _waits_for(a)) for a in stuck)
        self._problem = "deadlock: " + "; ".join(f"{b.actor} waits for {b.waits_for}" for b in self._blocked_report)
        self.record(
            "deadlock",
            detail={"blocked": [[b.actor, b.waits_for] for b in self._blocked_report]},
            actor="lab",
        )

    # -- stopping ------------------------------------------------------------------------------------------------

    def _wait_until_finished(self) -> tuple[str, tuple[str, ...]]:
        """Wait for the run to end; on a hang, capture the stuck actor's stack. Then make sure no thread survives."""
        hang_stack = ""
        progress, since = -1, time.monotonic()
        slice_seconds = max(min(self._watchdog / 4, 0.25), 0.005)
        while not self._finished.acquire(timeout=slice_seconds):
            now = time.monotonic()
            if len(self._trace) != progress:
                progress, since = len(self._trace), now
            elif now - since >= self._watchdog:
                hang_stack = self._declare_hang()
                break
        return hang_stack, self._stop_all()

    def _declare_hang(self) -> str:
        stuck = self._current
        self._status = RunStatus.HUNG
        name = stuck.name if stuck is not None else "?"
        self.record("hang", detail={"actor": name, "watchdog_seconds": self._watchdog}, actor="lab")
        self._blocked_report = (BlockedActor(name, f"blocked outside the lab's primitives for {self._watchdog:g} s"),)
        self._problem = f"actor {name!r} made no progress for {self._watchdog:g} s, blocked outside the lab"
        frame = None
        if stuck is not None and stuck.thread is not None and stuck.thread.ident is not None:
            frame = sys._current_frames().get(stuck.thread.ident)
        return "".join(traceback.format_stack(frame)) if frame is not None else ""

    def _stop_all(self) -> tuple[str, ...]:
        """Unwind every unfinished actor, one at a time, so that no two run at once even while dying."""
        self._aborted = True
        self._steps.close()
        leaked: list[str] = []
        for actor in self._actors:
            thread = actor.thread
            if thread is None or not actor.done.locked():
                continue
            if actor is self._current and self._status is RunStatus.HUNG:
                _raise_in_thread(thread, _Aborted)
            elif actor.baton is not None:
                _release(actor.baton)
            if actor.done.acquire(timeout=self._leak_grace):
                actor.done.release()
            else:
                leaked.append(actor.name)
        return tuple(leaked)


_pausing = _thread.allocate_lock()
_paused_runs = 0


def _pause_collector() -> bool:
    """No garbage collection while a run runs; the first collection after it looks at everything the run made.
    True when this run paused it (:func:`_resume_collector` then lets it go). Two plain calls, not a context
    manager: a generator's frames and its manager object cost a run more than the calls.

    A run leaves no cycle of its own (see :meth:`Scheduler.run`), yet it allocates thousands of objects that live
    until it ends: collecting while it runs only traverses them, promotes them, and every dozen runs of a
    line-granularity exploration sets off a collection of the whole heap, which cost a third of its time. The
    allocation counts go on meanwhile, so the collector runs as soon as the run is over and frees any cycle the
    code under test made (nothing is kept from it). Runs at once in several threads pause it together; it is left
    alone when the program had disabled it.

    The lab does not ``gc.freeze()`` the heap, although that would save about a sixth of a line-granularity run:
    it is process-wide, and in the process of a user's test suite it would keep every cycle that existed before
    the first run forever.
    """
    global _paused_runs
    with _pausing:
        pause = _paused_runs > 0 or gc.isenabled()
        if pause:
            _paused_runs += 1
            gc.disable()
    return pause


def _resume_collector(paused: bool) -> None:
    """The end of a run that :func:`_pause_collector` paused the collector for: the last such run enables it."""
    global _paused_runs
    if paused:
        with _pausing:
            _paused_runs -= 1
            if _paused_runs == 0:
                gc.enable()


_RELAXED_THRESHOLD = 10_000
_relaxed = 0
_thresholds: tuple[int, int, int] = gc.get_threshold()


@contextlib.contextmanager
def collector_relaxed() -> Iterator[None]:
    """While many runs follow each other (an exploration): the young generation is collected after 10,000 new
    objects rather than 700, and the previous thresholds come back at the end.

    A run leaves no cycle (see :meth:`Scheduler.run`) but keeps its books until the explorer is done with them, so
    the collection that followed each run traversed about a thousand live objects, promoted them, and every few
    dozen runs went through the whole heap, to free nothing: a tenth of a line-granularity exploration. With the
    larger threshold, the books are freed (which lowers the count again) long before it is reached. Cycles that the
    code under test makes are still collected, after more allocations."""
    global _relaxed, _thresholds
    with _pausing:
        if _relaxed == 0:
            _thresholds = gc.get_threshold()
            if _thresholds[0] and _thresholds[0] < _RELAXED_THRESHOLD:
                gc.set_threshold(_RELAXED_THRESHOLD, *_thresholds[1:])
        _relaxed += 1
    try:
        yield
    finally:
        with _pausing:
            _relaxed -= 1
            if _relaxed == 0 and gc.get_threshold()[0] == _RELAXED_THRESHOLD:
                gc.set_threshold(*_thresholds)


def _after_fork_in_child() -> None:
    """A child forked while a run ran in another thread has no run of its own: the collector is back on there."""
    global _pausing, _paused_runs
    _pausing = _thread.allocate_lock()
    if _paused_runs:
        _paused_runs = 0
        gc.enable()


os.register_at_fork(after_in_child=_after_fork_in_child)


def _ran() -> None:
    """What an actor's body becomes once its run is over (see :meth:`Scheduler.run`)."""


def _waits_for(actor: _Actor) -> str:
    waiting = actor.waiting if actor.waiting is not None else actor.gate
    return waiting.describe() if waiting is not None else "nothing (never scheduled)"


def _release(baton: _thread.LockType) -> None:
    with contextlib.suppress(RuntimeError):  # already released: the actor is about to run and will see the abort
        baton.release()


def _raise_in_thread(thread: threading.Thread, exception: type[BaseException]) -> None:
    """Ask CPython to raise ``exception`` in ``thread`` at its next bytecode (not while it sits in C code)."""
    if thread.ident is not None:
        ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread.ident), ctypes.py_object(exception))
