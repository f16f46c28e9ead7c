"""Sync epochs and concurrency windows of one run, for the atomicity check (see :mod:`lab.engine.search._atomicity`).

An actor's *epoch* counts its synchronisation operations, so that waiting does not shift the numbering from run to
run; a step's *window* for another actor is the range of that actor's epochs that can run concurrently with the
step's data, judged by happens-before over the synchronisation operations only (the *sync order*): data accesses
do not order steps here, since those are the orders in question. Both are worked out from the synchronising steps
alone, and runs that synchronised alike share their windows (``_SKELETONS``).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from itertools import compress

from lab.engine.core._footprint import Entry
from lab.engine.core._run import Decision
from lab.engine.search._atomicity_steps import REMEMBERED
from lab.engine.search._happens_before import HappensBefore

Window = tuple[int, int]
"""A range of another actor's epochs, ``(first, end)``, ``end`` exclusive (``OPEN``: to its last)."""
OPEN = 1 << 62


def _same_operation(
    before: int,
    step: int,
    actor: str,
    decisions: Sequence[Decision],
    sync: Sequence[frozenset[Entry]],
    touched: set[int],
) -> bool:
    """True when ``step`` does not open an epoch of ``actor``: it synchronises nothing the actor's previous step
    ``before`` did not (the same operation, resumed after parking in it), or it resumes a hold at a probe.

    The actor's next operation on the same object with nothing else between counts as the same one too, the same way
    in every run; windows then take in the whole epoch, a little more than they must (see ``ends`` in
    :class:`Shape`). A hold parks a probe step that carries nothing and touches no data, and the actor cannot run
    until the latch opens; the resumed step carries that latch, which a run where it was already open does not
    record. A gated lock acquisition also follows a step after which the actor could not run, but that step may
    have touched data, and the acquisition carries a lock: it is a new operation.
    """
    added = sync[step] - sync[before]
    if not added:
        return True
    if before in touched or actor in decisions[before + 1].runnable:
        return False
    return all(entry[0] in _HOLDS for entry in added)


_HOLDS = frozenset({"latch", "event"})
"""What a probe hold waits for, and what the step that resumes the held actor carries."""


_Windows = dict[tuple[str, int], tuple[tuple[str, Window], ...]]
"""An actor and how many of its synchronising steps led up to a step -> the step's windows."""
_SKELETONS: dict[tuple[bool, tuple[str, ...], tuple[tuple[str, frozenset[Entry], int, bool], ...]], _Windows] = {}
"""The windows of runs that synchronised alike, by how they synchronised (see :class:`Shape`). Forgets everything
past a bound, so that a long-lived process does not grow without end."""


