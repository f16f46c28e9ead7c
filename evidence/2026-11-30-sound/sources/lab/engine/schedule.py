"""Schedule strings: a compact, stable name for one interleaving, and the policy that replays it.

Only decisions with a real choice are written, each as ``<chosen>:<runnable>`` in actor numbers (0-9, then a-z),
joined by ``-``: ``0:01-1:01`` means "at the first choice between actors 0 and 1, run 0; at the next, run 1".
Keeping the runnable set in the string is what makes replay honest: if the code no longer offers the same choice
at some step, the replay stops there and says so instead of quietly following a different interleaving.
"""

from __future__ import annotations

import string
from collections.abc import Sequence

from lab.engine.policies import DecisionPoint
from lab.engine.run import Decision
from lab.errors import ReplayDivergedError, UsageError

_DIGITS = string.digits + string.ascii_lowercase


def schedule_string(decisions: Sequence[Decision], actors: Sequence[str]) -> str:
    """The schedule string of a run's decisions (empty when no decision had a choice)."""
    index = {name: _DIGITS[i] for i, name in enumerate(actors)}
    written: dict[tuple[str, ...], str] = {}  # a run offers the same few runnable sets again and again
    parts: list[str] = []
    for d in decisions:
        runnable = d.runnable
        if len(runnable) > 1:
            offered = written.get(runnable)
            if offered is None:
                offered = written[runnable] = "".join([index[a] for a in runnable])
            parts.append(index[d.chosen] + ":" + offered)
    return "-".join(parts)


def schedule_length(decisions: Sequence[Decision]) -> int:
    """How long :func:`schedule_string` would be, without writing it: ``<chosen>:<runnable>`` per decision with a
    choice, joined by ``-`` (what an example is picked by, before its text, when most runs are not picked)."""
    total = 0
    count = 0
    for d in decisions:
        offered = len(d.runnable)
        if offered > 1:
            total += offered + 2
            count += 1
    return total + count - 1 if count else 0


def parse_schedule(text: str, actors: Sequence[str]) -> list[tuple[str, tuple[str, ...]]]:
    """Parse a schedule string into (chosen, runnable) pairs of actor names; a malformed one is a UsageError."""
    if len(actors) > len(_DIGITS):
        raise UsageError(f"schedules name at most {len(_DIGITS)} actors")
    steps: list[tuple[str, tuple[str, ...]]] = []
    for n, part in enumerate(filter(None, text.strip().split("-")), 1):
        chosen, sep, runnable = part.partition(":")
        try:
            if not sep or len(chosen) != 1 or not runnable:
                raise ValueError
            names = tuple(actors[_DIGITS.index(c)] for c in runnable)
            steps.append((actors[_DIGITS.index(chosen)], names))
        except (ValueError, IndexError):
            raise UsageError(
                f"schedule step {n} ({part!r}) is not '<actor>:<runnable actors>' for {len(actors)} actors"
            ) from None
        if steps[-1][0] not in names:
            raise UsageError(f"schedule step {n} ({part!r}) chooses an actor that was not runnable")
    return steps


class ReplayPolicy:
    """Follows a recorded schedule exactly, and refuses to go on where the code offers a different choice."""

    def __init__(self, schedule: str, actors: Sequence[str]) -> None:
        self._steps = parse_schedule(schedule, actors)
        self._next = 0

    @property
    def finished(self) -> bool:
        """True when every recorded choice was used."""
        return self._next == len(self._steps)

    @property
    def remaining(self) -> int:
        """How many recorded choices were not reached."""
        return len(self._steps) - self._next

    def choose(self, point: DecisionPoint) -> str:
        """The recorded choice, after checking that the same actors could run."""
        if len(point.runnable) == 1:
            return point.runnable[0]
        if self._next >= len(self._steps):
            raise ReplayDivergedError(
                f"choice {self._next + 1}: the schedule has ended, but {', '.join(point.runnable)} could still run"
            )
        chosen, runnable = self._steps[self._next]
        if runnable != point.runnable:
            raise ReplayDivergedError(
                f"choice {self._next + 1}: recorded runnable {{{', '.join(runnable)}}}, "
                f"now {{{', '.join(point.runnable)}}}"
            )
        self._next += 1
        return chosen
