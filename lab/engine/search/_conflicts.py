"""The conflict index: for a step, the latest step of every other actor whose footprint conflicts with it.

Two steps of different actors conflict when they touch the same object, with overlapping keys, and one writes (see
:func:`lab.engine.core._footprint.conflict`). :class:`History` keeps the latest access of each piece of state by
each actor, so that the explorer finds a step's latest conflicting step of every other actor -- the candidates for
a race -- without scanning the run (:mod:`lab.engine.search._races`).

It runs once per explored execution, over every step of it, so it looks only at :func:`shared_things`: most of
what a step touches is its own (objects it made) or only ever read (classes, settings), and such accesses can order
no two steps of different actors. :func:`summary_of` is each footprint's view by thing, memoised, which the vector
clocks of :mod:`lab.engine.search._happens_before` read too.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import Any

from lab.engine.core._footprint import ANY_KEY, Footprint

Summary = tuple[frozenset[str], frozenset[str], bool, dict[str, tuple[tuple[str, str], ...]]]
"""What a footprint touches, by thing: the things (never ``*`` or ``probe``), those it writes, whether it may touch
everything (a ``*`` entry), and each thing's (key, mode) entries."""

_SUMMARIES: dict[Footprint, Summary] = {}
_SUMMARIES_MAX = 65_536  # footprints recur from run to run; a long exploration starts the memo afresh past this


def summary_of(footprint: Footprint) -> Summary:
    """A footprint's :data:`Summary`, memoised: equal footprints recur in every run of an exploration, and nothing
    in a summary depends on the order a set of entries is listed in."""
    summary = _SUMMARIES.get(footprint)
    if summary is None:
        grouped: dict[str, list[tuple[str, str]]] = {}
        for thing, key, mode in footprint:
            grouped.setdefault(thing, []).append((key, mode))
        everything = grouped.pop("*", None) is not None
        grouped.pop("probe", None)
        written = frozenset(thing for thing, entries in grouped.items() if any(mode == "w" for _k, mode in entries))
        if len(_SUMMARIES) >= _SUMMARIES_MAX:
            _SUMMARIES.clear()
        summary = (frozenset(grouped), written, everything, {thing: tuple(e) for thing, e in grouped.items()})
        _SUMMARIES[footprint] = summary
    return summary


def shared_things(steps: Iterable[tuple[str, Footprint]]) -> frozenset[str]:
    """The things that can order steps of different actors among ``steps`` (actor, footprint): written by some step
    and touched by steps of at least two actors. An access to anything else conflicts with no other actor's step
    (a read conflicts only with writes; an actor's own steps are ordered by program order anyway), so leaving it
    out changes no conflict. ``*`` (a step that may touch everything) and ``probe`` are never among them: the
    callers treat the one apart, and the other conflicts with nothing."""
    return shared((actor, summary_of(footprint)) for actor, footprint in steps if footprint)


def shared(steps: Iterable[tuple[str, Summary]]) -> frozenset[str]:
    """:func:`shared_things` over summaries already worked out."""
    touched_by: dict[str, list[frozenset[str]]] = {}
    writes: list[frozenset[str]] = []
    for actor, summary in steps:
        mine = touched_by.get(actor)
        if mine is None:
            mine = touched_by[actor] = []
        mine.append(summary[0])
        writes.append(summary[1])
    if len(touched_by) < 2:
        return frozenset()
    written = frozenset().union(*writes)
    if not written:
        return frozenset()
    seen: set[str] = set()
    shared: set[str] = set()
    for touched in touched_by.values():
        mine_all = set().union(*touched)
        shared |= seen & mine_all
        seen |= mine_all
    return frozenset(shared & written)


