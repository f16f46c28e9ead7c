"""A deterministic scheduler over real threads.

Each actor runs on its own ``threading.Thread``, but only one runs at a time: the running actor holds the baton and
passes it on only at *scheduling points* (the lab's latch, event, barrier and lock operations, probe points, actor
start and end). At each point one pluggable decision, :meth:`Policy.choose`, names the actor that runs next, and
the baton goes straight to it: one lock release per switch, no central thread in the loop, no sleeps, no polling.

Because the order of every shared-state step is decided here, and recorded, the trace of a run depends only on the
scenario and the policy. When no actor can run and some have not finished, the run stops at once with a report
of who waits for what; a watchdog catches the one thing the scheduler cannot see, an actor blocked outside the lab.

:class:`Scheduler` is one state machine (:class:`~lab.engine.core._state.RunState`) whose parts each live in a
module of their own: the handoff of the baton, blocking and waking (:mod:`lab.engine.core._handoff`), what
primitives report while an actor runs (:mod:`lab.engine.core._reports`), an actor's life on its thread
(:mod:`lab.engine.core._actor_life`), the watchdog and leak detection (:mod:`lab.engine.core._watchdog`), what a
decision point shows the policy (:mod:`lab.engine.core._view`) and the garbage collector around runs
(:mod:`lab.engine.core._collector`). This module builds a run and assembles its :class:`RunResult`. The scheduler
keeps no one else's books: what each step touched goes to a :class:`~lab.engine.core._steps.StepLog`, the values a
run produces are in :mod:`lab.engine.core._run`, the policies in :mod:`lab.engine.core._policies`, and the pooled
actor threads in :mod:`lab.engine.core._pool`.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from lab.engine.core._actor import Actor, ActorState, OutcomeText, default_outcome, ran
from lab.engine.core._actor_life import ActorLife
from lab.engine.core._collector import pause_collector, resume_collector
from lab.engine.core._handoff import choices_for
from lab.engine.core._policies import KeepCurrent, Policy
from lab.engine.core._pool import ACTOR_POOL
from lab.engine.core._reports import Reports
from lab.engine.core._run import ActorEnd, RunResult
from lab.engine.core._steps import StepLog
from lab.engine.core._trace import TraceEvent
from lab.engine.core._watchdog import DEFAULT_WATCHDOG_SECONDS, LEAK_GRACE_SECONDS, Watchdog
from lab.errors import UsageError


class Scheduler(Reports, ActorLife, Watchdog):
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
        outcome_text: OutcomeText = default_outcome,
        leak_grace_seconds: float = LEAK_GRACE_SECONDS,
        steps: StepLog | None = None,
    ) -> None:
        super().__init__(
            policy=policy if policy is not None else KeepCurrent(),
            watchdog_seconds=watchdog_seconds,
            outcome_text=outcome_text,
            leak_grace_seconds=leak_grace_seconds,
            steps=steps if steps is not None else StepLog(),
        )

    # -- building ------------------------------------------------------------------------------------------------

    def add_actor(self, name: str, body: Callable[[], object]) -> None:
        """Declare an actor; declaration order is the actors' number (lowest first)."""
        if self._started:
            raise UsageError("actors must be added before the run starts")
        if name in self._by_name:
            raise UsageError(f"two actors are named {name!r}")
        actor = Actor(len(self._actors), name, body, 1 << len(self._actors))
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

    def sweep_with(self, sweep: Callable[[], None] | None) -> None:
        """Call ``sweep()`` in the running actor at each scheduling point, before the decision (``None``: stop).

        The recording lets go there of objects only it still holds (:mod:`lab.engine.record._mortal`): what dies
        then belongs to the step that just ran, a finalizer included (see ``Handoff._sweep_now``).
        """
        self._sweep = sweep

    @property
    def actor_names(self) -> tuple[str, ...]:
        """The actors' names in declaration order."""
        return self._names if self._started else tuple(actor.name for actor in self._actors)

    @property
    def steps(self) -> StepLog:
        """The books of this run's steps: the instrumented code logs its accesses there directly, one call each
        (every access is by the running step, and the scheduler would only pass it on)."""
        return self._steps

    @property
    def aborted(self) -> bool:
        """True once the run is being stopped; primitives then change state without scheduling."""
        return self._aborted

    def events(self) -> tuple[TraceEvent, ...]:
        """The events recorded so far, in order."""
        return tuple(self._trace)

    # -- running -------------------------------------------------------------------------------------------------

    def run(self) -> RunResult:
        """Run every actor to completion (or to a deadlock or hang) and return what happened."""
        if self._started:
            raise UsageError("a scheduler runs once; make a new one")
        self._names = names = tuple(actor.name for actor in self._actors)
        self._started = True
        begun = time.perf_counter()
        self._choices = choices_for(names)
        for actor in self._actors:
            actor.state = ActorState.RUNNABLE
            actor.done.acquire()
            worker = ACTOR_POOL.take()
            actor.baton, actor.thread = worker.baton, worker.thread
            worker.assign(f"lab-actor-{actor.name}", self._actor_task(actor))
        paused = pause_collector()
        try:
            if self._actors:
                self._hand_off(None)
            else:
                self._finish()
            hang_stack, leaked = self._wait_until_finished()
        except BaseException:  # Ctrl-C in the thread waiting for the run: unwind every actor, then let it through
            self._stop_all()
            raise
        finally:
            resume_collector(paused)
        result = RunResult(
            status=self._status,
            trace=tuple(self._trace),
            outcomes={a.name: a.outcome if a.outcome is not None else self._unfinished_outcome() for a in self._actors},
            errors={a.name: a.error for a in self._actors if a.error is not None},
            blocked=self._blocked_report,
            decisions=tuple(self._decisions),
            step_events=tuple(self._step_events),
            step_footprints=self._steps.footprints(),
            accesses=self._steps.accesses(),
            hang_stack=hang_stack,
            leaked=leaked,
            problem=self._problem,
            seconds=time.perf_counter() - begun,
            joined=frozenset(self._steps.joined),
        )
        for actor in self._actors:
            # An actor's body is a method of the scenario, whose lab holds this scheduler: a cycle that only the
            # garbage collector could free, with the whole run's books in it. Cut it, so they go when unused.
            actor.body = ran
            actor.waiting = actor.gate = None  # what a stopped actor waited for holds a primitive, which holds us
        # the same for the hooks and the end watcher (a line tracer, an observer: each holds this scheduler)
        self._actor_hooks = None
        self._end_watcher = None
        return result

    def _unfinished_outcome(self) -> str:
        return ActorEnd.unfinished(self._status).value  # outcomes are plain text: an actor's own are any string
