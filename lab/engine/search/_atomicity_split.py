"""A step that must not be treated as atomic, and the two ways one is found (see :mod:`lab.engine.search._atomicity`):
two of its accesses with another actor's conflicting access able to fall between them (:func:`split_in_window`),
or an access right after an operation that lets another actor go on (:func:`split_after_signal`).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from operator import itemgetter

from lab.engine.core._footprint import Entry, Footprint, describe_entry, entries_conflict
from lab.engine.core._run import Access
from lab.engine.search._atomicity_epochs import Window
from lab.engine.search._atomicity_steps import What
from lab.engine.search._happens_before import HappensBefore

FINER = {"probe": "line", "line": "instruction"}
_THING = itemgetter(0)


@dataclass(frozen=True)
class SplitStep:
    """A step that must not be treated as atomic: ``first`` and ``second`` of one actor, ``other`` in between; or,
    with ``signal``, the operation that opened the step (``first`` is ``second``, the access after it)."""

    first: Access
    second: Access
    other: Access
    signal: str = ""

    def describe(self, granularity: str) -> str:
        """One line: what was touched, where, and what to do (a finer granularity, where there is one)."""
        finer = FINER.get(granularity)
        if finer is None:  # every access is a scheduling point already: these two are one operation's
            return (
                f"at {granularity} granularity one step of {self.first.actor} does "
                f"{describe_entry(self.first.entry)} ({_short(self.first.where)}) and then "
                f"{describe_entry(self.second.entry)} ({_short(self.second.where)}) in one operation the lab "
                f"cannot see into, while {self.other.actor} may {describe_entry(self.other.entry)} "
                f"({_short(self.other.where)}) in between with no lock in common: no granularity splits it; hold "
                "one lock around both, keep the state it reaches out of the other actor's way, or, if it is "
                "your code, add its module to line_modules"
            )
        if self.signal:
            return (
                f"at {granularity} granularity one step of {self.first.actor} does {self.signal} and then "
                f"{describe_entry(self.first.entry)} ({_short(self.first.where)}) with no scheduling point between, "
                f"while {self.other.actor}, which that operation lets go on, may "
                f"{describe_entry(self.other.entry)} ({_short(self.other.where)}) in between with no lock in "
                f"common: re-explore with --granularity {finer}"
            )
        return (
            f"at {granularity} granularity one step of {self.first.actor} does "
            f"{describe_entry(self.first.entry)} ({_short(self.first.where)}) and then "
            f"{describe_entry(self.second.entry)} ({_short(self.second.where)}) with no scheduling point between, "
            f"while {self.other.actor} may {describe_entry(self.other.entry)} ({_short(self.other.where)}) in "
            f"between with no lock in common: re-explore with --granularity {finer}"
        )


def split_in_window(
    mine: Sequence[Access], exposed: list[tuple[int, list[tuple[int, Access]]]], window: Window
) -> SplitStep | None:
    """Two of ``mine`` that accesses of the other actor, in epochs inside ``window``, conflict with unprotected."""
    first, end = window
    hit_first: tuple[Access, Access] | None = None
    for position, unprotected in exposed:
        other = next((b for epoch, b in unprotected if first <= epoch < end), None)
        if other is None:
            continue
        if hit_first is None:
            hit_first = (mine[position], other)
        elif not _one_call(hit_first[0], mine[position]):
            return SplitStep(hit_first[0], mine[position], other)
    return None


_ONE_CALL = "(one call "
"""The mark of the accesses one operation made together (see :func:`one_call_tokens`): never a lock's name."""


def one_call_tokens(accesses: Sequence[Access], joined: frozenset[int]) -> tuple[Access, ...]:
    """``accesses``, with each group that one operation made together (``joined``: see
    :attr:`lab.engine.core._run.RunResult.joined`) marked by a token among its locks, ``(one call <actor> <n>)``
    for the step's n-th group: no other actor can run between them, so no access of another actor can split two
    of them, at any granularity. Such a group is a call the lab cannot see into, charged with everything it may
    reach (``next(counter)`` wrote the counter and the built-ins' module): two of its entries conflicting with
    another actor's call once made every step that called it "split", with advice to re-explore at the
    granularity it already used. The token names the actor, so two actors' groups never share one, and numbers
    groups within their step, so the same step in two runs is marked alike."""
    marked = list(accesses)
    token = ""
    last_step, n = -1, 0
    for index in sorted(joined):
        if index - 1 not in joined:  # the access before it opened the group
            head = accesses[index - 1]
            n = n + 1 if head.step == last_step else 0
            last_step = head.step
            token = f"{_ONE_CALL}{head.actor} {n})"
            marked[index - 1] = head._replace(locks=head.locks | {token})
        marked[index] = marked[index]._replace(locks=marked[index].locks | {token})
    return tuple(marked)


