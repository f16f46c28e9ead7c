"""Happens-before over executed footprints: the index that finds a step's conflicts, and the name of a run's class.

Two interleavings are equivalent (one Mazurkiewicz trace) when they order every pair of conflicting steps of
different actors the same way. :class:`History` keeps the latest access of each piece of state by each actor, so
the explorer finds a step's latest conflicting steps without scanning the run. :func:`class_of` names the class a
run belongs to, independently of the explorer's own bookkeeping, so that an exploration can count the classes it
found and show that it ran exactly one execution per class.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from lab.engine.footprint import ANY_KEY, Footprint


class History:
    """The latest access of each piece of state by each actor, for finding conflicts without scanning the run."""

    def __init__(self) -> None:
        # thing -> actor -> [latest write per key, latest read per key, latest write of all, latest read of all,
        #                    latest write of any key, latest read of any key]
        self._by_thing: dict[str, dict[str, list[Any]]] = {}
        self._any_step: dict[str, int] = {}  # actor -> its latest step that touched anything
        self._anything: dict[str, int] = {}  # actor -> its latest step that may have touched everything

    def add(self, index: int, actor: str, footprint: Footprint) -> None:
        """Note that step ``index`` of ``actor`` touched ``footprint``."""
        self._any_step[actor] = index
        for thing, key, mode in footprint:
            if thing == "*":
                self._anything[actor] = index
                continue
            slots = self._by_thing.setdefault(thing, {}).setdefault(actor, [{}, {}, -1, -1, -1, -1])
            write = mode == "w"
            if key == ANY_KEY:
                slots[2 if write else 3] = index
            else:
                slots[0 if write else 1][key] = index
            slots[4 if write else 5] = index

    def latest_conflicting(self, footprint: Footprint, actor: str) -> dict[str, int]:
        """For each other actor, the latest of its steps recorded so far that conflicts with ``footprint``."""
        found: dict[str, int] = {}

        def note(who: str, index: int) -> None:
            if index >= 0 and index > found.get(who, -1):
                found[who] = index

        for who, index in self._anything.items():
            if who != actor:
                note(who, index)
        for thing, key, mode in footprint:
            if thing == "*":
                for who, index in self._any_step.items():
                    if who != actor:
                        note(who, index)
                continue
            if thing == "probe":
                continue
            for who, slots in self._by_thing.get(thing, {}).items():
                if who == actor:
                    continue
                writes_key, reads_key, write_all, read_all, write_any, read_any = slots
                if key == ANY_KEY:
                    note(who, write_any)
                    if mode == "w":
                        note(who, read_any)
                    continue
                note(who, writes_key.get(key, -1))
                note(who, write_all)
                if mode == "w":
                    note(who, reads_key.get(key, -1))
                    note(who, read_all)
        return found


def class_of(actors: Sequence[str], footprints: Sequence[Footprint]) -> bytes:
    """A digest that names the class of equivalent interleavings of a run (step ``k`` ran ``actors[k]`` and
    touched ``footprints[k]``): equal for two runs exactly when they order every conflicting pair alike.

    Each step is named by its actor and its number among that actor's steps, and described by the latest step of
    every other actor that happens before it (program order plus conflicts, transitively): that set of descriptions
    is the partial order itself, whatever order the run happened to list the steps in.
    """
    history = History()
    clocks: list[dict[str, int]] = []  # per step: actor -> the number of its latest step that happens before
    last: dict[str, int] = {}  # actor -> index of its latest step
    numbers: list[int] = []
    counted: dict[str, int] = {}
    for k, actor in enumerate(actors):
        number = counted.get(actor, 0)
        counted[actor] = number + 1
        numbers.append(number)
        own = last.get(actor)
        clock = dict(clocks[own]) if own is not None else {}
        taken = footprints[k] if k < len(footprints) else frozenset()
        if taken:
            for j in history.latest_conflicting(taken, actor).values():
                for who, tick in clocks[j].items():
                    if clock.get(who, -1) < tick:
                        clock[who] = tick
            history.add(k, actor, taken)
        clock[actor] = number
        clocks.append(clock)
        last[actor] = k
    described = sorted(
        (actor, numbers[k], tuple(sorted((who, tick) for who, tick in clocks[k].items() if who != actor)))
        for k, actor in enumerate(actors)
    )
    return hashlib.blake2b(repr(described).encode(), digest_size=16).digest()
