"""One actor's life on its pooled thread: its start, its body, its outcome or error, its end.

The body runs as a fresh program's thread would: in a new empty :class:`contextvars.Context`, with the thread-locals
it added dropped when it ends (:class:`lab.engine.core._pool.ThreadState`). What it returns is its outcome; what it
raises is its error, the scenario's result and never the lab's crash. An end watcher may read the state after each
actor ends, outside the lab's view; then the baton goes on.
"""

from __future__ import annotations

import contextvars
import traceback
from collections.abc import Callable

from lab.engine.core._actor import Actor, ActorState, _Aborted
from lab.engine.core._handoff import Handoff
from lab.engine.core._pool import ThreadState
from lab.engine.core._run import ActorEnd


class ActorLife(Handoff):
    """What each actor's thread runs, from the baton's first release to the handoff at its end."""

    def _actor_task(self, actor: Actor) -> Callable[[], None]:
        def task() -> None:
            try:
                self._actor_main(actor)
            finally:
                actor.done.release()

        return task

    def _actor_main(self, actor: Actor) -> None:
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
            if self._sweep is not None:  # what its last step dropped dies in it, as its thread ends
                self._sweep_now(actor)
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
        # An actor's failure is the scenario's result, not the lab's crash, whatever it raised: sys.exit(), a
        # KeyboardInterrupt the code raised itself, a user's `class Stop(BaseException)` are failures too. Uncaught,
        # such an actor never handed the baton on, and the run waited for the watchdog to call it HUNG. (Ctrl-C is
        # not among them: it reaches the main thread, which waits in Scheduler.run, never an actor's.)
        except BaseException as error:
            actor.outcome = ActorEnd.ERROR.value
            actor.error = "".join(traceback.format_exception(error))
            self.record("error", detail={"type": type(error).__name__})
        finally:
            if self._actor_hooks is not None:
                self._actor_hooks[1]()
        actor.state = ActorState.DONE
        actor.waiting = None
        if not self._aborted:
            self._hand_off(actor)