class Shape:
    """One run's epochs and windows, worked out from its synchronising steps alone.

    Only a synchronising step changes anything these depend on: a step's epoch is how many steps of its actor up to
    it opened one (see :mod:`lab.engine.search._atomicity`), and every step between two synchronising steps of an
    actor has the same clock (its actor's last synchronising step's) and the same windows, so both are looked up,
    not walked to.

    The windows of a step begin with the epoch of the last step of each other actor whose opening operation
    happens-before the step's (its own data, after that operation, is not ordered), and end before the first step
    of the other actor that the operation opening the actor's next synchronising step happens-before (the step's
    data comes before that operation, not after the step's own). That first step is a synchronising one, since only
    those learn anything, and the window ends with its epoch, or the next one when data of its epoch ran before it
    (the actor touched data, then was held at a probe: that data is not ordered by what the step waited for). A run
    cut short cannot tell where a window ends that reaches past the cut.
    """

    def __init__(
        self,
        actors: list[str],
        decisions: Sequence[Decision],
        sync: list[frozenset[Entry]],
        touched: set[int],
        complete: bool,
    ) -> None:
        self._actors = actors
        self._sync = sync
        self._complete = complete
        self._names = list(dict.fromkeys(actors))
        self._order = list(compress(range(len(actors)), sync))  # the synchronising steps
        self._synced: dict[str, list[int]] = {name: [] for name in self._names}
        for i in self._order:
            self._synced[actors[i]].append(i)
        self._ends: dict[int, int] = {}  # a synchronising step -> the first epoch none of whose data it precedes
        self.opens = self._epochs(decisions, touched)
        """For each actor, its steps that open an epoch: a step's epoch is how many of them it does not precede."""
        self._clocks: dict[int, list[int]] | None = None
        self._slot: dict[str, int] = {}  # each actor's place in a clock (with the clocks)
        self._seen: dict[tuple[str, str], list[int]] = {}
        # windows are counted in epochs, and depend on the synchronising steps only through their order, actors,
        # entries, and the epochs they open and end: runs that synchronise alike share them
        ends = self._ends
        skeleton = (
            complete,
            tuple(self._names),
            tuple([(actors[i], sync[i], ends[i], i in self._opened) for i in self._order]),
        )
        windows = _SKELETONS.get(skeleton)
        if windows is None:
            if len(_SKELETONS) >= REMEMBERED:
                _SKELETONS.clear()
            windows = _SKELETONS[skeleton] = {}
        self._windows = windows

    def around(self, step: int, actor: str) -> tuple[tuple[str, Window], ...]:
        """``(other actor, window)`` for every other actor whose window this run can tell, in name order."""
        stretch = bisect_right(self._synced[actor], step)  # how many synchronising steps of the actor led to it
        got = self._windows.get((actor, stretch))
        if got is None:
            got = self._windows[(actor, stretch)] = self._work_out(actor, stretch)
        return got

    def _work_out(self, actor: str, stretch: int) -> tuple[tuple[str, Window], ...]:
        opens = self.opens
        clocks = self._clocks if self._clocks is not None else self._sync_order()
        synced = self._synced[actor]
        clock = clocks[synced[stretch - 1]] if stretch else None
        slot = self._slot
        ahead = synced[stretch] if stretch < len(synced) else None
        found: list[tuple[str, Window]] = []
        for other in self._names:
            if other == actor:
                continue
            before = clock[slot[other]] if clock is not None else -1
            first = bisect_right(opens[other], before) if before >= 0 else 0
            end = OPEN
            if ahead is not None:  # the other's steps are ordered after ``ahead`` from the first whose clock knows it
                theirs = self._synced[other]
                position = bisect_left(self._known(other, actor), ahead)
                if position < len(theirs):
                    end = self._ends[theirs[position]]
            if end == OPEN and not self._complete:
                continue
            found.append((other, (first, end)))
        found.sort()
        return tuple(found)

    def _known(self, other: str, actor: str) -> list[int]:
        """For each synchronising step of ``other``, the last step of ``actor`` it knows of (non-decreasing)."""
        known = self._seen.get((other, actor))
        if known is None:
            clocks = self._clocks if self._clocks is not None else self._sync_order()
            mine = self._slot[actor]
            known = self._seen[(other, actor)] = [clocks[j][mine] for j in self._synced[other]]
        return known

    def _epochs(self, decisions: Sequence[Decision], touched: set[int]) -> dict[str, list[int]]:
        """For each actor, its steps that open an epoch; and for each synchronising step, where windows that it is
        the first of its actor to be ordered after end (``_ends``)."""
        actors, sync, ends = self._actors, self._sync, self._ends
        self._opened: set[int] = set()
        opens_of: dict[str, list[int]] = {}
        for actor in self._names:
            opens: list[int] = []
            opens_of[actor] = opens
            synced = self._synced[actor]
            if not synced:
                continue
            mine = list(compress(range(synced[-1] + 1), map(actor.__eq__, actors)))  # its steps up to the last one
            for i in synced:
                position = bisect_left(mine, i)
                if not position or not _same_operation(mine[position - 1], i, actor, decisions, sync, touched):
                    opens.append(i)
                    self._opened.add(i)
                    ends[i] = len(opens)
                else:  # data of this epoch that ran before ``i`` is not ordered by what ``i`` waited for
                    since = bisect_left(mine, opens[-1]) if opens else 0
                    dirty = any(map(touched.__contains__, mine[since:position]))
                    ends[i] = len(opens) + 1 if dirty else len(opens)
        return opens_of

    def _sync_order(self) -> dict[int, list[int]]:
        """Vector clocks of the operations that open the synchronising steps, over program order and
        synchronisation only (:class:`lab.engine.search._happens_before.HappensBefore` over their entries alone).

        ``clocks[i][slot[X]]`` is the last step of actor X whose opening operation happens-before the one opening
        step ``i``.
        """
        actors, sync = self._actors, self._sync
        order = HappensBefore(self._names)
        for i in self._order:
            order.step(i, actors[i], sync[i])
        self._slot = order.slot
        self._clocks = order.clocks
        return order.clocks
