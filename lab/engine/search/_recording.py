"""A worker's run, noted decision by decision, so that the search can follow it again without running it.

A worker process of a parallel exploration (:mod:`lab.engine.search._parallel`) runs schedules under
:class:`Recording`, which notes at each decision everything the explorer's policy may ask of it (who can run, who
ran before, each actor's pending footprint, the locks held, what the step before touched). The coordinator later
serves those notes again through :class:`Shown` to its own policy: where that policy makes the same choices all the
way, the worker's run is the run the search would have made.
"""

from __future__ import annotations

from lab.engine.core._footprint import Footprint
from lab.engine.core._policies import DecisionPoint
from lab.engine.core._policies import Policy as DecisionPolicy


class Recording:
    """A policy that notes, at each decision, everything the explorer may ask of it, then lets ``guide`` choose: a
    worker's run, as the coordinator's search can follow it again without running it."""

    def __init__(self, guide: DecisionPolicy) -> None:
        self._guide = guide
        self.points: list[tuple[int, tuple[str, ...], str | None, dict[str, Footprint], dict[str, str], Footprint]] = []
        self.chosen: list[str] = []

    def choose(self, point: DecisionPoint) -> str:
        """Note what ``point`` shows, then let the guide choose from the noted copy (asked once, not twice)."""
        pending, held, last = point.pending(), point.held(), point.last_step()
        self.points.append((point.index, point.runnable, point.current, pending, held, last))
        chosen = self._guide.choose(
            DecisionPoint(point.index, point.runnable, point.current, Shown(pending, held, last))
        )
        self.chosen.append(chosen)
        return chosen


class Shown:
    """What a decision point showed, served again (a ``RunView``): to a guide, from a recording."""

    __slots__ = ("_held", "_last", "_pending")

    def __init__(self, pending: dict[str, Footprint], held: dict[str, str], last: Footprint) -> None:
        self._pending, self._held, self._last = pending, held, last

    def pending_footprints(self) -> dict[str, Footprint]:
        """The pending footprint of every unfinished actor, as shown."""
        return self._pending

    def locks_held(self) -> dict[str, str]:
        """Which actor held each lock, as shown."""
        return self._held

    def last_step(self) -> Footprint:
        """What the step before the decision touched, as shown."""
        return self._last
