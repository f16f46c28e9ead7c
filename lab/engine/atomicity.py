"""Is the granularity fine enough? A step that the explorer treats as atomic, and that is not.

The explorer only switches actors at scheduling points, so it treats everything one actor does between two points
as one indivisible step. Real threads are not so polite: CPython may switch between any two bytecodes. If a step
touches shared state twice (reads a version, then writes the history that relies on it) and another actor touches
the same state in between -- with no lock both hold, and nothing (a latch, a barrier) ordering the two -- then
orders exist that the explorer cannot produce at this granularity, and a PASS would be a claim about a program that
does not exist. This module finds such a step in one run, so the verdict can say so instead.

The test, per step S of actor A: two of S's accesses, a1 then a2, each conflict with an access of the same other
actor B (possibly one and the same access of B), B's step is not ordered before or after S by synchronisation
(latches, events, barriers, conditions, semaphores, queues, or a lock released by one and then taken by the
other), and neither pair holds a lock
in common. Then B's access could fall between a1 and a2,
an interleaving equivalent to neither "S first" nor "B first".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from lab.engine.footprint import conflict, describe_entry, entries_conflict
from lab.engine.scheduler import Access, RunResult

_SYNC_KINDS = frozenset({"latch", "event", "barrier", "lock", "condition", "semaphore", "queue"})
FINER = {"probe": "line", "line": "instruction"}


@dataclass(frozen=True)
class SplitStep:
    """A step that must not be treated as atomic: ``first`` and ``second`` of one actor, ``other`` in between."""

    first: Access
    second: Access
    other: Access

    def describe(self, granularity: str) -> str:
        """One line: what was touched, where, and what to do."""
        finer = FINER.get(granularity, "instruction")
        return (
            f"at {granularity} granularity one step of {self.first.actor} does "
            f"{describe_entry(self.first.entry)} ({_short(self.first.where)}) and then "
            f"{describe_entry(self.second.entry)} ({_short(self.second.where)}) with no scheduling point between, "
            f"while {self.other.actor} may {describe_entry(self.other.entry)} ({_short(self.other.where)}) in "
            f"between with no lock in common: re-explore with --granularity {finer}"
        )


class AtomicityCheck:
    """Collects, over every run of an exploration, the steps that touch shared state more than once and what each
    actor's steps touch, then looks for a step another actor can split (see the module docstring).

    Runs are compared, not only judged one by one: in the run where ``first`` commits, ``retry`` finds the receipt
    and touches almost nothing; in the run where ``retry`` goes first it does the whole commit. Only together do
    they show that ``retry``'s commit can fall inside ``first``'s. Actor steps are matched across runs by their
    number within the actor (its 3rd step), and a pair counts as concurrent when, in the run that recorded the
    split-able step, synchronisation ordered it neither before nor after.
    """

    def __init__(self) -> None:
        self._candidates: dict[tuple[object, ...], tuple[str, int, tuple[Access, ...], dict[str, tuple[int, int]]]] = {}
        self._profiles: dict[tuple[str, int], dict[tuple[object, ...], Access]] = {}

    def add_run(self, run: RunResult) -> None:
        """Take in one run's accesses."""
        if not run.accesses:
            return
        actors = [decision.chosen for decision in run.decisions]
        clocks = _sync_order(actors, run.step_footprints)
        own_index: list[int] = []
        steps_of: dict[str, list[int]] = {}
        for i, actor in enumerate(actors):
            own_index.append(len(steps_of.setdefault(actor, [])))
            steps_of[actor].append(i)
        by_step: dict[int, list[Access]] = {}
        first_seen: dict[str, int] = {}
        for access in run.accesses:
            thing = access.entry[0]
            first = first_seen.setdefault(thing, access.step)
            if first == access.step and f"#{access.actor}." in thing:
                continue  # an object this step made and nobody else can reach yet
            by_step.setdefault(access.step, []).append(access)
        for step, mine in by_step.items():
            if step >= len(actors):
                continue
            actor = actors[step]
            profile = self._profiles.setdefault((actor, own_index[step]), {})
            for access in mine:
                profile.setdefault((access.entry, access.locks, access.where), access)
            if len(mine) < 2:
                continue
            window = {other: _window(clocks, step, actor, other, steps, own_index)
                      for other, steps in steps_of.items() if other != actor}
            key = (actor, own_index[step], tuple((a.entry, a.locks, a.where) for a in mine),
                   tuple(sorted(window.items())))
            if key not in self._candidates:
                self._candidates[key] = (actor, own_index[step], tuple(mine), window)

    def finding(self) -> SplitStep | None:
        """The first split-able step found, in a stable order, or ``None``."""
        index: dict[str, dict[str, list[tuple[int, Access]]]] = {}  # actor -> thing -> (step number, access)
        for (who, number), profile in sorted(self._profiles.items()):
            things = index.setdefault(who, {})
            for access in profile.values():
                things.setdefault(access.entry[0], []).append((number, access))
        for key in sorted(self._candidates, key=repr):
            _actor, _number, mine, window = self._candidates[key]
            for other in sorted(window):
                found = _split(mine, index.get(other, {}), window[other])
                if found is not None:
                    return found
        return None


