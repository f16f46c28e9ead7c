# size: two happens-before passes per run (the explorer's index; the class name, kept apart) share one memo
"""Happens-before over executed footprints: the index that finds a step's conflicts, and the name of a run's class.

Two interleavings are equivalent (one Mazurkiewicz trace) when they order every pair of conflicting steps of
different actors the same way. :class:`History` keeps the latest access of each piece of state by each actor, so
the explorer finds a step's latest conflicting steps without scanning the run. :func:`class_of` names the class a
run belongs to, independently of the explorer's own bookkeeping, so that an exploration can count the classes it
found and show that it ran exactly one execution per class.

Both run once per explored execution, over every step of it, so both look only at :func:`shared_things`: most of
what a step touches is its own (objects it made) or only ever read (classes, settings), and such accesses can order
no two steps of different actors.
"""

from __future__ import annotations

import hashlib
from array import array
from collections.abc import Collection, Iterable, Sequence
from typing import Any

from lab.engine.core._footprint import ANY_KEY, Footprint

_Summary = tuple[frozenset[str], frozenset[str], bool, dict[str, tuple[tuple[str, str], ...]]]
"""What a footprint touches, by thing: the things (never ``*`` or ``probe``), those it writes, whether it may touch
everything (a ``*`` entry), and each thing's (key, mode) entries."""

_SUMMARIES: dict[Footprint, _Summary] = {}
_SUMMARIES_MAX = 65_536  # footprints recur from run to run; a long exploration starts the memo afresh past this


