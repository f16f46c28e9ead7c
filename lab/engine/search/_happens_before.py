"""Happens-before, computed one way for the whole lab: vector clocks over a run's steps.

Step ``k`` happens after its actor's previous step and after every earlier step of another actor whose footprint
conflicts with its own (same object, overlapping key, one writes; see :func:`lab.engine.core._footprint.conflict`),
transitively. :class:`HappensBefore` adds a run's steps in order and gives each its vector clock: for every actor,
its latest step ordered at or before this one. Every pass that needs the order uses it, over the footprints its
question is about:

- the explorer's race analysis (:mod:`lab.engine.search._races`) gives every step these same clocks (a test
  holds them equal), but reads them off its conflict index (:class:`lab.engine.search._conflicts.History`), which
  it keeps anyway: a race needs the latest conflicting step of *every* other actor, and joining those clocks is the
  step's clock, so a second index per explored run would only repeat the work;
- :func:`class_of`, the name of a run's class of equivalent interleavings (two interleavings are equivalent, one
  Mazurkiewicz trace, when they order every pair of conflicting steps alike), worked out from the run alone rather
  than from the explorer's bookkeeping, so that counting the classes an exploration found checks that it ran
  exactly one execution per class;
- the atomicity check's sync order (:mod:`lab.engine.search._atomicity_epochs`,
  :mod:`lab.engine.search._atomicity_split`), over the synchronisation entries alone, since data accesses are the
  very orders in question there.
"""

from __future__ import annotations

import hashlib
from array import array
from collections.abc import Sequence

from lab.engine.core._footprint import ANY_KEY, Footprint
from lab.engine.search._conflicts import Summary, shared, summary_of


class HappensBefore:
    """Vector clocks of one run's steps, added in the run's order (see the module docstring).

    ``clocks[k]`` lists, for each actor (by its place in ``names``), its latest step ordered at or before step ``k``,
    by the step's index in the run (``-1``: none). Steps may be left out (the atomicity check adds only those that
    synchronise), and an empty footprint orders nothing: such a step is ordered by program order alone.

    A step joins the clocks of a few earlier steps that cover all it conflicts with: the latest write of each key
    it touches (writes of one key are ordered among themselves, so the latest covers the others), and, for a write,
    each actor's latest read of it; a step that may touch everything (``*``) joins every actor's latest step, and
    every later step that touches anything joins it. A step already known to happen before is not joined again.
    With ``relevant`` (:func:`shared_things`), accesses to other things are not looked at: they order nothing.
    """

    __slots__ = (
        "_anything_yet",
        "_last",
        "_latest_anything",
        "_latest_step",
        "_reads",
        "_reads_any",
        "_relevant",
        "_slot_of",
        "_writes",
        "_writes_any",
        "clocks",
        "slot",
    )

    def __init__(self, names: Sequence[str], relevant: frozenset[str] | None = None) -> None:
        self.slot = {name: i for i, name in enumerate(names)}
        """Each actor's place in a clock."""
        self.clocks: dict[int, list[int]] = {}
        n = len(self.slot)
        self._relevant = relevant
        self._last: list[list[int] | None] = [None] * n  # per actor: the clock of its latest step
        self._latest_step = [-1] * n  # per actor: its latest step that touched anything
        self._latest_anything = [-1] * n  # per actor: its latest step that may have touched everything
        self._anything_yet = False
        self._slot_of: dict[int, int] = {}  # step -> its actor's place
        self._writes: dict[str, dict[str, int]] = {}  # thing -> key -> the latest step that wrote it (key * included)
        self._reads: dict[str, dict[str, list[int]]] = {}  # thing -> key -> per actor, its latest step that read it
        self._writes_any: dict[str, list[int]] = {}  # thing -> per actor, its latest step that wrote any key of it
        self._reads_any: dict[str, list[int]] = {}  # thing -> per actor, its latest step that read any key of it

    def clock_of(self, actor: str) -> list[int] | None:
        """The clock of ``actor``'s latest step added (``None`` before its first): read it, never change it."""
        return self._last[self.slot[actor]]

    def step(self, index: int, actor: str, footprint: Footprint, known: list[int] | None = None) -> list[int]:
        """Add step ``index`` of ``actor``, which touched ``footprint``, and return its clock. With ``known`` (its
        clock, from an earlier run of the same prefix) the step is only indexed, and ``known`` is its clock."""
        return self._add(index, self.slot[actor], summary_of(footprint) if footprint else None, known)

    def _add(self, index: int, slot: int, summary: Summary | None, known: list[int] | None = None) -> list[int]:
        n = len(self._last)
        if known is not None:
            clock = known
        else:
            own = self._last[slot]
            clock = own[:] if own is not None else [-1] * n
        if summary is not None:
            touched, _writes, everything, grouped = summary
            relevant = self._relevant
            hits = touched if relevant is None else relevant.intersection(touched) if relevant else ()
            anything_yet = self._anything_yet
            if hits or everything or anything_yet:
                writes, reads, writes_any, reads_any = self._writes, self._reads, self._writes_any, self._reads_any
                before = list(self._latest_anything) if anything_yet else []
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
                    before += self._latest_step
                clocks, slot_of = self.clocks, self._slot_of
                for j in before if known is None else ():
                    if j >= 0 and clock[slot_of[j]] < j:
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
                            wrote[key] = index
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
                            per_key[slot] = index
                            per_actor = reads_any.get(thing)
                            if per_actor is None:
                                per_actor = reads_any[thing] = [-1] * n
                        per_actor[slot] = index
            self._latest_step[slot] = index
            if everything:
                self._latest_anything[slot] = index
                self._anything_yet = True
        if known is None:
            clock[slot] = index
        self.clocks[index] = clock
        self._last[slot] = clock
        self._slot_of[index] = slot
        return clock


