"""What each step of a run did, for the atomicity check: its accesses to shared state, and its synchronisation.

The check (:mod:`lab.engine.search._atomicity`) runs once per explored execution, so this does per access only what
C does (grouping, slicing, hashing) and keeps its Python for steps and labelled objects. Runs share most of their
steps: within one process a step that did what an earlier one did is handed the earlier, equal tuple of its
accesses (and what was worked out about it, in ``_DONE``), so that merging finds it by identity.

An object labelled as made by the accessing actor (``list#fast.3``) is private in the step that first touched it:
nobody else can have a reference to it yet, so those accesses are taken out (:func:`_take_private`).
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from collections.abc import KeysView, Sequence
from itertools import accumulate, chain, compress, groupby
from operator import itemgetter

from lab.engine.core._footprint import Entry, Footprint
from lab.engine.core._run import Access

What = tuple[Entry, tuple[str, int], frozenset[str]]
"""An access without its step and actor: what it touched, where, under which locks."""
REMEMBERED = 4096
"""How many entries a memo of the check keeps before it starts afresh (a long-lived process must not grow)."""

_SYNC_KINDS = frozenset({"latch", "event", "barrier", "lock", "condition", "semaphore", "queue"})
_STEP = itemgetter(0)
_WHAT = itemgetter(slice(2, None))
_THING = itemgetter(0)
_NONE: frozenset[Entry] = frozenset()


def _sync_entries(footprint: Footprint) -> frozenset[Entry]:
    found = {entry for entry in footprint if entry[0] in _SYNC_KINDS}
    return frozenset(found) if found else _NONE


def sync_of(footprints: Sequence[Footprint], steps: int) -> list[frozenset[Entry]]:
    """Each step's synchronisation entries. Most steps carry none, and most of a footprint is data: looking for a
    kind among its things without a Python loop finds that out, and only the few others are picked apart."""
    sync = [_NONE] * steps
    for i, footprint in enumerate(footprints[:steps]):
        if not _SYNC_KINDS.isdisjoint(map(_THING, footprint)):
            sync[i] = _sync_entries(footprint)
    return sync


def shared_accesses(
    accesses: Sequence[Access], steps: int
) -> tuple[dict[int, tuple[tuple[What, ...], tuple[Access, ...]]], set[int]]:
    """Each step's accesses that another actor could reach (what they touched, and the accesses), and the steps
    that touched any data at all.

    An object labelled as made by the accessing actor (``list#fast.3``) is private in the step that first touched
    it: nobody else can have a reference to it yet.
    """
    shared: dict[int, tuple[tuple[What, ...], tuple[Access, ...]]] = {}
    labelled: list[tuple[int, _Done]] = []
    numbers = list(map(_STEP, accesses))
    if numbers == sorted(numbers):  # as a run logs them: each step's accesses are one slice, cut without a loop
        cut = bisect_left(numbers, steps)
        counts = Counter(numbers[:cut])
        touched = set(counts)
        whats = tuple(map(_WHAT, accesses[:cut]))
        ends = list(accumulate(counts.values()))
        for step, end, begin in zip(counts, ends, chain((0,), ends), strict=False):
            mine = tuple(accesses[begin:end])
            done = _DONE.get(content := whats[begin:end])
            if done is None:
                done = _done(content)
            shared[step] = (done[0], mine)
            if done[1]:
                labelled.append((step, done))
    else:
        by_step: dict[int, tuple[Access, ...]] = {}
        for step, group in groupby(accesses, _STEP):
            if step < steps:
                known = by_step.get(step)
                mine = tuple(group)
                by_step[step] = mine if known is None else known + mine
        touched = set(by_step)
        for step, mine in by_step.items():
            done = _DONE.get(content := tuple(map(_WHAT, mine)))
            if done is None:
                done = _done(content)
            shared[step] = (done[0], mine)
            if done[1]:
                labelled.append((step, done))
    if labelled:
        _take_private(shared, labelled)
    return shared, touched


def _take_private(
    shared: dict[int, tuple[tuple[What, ...], tuple[Access, ...]]], labelled: list[tuple[int, _Done]]
) -> None:
    """Take out of each step the objects labelled with its actor (``list#fast.3``) that it is the first to touch."""
    labelled.sort(key=_STEP)
    first_seen: dict[str, int] = {}
    for step, (content, positions, kept, things) in labelled:
        if first_seen.keys() >= things:  # every one touched by an earlier step: none is private here
            continue
        mine = shared[step][1]
        private: list[int] = []
        for number, (thing, where) in enumerate(positions):
            if first_seen.setdefault(thing, step) != step:
                continue
            if f"#{mine[where[0]][1]}." in thing or any(f"#{mine[k][1]}." in thing for k in where[1:]):
                private.append(number)
        if not private:
            continue
        taken = tuple(private)
        got = kept.get(taken)
        if got is None:
            gone = {positions[number][0] for number in taken}
            mask = tuple(what[0][0] not in gone for what in content)
            got = kept[taken] = (_canonical(tuple(compress(content, mask))), mask)
        if got[0]:
            shared[step] = (got[0], tuple(compress(mine, got[1])))
        else:
            del shared[step]


_Done = tuple[
    tuple[What, ...],
    tuple[tuple[str, tuple[int, ...]], ...],
    dict[tuple[int, ...], tuple[tuple[What, ...], tuple[bool, ...]]],
    KeysView[str],
]
"""What a step did, worked out once: the first equal tuple of its accesses (looking that up again, here or where it
is merged, compares by identity), each labelled object it touched and where, what it keeps without some, and the
labelled objects alone."""
_DONE: dict[tuple[What, ...], _Done] = {}


def _done(content: tuple[What, ...]) -> _Done:
    """Remember ``content`` as the tuple to hand out for equal ones, with the labelled objects it touched."""
    where: dict[str, list[int]] = {}
    for k, ((thing, _, _), _, _) in enumerate(content):
        if "#" in thing:
            where.setdefault(thing, []).append(k)
    if len(_DONE) >= REMEMBERED:
        _DONE.clear()
    done = _DONE[content] = (content, tuple((thing, tuple(ks)) for thing, ks in where.items()), {}, where.keys())
    return done


def _canonical(content: tuple[What, ...]) -> tuple[What, ...]:
    """The remembered tuple equal to ``content``."""
    done = _DONE.get(content)
    return (done if done is not None else _done(content))[0]