class History:
    """The latest access of each piece of state by each actor, for finding conflicts without scanning the run.

    With ``relevant`` (see :func:`shared_things`, computed over every step that will be added or asked about),
    accesses to other things are neither kept nor looked up: they conflict with no other actor's step, so the
    answers are the same, found sooner."""

    def __init__(self, relevant: frozenset[str] | None = None) -> None:
        # thing -> actor -> [latest write per key, latest read per key, latest write of all, latest read of all,
        #                    latest write of any key, latest read of any key]
        self._by_thing: dict[str, dict[str, list[Any]]] = {}
        self._any_step: dict[str, int] = {}  # actor -> its latest step that touched anything
        self._anything: dict[str, int] = {}  # actor -> its latest step that may have touched everything
        self._relevant = relevant

    def add(self, index: int, actor: str, footprint: Footprint) -> None:
        """Note that step ``index`` of ``actor`` touched ``footprint``."""
        summary = summary_of(footprint)
        self._add(index, actor, summary, self._hits(summary))

    def latest_conflicting(self, footprint: Footprint, actor: str) -> dict[str, int]:
        """For each other actor, the latest of its steps recorded so far that conflicts with ``footprint``, in the
        order they are found: the actors that may have touched everything, then the footprint's entries in its own
        order (the order the explorer plans races in)."""
        summary = summary_of(footprint)
        return self._latest(footprint, actor, summary, self._hits(summary))

    def step(self, index: int, actor: str, footprint: Footprint, *, ask: bool) -> dict[str, int] | None:
        """``latest_conflicting`` (when ``ask``), then ``add``: the explorer does both for each step of a run."""
        summary = summary_of(footprint)
        relevant = self._relevant
        hits = summary[0] if relevant is None else relevant.intersection(summary[0])
        found = None
        if ask:
            if hits or summary[2]:
                found = self._latest(footprint, actor, summary, hits)
            else:
                found = {who: i for who, i in self._anything.items() if who != actor and i >= 0}
        if hits or summary[2]:
            self._add(index, actor, summary, hits)
        else:
            self._any_step[actor] = index
        return found

    def _hits(self, summary: Summary) -> Collection[str]:
        return summary[0] if self._relevant is None else self._relevant.intersection(summary[0])

    def _add(self, index: int, actor: str, summary: Summary, hits: Collection[str]) -> None:
        self._any_step[actor] = index
        _touched, _writes, everything, grouped = summary
        if everything:
            self._anything[actor] = index
        by_thing = self._by_thing
        for thing in hits:  # one step, one index: the order its entries are taken in changes nothing here
            actors = by_thing.get(thing)
            if actors is None:
                actors = by_thing[thing] = {}
            slots = actors.get(actor)
            if slots is None:
                slots = actors[actor] = [{}, {}, -1, -1, -1, -1]
            for key, mode in grouped[thing]:
                if mode == "w":
                    if key == ANY_KEY:
                        slots[2] = index
                    else:
                        slots[0][key] = index
                    slots[4] = index
                else:
                    if key == ANY_KEY:
                        slots[3] = index
                    else:
                        slots[1][key] = index
                    slots[5] = index

    def _latest(self, footprint: Footprint, actor: str, summary: Summary, hits: Collection[str]) -> dict[str, int]:
        found: dict[str, int] = {}
        for who, index in self._anything.items():
            if who != actor and index >= 0 and index > found.get(who, -1):
                found[who] = index
        if not hits and not summary[2]:
            return found
        relevant = self._relevant
        by_thing = self._by_thing
        for thing, key, mode in footprint:
            if thing == "*":
                for who, index in self._any_step.items():
                    if who != actor and index >= 0 and index > found.get(who, -1):
                        found[who] = index
                continue
            if relevant is not None and thing not in relevant:
                continue
            actors = by_thing.get(thing)
            if not actors or thing == "probe":
                continue
            write = mode == "w"
            for who, slots in actors.items():
                if who == actor:
                    continue
                if key == ANY_KEY:
                    index = slots[4]
                    if write and slots[5] > index:
                        index = slots[5]
                else:
                    index = slots[0].get(key, -1)
                    if slots[2] > index:
                        index = slots[2]
                    if write:
                        read = slots[1].get(key, -1)
                        if read > index:
                            index = read
                        if slots[3] > index:
                            index = slots[3]
                if index >= 0 and index > found.get(who, -1):
                    found[who] = index
        return found