def _summary(footprint: Footprint) -> _Summary:
    """A footprint's :data:`_Summary`, memoised: equal footprints recur in every run of an exploration, and nothing
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
    return _shared((actor, _summary(footprint)) for actor, footprint in steps if footprint)


def _shared(steps: Iterable[tuple[str, _Summary]]) -> frozenset[str]:
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
        summary = _summary(footprint)
        self._add(index, actor, summary, self._hits(summary))

    def latest_conflicting(self, footprint: Footprint, actor: str) -> dict[str, int]:
        """For each other actor, the latest of its steps recorded so far that conflicts with ``footprint``, in the
        order they are found: the actors that may have touched everything, then the footprint's entries in its own
        order (the order the explorer plans races in)."""
        summary = _summary(footprint)
        return self._latest(footprint, actor, summary, self._hits(summary))

    def step(self, index: int, actor: str, footprint: Footprint, *, ask: bool) -> dict[str, int] | None:
        """``latest_conflicting`` (when ``ask``), then ``add``: the explorer does both for each step of a run."""
        summary = _summary(footprint)
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

    def _hits(self, summary: _Summary) -> Collection[str]:
        return summary[0] if self._relevant is None else self._relevant.intersection(summary[0])

    def _add(self, index: int, actor: str, summary: _Summary, hits: Collection[str]) -> None:
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

    def _latest(self, footprint: Footprint, actor: str, summary: _Summary, hits: Collection[str]) -> dict[str, int]:
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


def class_of(actors: Sequence[str], footprints: Sequence[Footprint]) -> bytes:
    """A digest that names the class of equivalent interleavings of a run (step ``k`` ran ``actors[k]`` and
    touched ``footprints[k]``): equal for two runs exactly when they order every conflicting pair alike.

    Each step is named by its actor and its number among that actor's steps, and described by the latest step of
    every other actor that happens before it (program order plus conflicts, transitively): that set of descriptions
    is the partial order itself, whatever order the run happened to list the steps in.

    Vector clocks are lists indexed by actor (in name order), and a step joins the clocks of the earlier steps it
    conflicts with: the latest write of the same key (writes of one key are ordered among themselves, so the latest
    covers the others), and each actor's latest read or write where a write must follow them. A step already known
    to happen before is not joined again. Only :func:`shared_things` are looked at.
    """
    count = len(actors)
    summaries = [_summary(footprints[k]) if k < len(footprints) and footprints[k] else None for k in range(count)]
    relevant = _shared((actors[k], summary) for k, summary in enumerate(summaries) if summary is not None)
    names = sorted(set(actors))
    n = len(names)
    slot_of = {name: i for i, name in enumerate(names)}
    slots = [slot_of[actor] for actor in actors]
    numbers = [0] * count
    counted = [0] * n
    clocks: list[list[int]] = []  # per step: per actor, the number of its latest step that happens before (or -1)
    last: list[list[int] | None] = [None] * n  # per actor: the clock of its latest step
    latest_step = [-1] * n  # per actor: its latest step that touched anything
    latest_anything = [-1] * n  # per actor: its latest step that may have touched everything
    anything_yet = False
    writes: dict[str, dict[str, int]] = {}  # thing -> key -> the latest step that wrote it (key * included)
    reads: dict[str, dict[str, list[int]]] = {}  # thing -> key -> per actor, its latest step that read it
    writes_any: dict[str, list[int]] = {}  # thing -> per actor, its latest step that wrote any key of it
    reads_any: dict[str, list[int]] = {}  # thing -> per actor, its latest step that read any key of it
    for k in range(count):
        slot = slots[k]
        number = counted[slot]
        counted[slot] = number + 1
        numbers[k] = number
        own = last[slot]
        clock = own[:] if own is not None else [-1] * n
        summary = summaries[k]
        if summary is not None:
            touched, _writes, everything, grouped = summary
            hits = relevant.intersection(touched) if relevant else ()
            if hits or everything or anything_yet:
                before = list(latest_anything) if anything_yet else []
                for thing in hits:
                    wrote = writes.get(thing)
                    read = reads.get(thing)
                    for key, mode in grouped[thing]:
                        if key == ANY_KEY:
                            got = writes_any.get(thing)
                            if got is not None:
                                before += got
                            if mode == "w":
                                got = reads_any.get(thing)
                                if got is not None:
                                    before += got
                        else:
                            if wrote is not None:
                                before.append(wrote.get(key, -1))
                                before.append(wrote.get(ANY_KEY, -1))
                            if mode == "w" and read is not None:
                                got = read.get(key)
                                if got is not None:
                                    before += got
                                got = read.get(ANY_KEY)
                                if got is not None:
                                    before += got
                if everything:
                    before += latest_step
                for j in before:
                    if j >= 0 and clock[slots[j]] < numbers[j]:
                        other = clocks[j]
                        for i in range(n):
                            if other[i] > clock[i]:
                                clock[i] = other[i]
                for thing in hits:
                    for key, mode in grouped[thing]:
                        if mode == "w":
                            wrote = writes.get(thing)
                            if wrote is None:
                                wrote = writes[thing] = {}
                            wrote[key] = k
                            per_actor = writes_any.get(thing)
                            if per_actor is None:
                                per_actor = writes_any[thing] = [-1] * n
                        else:
                            read = reads.get(thing)
                            if read is None:
                                read = reads[thing] = {}
                            per_key = read.get(key)
                            if per_key is None:
                                per_key = read[key] = [-1] * n
                            per_key[slot] = k
                            per_actor = reads_any.get(thing)
                            if per_actor is None:
                                per_actor = reads_any[thing] = [-1] * n
                        per_actor[slot] = k
            latest_step[slot] = k
            if everything:
                latest_anything[slot] = k
                anything_yet = True
        clock[slot] = number
        clocks.append(clock)
        last[slot] = clock
    steps_of: list[list[int]] = [[] for _ in range(n)]
    for k in range(count):
        steps_of[slots[k]].append(k)
    # each step, in order of actor then number, as its actor's slot, its number and its clock (the latest step of
    # every actor that happens before it, -1 for none): a one-to-one spelling of the descriptions, so equal digests
    # mean equal partial orders; written as machine integers, not text, since a clock has one entry per actor
    spelled = array("q")
    for slot in range(n):
        for k in steps_of[slot]:
            spelled.append(slot)
            spelled.append(numbers[k])
            spelled.extend(clocks[k])
    return hashlib.blake2b(spelled.tobytes(), digest_size=16).digest()
