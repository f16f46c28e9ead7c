"""Schedule strings: a compact, stable name for one interleaving, and the policy that replays it.

Only decisions with a real choice are written, each as ``<chosen>:<runnable>`` in actor numbers, joined by ``-``.
Keeping the runnable set in the string is what makes replay honest: if the code no longer offers the same choice
at some step, the replay stops there and says so instead of quietly following a different interleaving.

Two spellings of actor numbers, fixed by how many actors the program has:

* **Up to 36 actors** (every schedule written before larger programs could be explored): one character per actor,
  ``0-9`` then ``a-z``, the runnable actors written together. ``0:01-1:01`` means "at the first choice between
  actors 0 and 1, run 0; at the next, run 1". This spelling is short, reads at a glance, and is kept exactly as it
  was, so that every schedule in the docs, the tests, pinned scenarios and archived evidence still parses and is
  still written the same.
* **More than 36 actors**: one character cannot number them, so each actor number is written in decimal (no
  leading zeros) and the runnable actors are separated by ``.``: ``12:3.12.40-40:12.40`` means "run 12 out of
  3, 12 and 40; then 40 out of 12 and 40". Small numbers are written the same way (``0:0.1``), because which
  spelling a string uses is a property of the program, not of the numbers that happen to appear in it.

A reader tells them apart by ``.``: a choice always offers at least two actors, so every step of the decimal
spelling contains a ``.``, and the one-character spelling never does. Parsing is unambiguous because it does not
guess either: for the program's own actor count only its own spelling is accepted, and a step in the other one is
refused in one line that says so (``0:01`` cannot silently mean "0 out of {1}" with 40 actors, nor ``1:0.1`` be
read as characters with 2).
"""

from __future__ import annotations

import re
import string
from collections.abc import Sequence
from functools import lru_cache

from lab.engine.core._policies import DecisionPoint
from lab.engine.core._run import Decision
from lab.errors import ReplayDivergedError, UsageError

_DIGITS = string.digits + string.ascii_lowercase
ONE_CHARACTER_ACTORS = len(_DIGITS)
"""The most actors the one-character spelling numbers (36); a program with more uses the decimal one."""
_NUMBER = re.compile(r"0|[1-9][0-9]*")  # ASCII only (str.isdigit would take '²'), one spelling per number


def decimal_actors(actors: Sequence[str]) -> bool:
    """True when ``actors`` are too many for one character each, so schedules number them in decimal with ``.``."""
    return len(actors) > ONE_CHARACTER_ACTORS


@lru_cache(maxsize=64)
def _numbers(actors: tuple[str, ...]) -> dict[str, str]:
    """Each actor's number as written, cached: a long exploration writes many schedules over the same actors."""
    if decimal_actors(actors):
        return {name: str(i) for i, name in enumerate(actors)}
    return {name: _DIGITS[i] for i, name in enumerate(actors)}


def schedule_string(decisions: Sequence[Decision], actors: Sequence[str]) -> str:
    """The schedule string of a run's decisions (empty when no decision had a choice)."""
    index = _numbers(tuple(actors))
    between = "." if decimal_actors(actors) else ""
    written: dict[tuple[str, ...], str] = {}  # a run offers the same few runnable sets again and again
    parts: list[str] = []
    for d in decisions:
        runnable = d.runnable
        if len(runnable) > 1:
            offered = written.get(runnable)
            if offered is None:
                offered = written[runnable] = between.join([index[a] for a in runnable])
            parts.append(index[d.chosen] + ":" + offered)
    return "-".join(parts)


def schedule_length(decisions: Sequence[Decision], actors: Sequence[str] | None = None) -> int:
    """How long :func:`schedule_string` would be, without writing it (what an example is picked by, before its
    text, when most runs are not picked): ``<chosen>:<runnable>`` per decision with a choice, joined by ``-``.

    Exact for both spellings when given ``actors``. Without them it counts one character per actor, which is exact
    up to 36 actors and, past that, less than the decimal string's length: still safe for rejecting a run whose
    schedule is already longer than the best one, never for accepting one."""
    if actors is None or not decimal_actors(actors):
        total = 0
        count = 0
        for d in decisions:
            offered = len(d.runnable)
            if offered > 1:
                total += offered + 2
                count += 1
        return total + count - 1 if count else 0
    index = _numbers(tuple(actors))
    total = 0
    count = 0
    for d in decisions:
        if len(d.runnable) > 1:  # chosen, ':', the numbers with a '.' between each two
            total += len(index[d.chosen]) + 1 + sum([len(index[a]) for a in d.runnable]) + len(d.runnable) - 1
            count += 1
    return total + count - 1 if count else 0


def parse_schedule(text: str, actors: Sequence[str]) -> list[tuple[str, tuple[str, ...]]]:
    """Parse a schedule string into (chosen, runnable) pairs of actor names; a malformed one is a UsageError whose
    one line names the step and what is wrong with it."""
    decimal = decimal_actors(actors)
    steps: list[tuple[str, tuple[str, ...]]] = []
    for n, part in enumerate(filter(None, text.strip().split("-")), 1):
        chosen, sep, runnable = part.partition(":")
        if ("." in part) != decimal:
            raise UsageError(
                f"schedule step {n} ({part!r}) has no '.': {len(actors)} actors are numbered in decimal, "
                "separated by '.' (e.g. '12:3.12.40')"
                if decimal
                else f"schedule step {n} ({part!r}) has a '.', which only schedules of more than "
                f"{ONE_CHARACTER_ACTORS} actors have: {len(actors)} are numbered one character each (e.g. '0:01')"
            )
        try:
            if not sep or not runnable:
                raise ValueError
            if decimal:
                numbers = runnable.split(".")
                if not all(_NUMBER.fullmatch(x) for x in (chosen, *numbers)):
                    raise ValueError
                names = tuple(actors[int(x)] for x in numbers)
                steps.append((actors[int(chosen)], names))
            else:
                if len(chosen) != 1:
                    raise ValueError
                names = tuple(actors[_DIGITS.index(c)] for c in runnable)
                steps.append((actors[_DIGITS.index(chosen)], names))
        except (ValueError, IndexError):
            shape = "'<actor>:<actor>.<actor>...' in decimal" if decimal else "'<actor>:<runnable actors>'"
            raise UsageError(f"schedule step {n} ({part!r}) is not {shape} for {len(actors)} actors") from None
        if steps[-1][0] not in names:
            raise UsageError(f"schedule step {n} ({part!r}) chooses an actor that was not runnable")
    return steps


def read_schedule(text: str, actors: Sequence[str]) -> list[tuple[str, tuple[str, ...]]] | None:
    """:func:`parse_schedule`, or None for a string that does not name these actors' choices: for a reader that
    shows what it can (a report drawing a recorded schedule) rather than stopping at a malformed record."""
    try:
        return parse_schedule(text, actors)
    except UsageError:
        return None


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