def find_split_step(run: RunResult) -> SplitStep | None:
    """The first step of ``run`` alone that another actor can split, or ``None`` (see :class:`AtomicityCheck`)."""
    check = AtomicityCheck()
    check.add_run(run)
    return check.finding()


def _window(clocks: list[dict[str, int]], step: int, actor: str, other: str, other_steps: list[int],
            own_index: list[int]) -> tuple[int, int]:
    """The other actor's step numbers that may run concurrently with ``step`` (of ``actor``): strictly between the
    last of its steps ordered before ``step`` and the first ordered after it."""
    last_before = clocks[step].get(other, -1)
    after = own_index[last_before] if last_before >= 0 else -1
    low, high = 0, len(other_steps)
    while low < high:  # once one of the other's steps is ordered after ``step``, all its later ones are
        middle = (low + high) // 2
        j = other_steps[middle]
        if j > step and clocks[j].get(actor, -1) >= step:
            high = middle
        else:
            low = middle + 1
    before = own_index[other_steps[low]] if low < len(other_steps) else 1 << 30
    return after, before


def _split(mine: Sequence[Access], theirs: dict[str, list[tuple[int, Access]]],
           window: tuple[int, int]) -> SplitStep | None:
    """Two of ``mine`` that accesses of the other actor, in steps inside ``window``, conflict with unprotected."""
    after, before = window
    hit_first: tuple[Access, Access] | None = None
    for access in mine:
        other = next((b for number, b in theirs.get(access.entry[0], ()) if after < number < before
                      and not (access.locks & b.locks) and entries_conflict(access.entry, b.entry)), None)
        if other is None:
            continue
        if hit_first is None:
            hit_first = (access, other)
        else:
            return SplitStep(hit_first[0], access, other)
    return None


def _sync_order(actors: list[str], footprints: Sequence[frozenset[tuple[str, str, str]]]) -> list[dict[str, int]]:
    """Vector clocks over program order and synchronisation only (latches, events, barriers, and the order of
    lock operations in this run): data accesses do not order steps here, since those are the orders in question.
    A pair ordered only by this run's lock order is checked again in the runs that reverse it (the explorer tries
    every order of conflicting lock operations)."""
    clocks: list[dict[str, int]] = []
    last: dict[str, int] = {}
    sync_steps: list[tuple[int, frozenset[tuple[str, str, str]]]] = []
    for i, actor in enumerate(actors):
        clock = dict(clocks[last[actor]]) if actor in last else {}
        footprint = footprints[i] if i < len(footprints) else frozenset()
        sync = frozenset(entry for entry in footprint if entry[0] in _SYNC_KINDS)
        if sync:
            for m, earlier in sync_steps:
                if conflict(earlier, sync):
                    for who, tick in clocks[m].items():
                        if clock.get(who, -1) < tick:
                            clock[who] = tick
            sync_steps.append((i, sync))
        clock[actor] = i
        clocks.append(clock)
        last[actor] = i
    return clocks


def _short(where: tuple[str, int]) -> str:
    path, line = where
    return f"{path.rsplit('/', 1)[-1]}:{line}"
