"""The baton: who can run at a scheduling point, the policy's decision, and the one lock release that hands over.

At each point the running actor asks :meth:`Handoff._switch` who runs next: an actor can run unless it is done, or
blocked on a :class:`~lab.engine.core._run.Waiting` that is not ready, or gated on a step that cannot begin (a lock
it is about to take is held). When none can and some are not done, that is a deadlock, reported at once with who
waits for what. Otherwise the policy chooses, the decision is recorded, the step it opens is opened in the
:class:`~lab.engine.core._steps.StepLog`, and the chosen actor's baton is released: no central thread in the loop,
no sleeps, no polling. Two rules keep a run finite: fairness past :data:`FAIR_STREAK` choices in a row, and HUNG
past :data:`MAX_DECISIONS` points.
"""

from __future__ import annotations

from lab.engine.core._actor import BLOCKED, DONE, Actor, ActorState, _Aborted, waits_for
from lab.engine.core._footprint import Footprint
from lab.engine.core._policies import DecisionPoint
from lab.engine.core._run import BlockedActor, Decision, RunStatus, Waiting
from lab.engine.core._state import Choices, new
from lab.engine.core._view import Point, View
from lab.errors import UsageError

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

_CHOICES: dict[tuple[str, ...], dict[int, Choices]] = {}
"""Actor names -> runnable set (a bit per actor) -> its :data:`~lab.engine.core._state.Choices`, shared by every run
of those actors: the same few runnable sets and decisions recur at every point of every run of an exploration, so
each tuple and :class:`Decision` is made once, and the explorer, comparing a run's with an earlier run's, finds the
same objects."""
_CHOICES_MAX = 256  # sets of actor names kept; past this the table starts afresh (a test suite's many scenarios)


def choices_for(names: tuple[str, ...]) -> dict[int, Choices]:
    """The shared table of runnable sets and decisions of the actors ``names`` (made empty the first time)."""
    choices = _CHOICES.get(names)
    if choices is None:
        if len(_CHOICES) >= _CHOICES_MAX:
            _CHOICES.clear()
        choices = _CHOICES.setdefault(names, {})
    return choices


class Handoff(View):
    """Passing the baton: blocking, waking, deciding, and stopping a run no actor can go on with (the view is what
    each decision point shows its policy)."""

    def block(self, waiting: Waiting, *, executes: Footprint | None = None) -> None:
        """Park the calling actor until ``waiting`` is ready and the policy picks it again.

        ``executes`` is what the step that resumes it touches by resuming (the latch it waited for), so that the
        step which opened the way and the resumed step are seen to depend on each other.
        """
        actor: Actor | None = getattr(self.local, "actor", None)
        if actor is None:
            raise UsageError("block() is only for actors")
        if self._aborted:
            raise _Aborted
        if self._sweep is not None:  # before it blocks: what the step dropped dies in it (see sweep_with)
            self._sweep_now(actor)
        if executes is not None:
            actor.pending = actor.op = executes
        actor.state = ActorState.BLOCKED
        actor.waiting = waiting
        self._switch(actor)
        actor.state = ActorState.RUNNABLE
        actor.waiting = None

    def _switch(self, actor: Actor | None, park: bool = True) -> None:
        """Ask the policy who runs next and hand it the baton; with ``park``, wait until the baton comes back.

        One method for the whole decision (who can run, the policy, the decision, the step it opens), no helper
        calls: it runs at every scheduling point, and at line granularity on 3.11 every Python call an actor makes
        is a trace event too. Without ``park`` (the run's start, an actor's end) ``actor`` only gives the baton away.
        No actor can run when every one is done (the run is over), in a deadlock, or when the policy refused.
        """
        if park and self._aborted:
            raise _Aborted
        if self._sweeping is actor and actor is not None and actor.state is not BLOCKED:
            return  # a finalizer the sweep runs is one with the step that dropped it (see _sweep_now)
        if self._sweep is not None and park and actor is not None and actor.state is not BLOCKED:  # sweep_with
            self._sweep_now(actor)
        runnable = 0  # a bit per actor; plain loops: on Python 3.11 a comprehension is a call, traced at line level
        live = False
        for other in self._actors:
            state = other.state
            if state is DONE:
                continue
            live = True
            if state is BLOCKED:
                waiting = other.waiting
                if waiting is None or waiting.ready():
                    runnable |= other.bit
            else:
                gate = other.gate
                if gate is None or gate.ready():
                    runnable |= other.bit
        nxt: Actor | None = None
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
            point: DecisionPoint = new(Point)  # DecisionPoint(...), without a Python __init__ per decision
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
                    self._step_events.append(len(self._trace))
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

    def _sweep_now(self, actor: Actor) -> None:
        """Run the sweep (:meth:`Scheduler.sweep_with`) in ``actor``, running. A finalizer it runs is part of the
        step that just ran (the one that dropped what it finalizes): its accesses are that step's, and its
        scheduling points switch to nobody (parked inside a finalizer, an actor of a run the explorer stops would
        unwind from inside ``__del__``, where the interpreter prints the exception and goes on); only a wait it
        blocks in parks it. What the actor announced for its next step (its footprint, its gate) is kept aside
        meanwhile, and nothing in it sweeps again."""
        sweep = self._sweep
        if sweep is None:
            return
        self._sweep = None
        self._sweeping = actor
        pending, op, gate = actor.pending, actor.op, actor.gate
        actor.gate = None
        try:
            sweep()
        finally:
            actor.pending, actor.op, actor.gate = pending, op, gate
            self._sweeping = None
            if self._sweep is None:
                self._sweep = sweep

    def _choices_of(self, runnable: int) -> Choices:
        """The runnable names and decisions of the set of actors ``runnable`` (bits), the first time it is seen."""
        names = tuple(actor.name for actor in self._actors if actor.bit & runnable)
        return self._choices.setdefault(runnable, (names, {}))

    def _hand_off(self, finished: Actor | None) -> None:
        """Give the baton away without waiting for it back: the run's start (``None``) or an actor's end."""
        self._switch(finished, park=False)

    def _declare_deadlock(self) -> None:
        self._status = RunStatus.DEADLOCK
        stuck = [a for a in self._actors if a.state is not DONE]
        self._blocked_report = tuple(BlockedActor(a.name, waits_for(a)) for a in stuck)
        self._problem = "deadlock: " + "; ".join(f"{b.actor} waits for {b.waits_for}" for b in self._blocked_report)
        self.record(
            "deadlock",
            detail={"blocked": [[b.actor, b.waits_for] for b in self._blocked_report]},
            actor="lab",
        )
