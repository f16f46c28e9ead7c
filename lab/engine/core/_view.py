"""What a decision point shows the policy: who can run, and, when asked, what each actor is about to touch, who
holds which lock, what the last step touched.

The default policy asks only who can run; the explorer asks the rest at every point, so :class:`Point` reads the
scheduler's fields itself rather than through :class:`lab.engine.core._policies.RunView`'s methods (one Python
call fewer per question, and on 3.11 at line granularity every call is a trace event too). :class:`View` is the
same answers as the scheduler's public :class:`~lab.engine.core._policies.RunView` methods.
"""

from __future__ import annotations

from lab.engine.core._actor import DONE
from lab.engine.core._footprint import NOTHING, Footprint
from lab.engine.core._policies import DecisionPoint
from lab.engine.core._state import RunState


class Point(DecisionPoint):
    """A decision point of a scheduler, made by the handoff without ``__init__`` (see
    :mod:`lab.engine.core._handoff`): its ``_run`` is always a :class:`RunState`."""

    __slots__ = ()

    def pending(self) -> dict[str, Footprint]:
        """The pending footprint of every actor that has not finished, by name."""
        run: RunState = self._run  # type: ignore[assignment]  # a Point is made by its scheduler only
        pending: dict[str, Footprint] = {}  # plain loops: on 3.11 a comprehension is a call, traced at line level
        for actor in run._actors:
            if actor.state is not DONE:
                pending[actor.name] = actor.pending
        return pending

    def held(self) -> dict[str, str]:
        """Which actor holds each lock right now (lock name -> actor)."""
        run: RunState = self._run  # type: ignore[assignment]
        held: dict[str, str] = {}
        for actor in run._actors:
            for lock in actor.locks:
                held[lock] = actor.name
        return held

    def last_step(self) -> Footprint:
        """What the step that just ended was seen to touch (empty before the first step)."""
        run: RunState = self._run  # type: ignore[assignment]
        steps = run._steps  # StepLog.last, inline
        return frozenset(steps.current) if steps.opened else NOTHING


class View(RunState):
    """The scheduler as a :class:`~lab.engine.core._policies.RunView`: what a decision point may ask of its run."""

    def pending_footprints(self) -> dict[str, Footprint]:
        """The pending footprint of every actor that has not finished, by name."""
        pending: dict[str, Footprint] = {}  # a plain loop: on 3.11 a comprehension is a call, at line level traced
        for actor in self._actors:
            if actor.state is not DONE:
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
