"""The scheduler's one decision, made pluggable: what a policy sees when it must choose, and the default policy.

A policy names the actor that runs next at each scheduling point. The default keeps the current actor running; a
replay follows a recorded schedule (:class:`lab.engine.core._schedule.ReplayPolicy`); the explorer steers each run
down a branch of its search (:mod:`lab.engine.search._explorer`).
"""

from __future__ import annotations

from typing import Protocol

from lab.engine.core._footprint import Footprint


class RunView(Protocol):
    """What a decision point may ask of the run it belongs to (the scheduler provides it)."""

    def pending_footprints(self) -> dict[str, Footprint]:
        """The pending footprint of every actor that has not finished, by name."""
        ...

    def locks_held(self) -> dict[str, str]:
        """Which actor holds each lab lock right now (lock name -> actor)."""
        ...

    def last_step(self) -> Footprint:
        """What the step that just ended was seen to touch (empty before the first step)."""
        ...


class DecisionPoint:
    """What the policy sees when it must choose: who can run and who just yielded.

    ``pending()`` says what each live actor (blocked ones included) is about to touch: the explorer's race analysis
    needs it, the default policy does not, so it is computed only when asked, and only valid during ``choose``.
    """

    __slots__ = ("_run", "current", "index", "runnable")

    def __init__(self, index: int, runnable: tuple[str, ...], current: str | None, run: RunView) -> None:
        self.index = index
        self.runnable = runnable
        self.current = current
        self._run = run

    def pending(self) -> dict[str, Footprint]:
        """The pending footprint of every actor that has not finished, by name."""
        return self._run.pending_footprints()

    def held(self) -> dict[str, str]:
        """Which actor holds each lock right now (lock name -> actor), for the explorer's race reversal."""
        return self._run.locks_held()

    def last_step(self) -> Footprint:
        """What the step that just ended was seen to touch (empty before the first step)."""
        return self._run.last_step()

    def preempts(self, chosen: str) -> bool:
        """Whether choosing ``chosen`` here is a preemption: switching away from an actor that could go on."""
        current = self.current
        return current is not None and chosen != current and current in self.runnable


class Policy(Protocol):
    """The single decision of the scheduler: which runnable actor goes next."""

    def choose(self, point: DecisionPoint) -> str:
        """Pick one of ``point.runnable`` (actor names, in declaration order).

        Raise an exception (:class:`lab.errors.ReplayDivergedError`, say) to stop the run when no choice is
        acceptable; the run then ends as DIVERGED with the exception's message as its problem.
        """
        ...


class KeepCurrent:
    """The default policy: keep the current actor running until it blocks, then the lowest-numbered runnable one."""

    def choose(self, point: DecisionPoint) -> str:
        """Return the current actor if it can go on, else the first runnable actor."""
        if point.current is not None and point.current in point.runnable:
            return point.current
        return point.runnable[0]