def _one_call(first: Access, second: Access) -> bool:
    """Whether two accesses of one step were made by one operation (they share its token)."""
    return any(lock.startswith(_ONE_CALL) for lock in first.locks & second.locks)


_RELEASED = "lock-release"
"""What a lab lock's release writes (``lock-release``, ``<lock>@<actor>``): no synchronisation for the epochs (a
release there orders nothing), but for :func:`split_after_signal` a write of the lock, which lets a waiter in."""


def split_after_signal(
    actors: list[str],
    sync: list[frozenset[Entry]],
    footprints: Sequence[Footprint],
    shared: dict[int, tuple[tuple[What, ...], tuple[Access, ...]]],
) -> SplitStep | None:
    """A step of this run that begins with an operation that lets another actor go on (a release, a set, a put, a
    count-down: a write of a synchronisation object) and then accesses shared state, and an access of another actor
    ordered after that operation but not after the actor's next one, which conflicts with it with no lock in
    common. The explorer cannot put that access between the operation and the step's own access, which threads
    can: the step must be split (a race between probes). A pair whose operations this run orders by a race the
    explorer reverses (two acquisitions of a semaphore) is reported too: a little more than it must.

    Happens-before is :class:`lab.engine.search._happens_before.HappensBefore` over the operations only, as for the
    windows (:meth:`lab.engine.search._atomicity_epochs.Shape._sync_order`), with a lab lock's release taken as the
    write of its lock it is. Steps with shared accesses and such an operation are few: most
    runs end at the first loop.
    """
    entries: dict[int, frozenset[Entry]] = {}
    for i, footprint in enumerate(footprints[: len(actors)]):
        found = sync[i]
        if _RELEASED in map(_THING, footprint):
            found = found | {
                ("lock", key.rpartition("@")[0], mode) for thing, key, mode in footprint if thing == _RELEASED
            }
        if found:
            entries[i] = found
    signals = [i for i in shared if i in entries and any(entry[2] == "w" for entry in entries[i])]
    if not signals:
        return None
    order = HappensBefore(list(dict.fromkeys(actors)))
    synced: dict[str, list[int]] = {}
    for i in sorted(entries):
        order.step(i, actors[i], entries[i])
        synced.setdefault(actors[i], []).append(i)
    clocks, slot = order.clocks, order.slot
    steps_of: dict[str, list[int]] = {}
    for step in sorted(shared):
        steps_of.setdefault(actors[step], []).append(step)
    knowing: dict[tuple[str, str], list[int]] = {}  # (other, actor): the last step of actor each of other's knows
    for signal in sorted(signals):
        actor = actors[signal]
        mine: dict[str, list[Access]] | None = None  # the step's accesses by what they touched, once needed
        for other, theirs in synced.items():
            if other == actor:
                continue
            known = knowing.get((other, actor))
            if known is None:
                mine_slot = slot[actor]
                known = knowing[(other, actor)] = [clocks[k][mine_slot] for k in theirs]
            low, high = bisect_left(known, signal), bisect_right(known, signal)
            if low == high:  # none of its operations follows this one without following the actor's next one
                continue
            begin, end = theirs[low], theirs[high] if high < len(theirs) else len(actors)
            steps = steps_of.get(other, [])
            if mine is None:
                mine = {}
                for own in shared[signal][1]:
                    mine.setdefault(own[2][0], []).append(own)
            for step in steps[bisect_left(steps, begin) : bisect_left(steps, end)]:
                for access in shared[step][1]:
                    entry = access[2]
                    for own in mine.get(entry[0], ()):
                        if entries_conflict(own[2], entry) and not own[4] & access[4]:
                            operation = min(entry for entry in entries[signal] if entry[2] == "w")
                            return SplitStep(own, own, access, describe_entry(operation))
    return None


def _short(where: tuple[str, int]) -> str:
    path, line = where
    return f"{path.rsplit('/', 1)[-1]}:{line}"