def class_of(actors: Sequence[str], footprints: Sequence[Footprint]) -> bytes:
    """A digest that names the class of equivalent interleavings of a run (step ``k`` ran ``actors[k]`` and
    touched ``footprints[k]``): equal for two runs exactly when they order every conflicting pair alike.

    Each step is named by its actor and its number among that actor's steps, and described by the latest step of
    every other actor that happens before it (its :class:`HappensBefore` clock): that set of descriptions is the
    partial order itself, whatever order the run happened to list the steps in. Only :func:`shared_things` are
    looked at.
    """
    count = len(actors)
    summaries = [summary_of(footprints[k]) if k < len(footprints) and footprints[k] else None for k in range(count)]
    relevant = shared((actors[k], summary) for k, summary in enumerate(summaries) if summary is not None)
    order = HappensBefore(sorted(set(actors)), relevant)
    slot_of = order.slot
    for k, summary in enumerate(summaries):
        order._add(k, slot_of[actors[k]], summary)  # the summaries, worked out once for both
    names = order.slot
    numbers = [0] * (count + 1)  # each step's number among its actor's; the last, -1, is what a clock's -1 reads
    numbers[count] = -1
    counted = [0] * len(names)
    steps_of: list[list[int]] = [[] for _ in names]
    for k, actor in enumerate(actors):
        slot = slot_of[actor]
        numbers[k] = counted[slot]
        counted[slot] += 1
        steps_of[slot].append(k)
    # each step, in order of actor then number, as its actor's slot, its number and its clock (the number of the
    # latest step of every actor that happens before it, -1 for none): a one-to-one spelling of the descriptions, so
    # equal digests mean equal partial orders; written as machine integers, not text, since a clock has one entry
    # per actor
    spelled = array("q")
    clocks = order.clocks
    number = numbers.__getitem__
    for slot, mine in enumerate(steps_of):
        for k in mine:
            spelled.append(slot)
            spelled.append(numbers[k])
            spelled.extend(map(number, clocks[k]))
    return hashlib.blake2b(spelled.tobytes(), digest_size=16).digest()
