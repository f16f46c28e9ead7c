"""What the lab's primitives and the instrumented code tell the scheduler while an actor runs.

Each call is made from an actor's thread (a call from any other thread returns at once, so primitives behave like
plain threading objects outside a run): a scheduling point before an operation (:meth:`Reports.point`, and
:meth:`Reports.line` before each line at line granularity), what the running step touched (:meth:`Reports.access`
and its kin, into the run's :class:`~lab.engine.core._steps.StepLog`), the locks the actor holds (the lockset
check). These are the hot path of a run: each reads the calling actor from a thread-local once, and writes the
step log and the trace itself rather than through a call.
"""

from __future__ import annotations

from lab.engine.core._actor import Actor
from lab.engine.core._footprint import EVERYTHING, NOTHING, Entry, Footprint
from lab.engine.core._handoff import Handoff
from lab.engine.core._run import Waiting
from lab.engine.core._state import new, set_actor, set_detail, set_obj, set_op, set_step
from lab.engine.core._trace import TraceEvent


class Reports(Handoff):
    """The calls primitives and the instrumented code make while an actor runs."""

    def current(self) -> str | None:
        """The name of the actor calling, or ``None`` when called from outside this run's actors."""
        actor: Actor | None = getattr(self.local, "actor", None)
        return actor.name if actor is not None else None

    def is_actor(self) -> bool:
        """True when called from one of this run's actors (cheaper than :meth:`current` on the recording path)."""
        return getattr(self.local, "actor", None) is not None

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
        actor: Actor | None = getattr(self.local, "actor", None)
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
        actor: Actor | None = getattr(self.local, "actor", None)
        if actor is None or self._aborted:
            return
        steps = self._steps
        if not join_invisible or steps.current or steps.actor != actor.name:
            actor.pending = EVERYTHING
            actor.op = NOTHING
            self._switch(actor)
        if not self._aborted:
            trace = self._trace
            event = new(TraceEvent)  # TraceEvent(len(trace), actor.name, "line", label, {"line": line})
            set_step(event, len(trace))
            set_actor(event, actor.name)
            set_op(event, "line")
            set_obj(event, label)
            set_detail(event, {"line": line})
            trace.append(event)

    def access(self, entry: Entry, where: tuple[str, int], *, schedule: bool = False) -> None:
        """Record that the calling actor's running step touches ``entry`` at ``where`` (file and line).

        With ``schedule`` the access is first a scheduling point of its own (instruction granularity).
        """
        actor: Actor | None = getattr(self.local, "actor", None)
        if actor is None or self._aborted:
            return
        if schedule:
            actor.pending = actor.op = frozenset((entry,))
            self._switch(actor)
        steps = self._steps  # StepLog.accessed, inline (see StepLog)
        if not steps.closed:
            steps.current.add(entry)
            steps.log.append((steps.index, steps.actor, entry, where, steps.locks))

    def access_all(
        self, entries: list[Entry], where: tuple[str, int], *, schedule: bool = False, one_operation: bool = True
    ) -> None:
        """Record several accesses made by one operation (a call the lab cannot see into), one point at most: the
        entries are one access for the atomicity check (no other actor can run between them), unless
        ``one_operation`` is false: Python code the lab does not rewrite, which a real thread can be switched out
        of between any two of its accesses."""
        actor: Actor | None = getattr(self.local, "actor", None)
        if actor is None or self._aborted or not entries:
            return
        if schedule:
            actor.pending = actor.op = frozenset(entries)
            self._switch(actor)
        steps = self._steps  # StepLog.accessed for each, inline (see StepLog)
        if steps.closed:
            return
        log = steps.log
        first = len(log)
        for entry in entries:
            steps.current.add(entry)
            log.append((steps.index, steps.actor, entry, where, steps.locks))
        if one_operation and len(log) > first + 1:  # nothing runs between its entries (the atomicity check)
            steps.joined.extend(range(first + 1, len(log)))

    def enter_opaque(self, footprint: Footprint) -> None:
        """The calling actor enters code the lab cannot see, which may touch ``footprint`` in any step until it
        returns: every step that begins inside it starts with that footprint (a probe inside a transport's send)."""
        actor: Actor | None = getattr(self.local, "actor", None)
        if actor is not None:
            actor.opaque.append(footprint)

    def leave_opaque(self) -> None:
        """The calling actor returned from the code entered last with :meth:`enter_opaque`."""
        actor: Actor | None = getattr(self.local, "actor", None)
        if actor is not None and actor.opaque:
            actor.opaque.pop()

    def touch(self, footprint: Footprint) -> None:
        """Add what the running step was seen to touch to its executed footprint (a primitive's query)."""
        if getattr(self.local, "actor", None) is not None:
            self._steps.touched(footprint)

    def lock_taken(self, name: str) -> None:
        """The calling actor now holds the lock ``name`` (lock primitives call this; it feeds the lockset check)."""
        actor: Actor | None = getattr(self.local, "actor", None)
        if actor is not None:
            actor.locks.add(name)
            actor.lockset = frozenset(actor.locks)
            self._steps.relocked(actor.lockset)

    def lock_given(self, name: str) -> None:
        """The calling actor no longer holds the lock ``name``."""
        actor: Actor | None = getattr(self.local, "actor", None)
        if actor is not None:
            actor.locks.discard(name)
            actor.lockset = frozenset(actor.locks)
            self._steps.relocked(actor.lockset)
