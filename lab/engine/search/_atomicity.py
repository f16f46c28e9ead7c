"""Is the granularity fine enough? A step that the explorer treats as atomic, and that is not.

The explorer only switches actors at scheduling points, so it treats everything one actor does between two points
as one indivisible step. Real threads are not so polite: CPython may switch between any two bytecodes. If a step
touches shared state twice (reads a version, then writes the history that relies on it) and another actor touches
the same state in between -- with no lock both hold, and nothing (a latch, a barrier) ordering the two -- then
orders exist that the explorer cannot produce at this granularity, and a PASS would be a claim about a program that
does not exist. This module finds such a step, so the verdict can say so instead.

**The test.** A step S of actor A can be split when two of its accesses, a1 then a2, each conflict with an access
of one other actor B (possibly one and the same access of B), with no lock held in common by either pair, and B's
access can run concurrently with S's data: B's access falls between a1 and a2, an interleaving equivalent to neither
"S first" nor "B first".

**Concurrency is judged on the operations, not on whole steps.** A step begins with the operation that opened it (a
latch count-down, a wait, a lock acquisition, a probe) and then runs data accesses, so an operation orders what came
*before* it, never the accesses that follow it in the same step: B's data in step j is ordered before S's data only
when the operation opening B's *next* step happens-before the one opening S, and S's data is ordered before step j
only when the operation opening A's next synchronising step happens-before j's. Happens-before is program order
plus synchronisation only (latches, events, barriers, conditions, semaphores, queues, and this run's order of lock
operations): data accesses do not order steps here, since those are the orders in question. A pair ordered only by
this run's lock order is judged again in the runs that reverse it (the explorer tries every order of conflicting
lock operations). Data under a lock both accesses hold needs no order at all.

**An operation that lets another actor go on splits the step it opens.** A step S of A that begins with a write of
a synchronisation object (a release, a set, a put, a semaphore release, a count-down; a lab lock's release, which
the explorer lets commute, counts as the write of its lock) and then accesses shared state, with an access of
another actor B ordered after that operation but not after A's next one, conflicting with S's access and no lock in
common: B's access can fall between the two, and the explorer, which cannot run B before the operation, never puts
it there. This is found within one run (:func:`lab.engine.search._atomicity_split.split_after_signal`), since both
accesses are in the run that ordered them so; a pair ordered by a race the explorer does reverse (two acquisitions
of one semaphore) is reported too.

**Runs are compared.** What B does concurrently with S depends on the order: in the run where ``first`` commits,
``retry`` finds the receipt and touches almost nothing; in the run where ``retry`` goes first it does the whole
commit. Only together do they show that ``retry``'s commit can fall inside ``first``'s. So what each actor touched is
kept per *sync epoch* across runs, and S's concurrent window (worked out in S's own run) is a range of B's epochs.

**Sync epochs: a numbering that waiting does not shift.** Step numbers would not do: a wait that blocks ends its step
and the actor resumes in a step of its own, so "B's 3rd step" names different code in a run where B waited and in
one where it did not (an event hand-off came out INCOMPLETE that way). An actor's epoch instead counts its
synchronisation operations: a step that carries a latch, event, barrier, lock, condition, semaphore or queue entry
its previous step did not carry opens the next epoch, so epoch 0 runs from the actor's start to its first
synchronisation. A step that resumes a parked wait carries the entries of the step that parked (the same
operation) and stays in its epoch, however the wait ended (a timeout included). A hold at a probe parks a step that
carries nothing, and the resumed step carries the latch the actor was held for, which a run where the latch was
already open does not record: a latch or event that appears in a step the actor could not run before, after a step
that touched no data, is that hold, and opens nothing. A lock another actor holds is different: the acquisition is
gated (not offered until the lock is free), and the step that takes it is the acquisition, a new operation.
Synchronisation, hence concurrency with S, changes only where an epoch begins, so windows of whole epochs are
exact; where it changes inside one (a repeated operation on one object, a hold) the window takes the whole epoch.

**Runs cut short** (pruned, out of budget, hung) say nothing of what would have come next, so a window whose end lies
beyond the cut is not judged there: a pruned run is a prefix of a run the explorer did complete, where it is. What
cut runs did touch still counts.

**Cost.** It runs once per explored execution, so it does per access only what C does (grouping, slicing,
hashing) and keeps its Python for steps, synchronisations and labelled objects. Runs share most of their steps: a
step's accesses are merged into its epoch only the first time that epoch is seen doing exactly them; within one
process a step that did what an earlier one did is handed the earlier, equal tuple of its accesses (and what was
worked out about it), so that merging finds it by identity; windows are worked out from the synchronising steps
alone, once per stretch between two of one actor's, and shared by runs that synchronised alike; and the search
for a split looks each access up once per other actor, skipping at once the many that nothing conflicts with.

Limits (it is a check on the steps that ran, not a proof): a step whose accesses depend on data another actor
writes may be judged by accesses it would not make in the interleaving found; epochs are matched by number, so two
paths through an actor that synchronise a different number of times are compared epoch by epoch; a query of a
primitive in the middle of a step (``is_set()``, ``locked()``, ``qsize()``) is taken as if it opened the step (the
run in which the query comes first is judged too).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from operator import attrgetter
from typing import cast

from lab.engine.core._footprint import ANY_KEY, Entry
from lab.engine.core._run import Access, RunResult, RunStatus
from lab.engine.search._atomicity_epochs import Shape, Window
from lab.engine.search._atomicity_split import SplitStep, one_call_tokens, split_after_signal, split_in_window
from lab.engine.search._atomicity_steps import What, shared_accesses, sync_of

_COMPLETE = frozenset({RunStatus.FINISHED, RunStatus.DEADLOCK})
"""Runs whose end is the program's: every actor finished, or none could go on. Others were cut short."""

_Profile = dict[What, Access]
_Key = tuple[str, tuple[What, ...], tuple[tuple[str, Window], ...]]
"""A step that may be split: its actor, its accesses, and the windows of the others."""
_Merged = tuple[tuple[What, ...], set[tuple[str, int]], set[tuple[str, tuple[tuple[str, Window], ...]]]]
"""For one step's accesses: the first tuple of them seen, the places (actor, epoch) and the windows (actor, windows)
they were merged with."""
_Memo = dict[tuple[Entry, frozenset[str]], list[tuple[int, Access]]]
"""For one other actor: an access (its entry and locks) -> that actor's accesses that conflict with it unprotected."""
_CHOSEN = attrgetter("chosen")


RunPart = tuple[tuple[str, int], tuple[What, ...], tuple[Access, ...], tuple[tuple[str, Window], ...]]
"""What one shared step of a run adds to the check: its actor and epoch, what it accessed, its accesses, and the
windows of the other actors' epochs that ran concurrently with it (empty unless it accessed shared state twice)."""


def run_parts(run: RunResult) -> list[RunPart | SplitStep]:
    """What ``run``'s shared steps add to an :class:`AtomicityCheck`: a function of the run alone, so that the
    process that ran it can work it out and the one that checks merges it. Last, when the run shows one, a step
    split after the operation that opened it (:func:`split_after_signal`)."""
    accesses = run.accesses
    if not accesses:
        return []
    if run.joined:
        accesses = one_call_tokens(accesses, run.joined)
    decisions = run.decisions
    actors = list(map(_CHOSEN, decisions))
    shared, touched = shared_accesses(accesses, len(actors))
    sync = sync_of(run.step_footprints, len(actors))
    shape = Shape(actors, decisions, sync, touched, run.status in _COMPLETE)
    opens, around = shape.opens, shape.around
    parts: list[RunPart | SplitStep] = []
    for step, (content, mine) in shared.items():
        actor = actors[step]
        windows = around(step, actor) if len(mine) >= 2 else ()
        parts.append(((actor, bisect_right(opens[actor], step)), content, mine, windows))
    signalled = split_after_signal(actors, sync, run.step_footprints, shared)
    if signalled is not None:
        parts.append(signalled)
    return parts


class AtomicityCheck:
    """Collects, over every run of an exploration, the steps that touch shared state more than once (each with the
    epochs of every other actor that ran concurrently with it) and what each actor touched in each of its epochs,
    then looks for a step another actor can split (see the module docstring).

    Runs repeat most of their steps, so what was seen is filed by a step's accesses first: a part seen before costs
    one look-up of them, and their places and windows are small.
    """

    def __init__(self) -> None:
        self._candidates: list[tuple[_Key, tuple[Access, ...], dict[str, Window]]] = []
        self._profiles: dict[tuple[str, int], _Profile] = {}
        self._seen: dict[tuple[What, ...], _Merged] = {}
        self._same: dict[int, _Merged] = {}  # the same, by the identity of the first tuple of accesses seen
        self._index: dict[str, _Parts] | None = None
        self._signalled: SplitStep | None = None  # the first step split after its opening operation, if any

    def add_run(self, run: RunResult) -> None:
        """Take in one run's accesses."""
        self.merge(run_parts(run))

    def merge(self, parts: Sequence[RunPart | SplitStep]) -> None:
        """Take in what one run's shared steps add (:func:`run_parts`, which a worker process may have worked out).

        A part is filed by its accesses: looked up first by the identity of their tuple (``run_parts`` hands out the
        first equal one it made, so in one process an old step is found without comparing its accesses one by one),
        then by value (parts from another process). Either way the same record is found: only the cost differs.
        """
        profiles, seen, candidates, same = self._profiles, self._seen, self._candidates, self._same
        if parts and isinstance(parts[-1], SplitStep):  # only ever last (run_parts)
            if self._signalled is None:
                self._signalled = parts[-1]
            parts = parts[:-1]
        for place, content, mine, windows in cast(Sequence[RunPart], parts):
            known = same.get(id(content))  # the very tuple seen before (run_parts hands out the first equal one)
            if known is None or known[0] is not content:
                known = seen.get(content)
                if known is None:
                    known = seen[content] = (content, set(), set())
                    same[id(content)] = known  # kept alive in ``seen``: no other tuple can take its id meanwhile
            _, places, windowed = known
            if place not in places:  # the same accesses in the same epoch, as in an earlier run, add nothing
                places.add(place)
                self._index = None
                profile = profiles.setdefault(place, {})
                for what, access in zip(content, mine, strict=True):
                    profile.setdefault(what, access)
            if windows and (place[0], windows) not in windowed:
                windowed.add((place[0], windows))
                candidates.append(((place[0], content, windows), mine, dict(windows)))

    def finding(self) -> SplitStep | None:
        """The first split-able step found, in a stable order, or ``None``.

        Candidates share most of their accesses (one step's, in runs that put it in different windows), so which of
        a step's accesses conflict unprotected with another actor's at all is worked out once per step and actor,
        by the tuple of its accesses (kept alive by the candidate, so its identity names it meanwhile); a step
        with fewer than two such accesses cannot be split by that actor, whatever its window.
        """
        index = self._by_part()
        found: list[tuple[str, str, SplitStep]] = []  # put in a stable order only when there is something to order
        memos: dict[str, _Memo] = {}  # each access (its entry and locks) is looked up once per other actor
        exposed: dict[tuple[int, str], list[tuple[int, list[tuple[int, Access]]]]] = {}
        for key, mine, windows in self._candidates:
            for other in sorted(windows):
                theirs = index.get(other)
                if theirs is None:
                    continue
                hits = exposed.get((id(key[1]), other))
                if hits is None:
                    memo = memos.get(other)
                    if memo is None:
                        memo = memos[other] = {}
                    hits = exposed[(id(key[1]), other)] = _exposed(mine, theirs, memo)
                if len(hits) < 2:
                    continue
                split = split_in_window(mine, hits, windows[other])
                if split is not None:
                    found.append((_stable(key), other, split))
                    break
        return min(found, key=lambda item: item[:2])[2] if found else self._signalled

    def _by_part(self) -> dict[str, _Parts]:
        """For each actor, every access it was seen to make, by the part of an object it touched, in a stable order."""
        if self._index is None:
            index: dict[str, _Parts] = {}
            for (who, epoch), profile in sorted(self._profiles.items()):
                parts = index.setdefault(who, _Parts())
                for access in profile.values():
                    parts.add(epoch, access)
            self._index = index
        return self._index


class _Parts:
    """One actor's accesses by (thing, key): all of them, and the writes alone (all a read can conflict with)."""

    def __init__(self) -> None:
        self.every: dict[tuple[str, str], list[tuple[int, Access]]] = {}
        self.writes: dict[tuple[str, str], list[tuple[int, Access]]] = {}
        self.keys: dict[str, list[str]] = {}

    def add(self, epoch: int, access: Access) -> None:
        thing, key, mode = access.entry
        part = (thing, key)
        if part not in self.every:
            self.every[part] = []
            self.keys.setdefault(thing, []).append(key)
        self.every[part].append((epoch, access))
        if mode == "w":
            self.writes.setdefault(part, []).append((epoch, access))

    def conflicting(self, entry: Entry) -> list[list[tuple[int, Access]]]:
        """The lists that may hold accesses conflicting with ``entry`` (same thing, overlapping key, one writes)."""
        thing, key, mode = entry
        pool = self.writes if mode == "r" else self.every
        keys = self.keys.get(thing, []) if key == ANY_KEY else (key, ANY_KEY)
        return [pool[(thing, other)] for other in keys if (thing, other) in pool]


def _stable(key: _Key) -> str:
    """A candidate's sort key: its text with each lock set sorted (a set's own order changes between processes)."""
    actor, content, windows = key
    parts = [(entry, where, sorted(locks)) for entry, where, locks in content]
    return repr((actor, parts, windows))


def find_split_step(run: RunResult) -> SplitStep | None:
    """The first step of ``run`` alone that another actor can split, or ``None`` (see :class:`AtomicityCheck`)."""
    check = AtomicityCheck()
    check.add_run(run)
    return check.finding()


def _exposed(mine: Sequence[Access], theirs: _Parts, memo: _Memo) -> list[tuple[int, list[tuple[int, Access]]]]:
    """Where in ``mine`` an access has accesses of the other actor that conflict with it unprotected, and those
    accesses with their epochs, in a stable order."""
    exposed: list[tuple[int, list[tuple[int, Access]]]] = []
    for position, access in enumerate(mine):
        asked = (access[2], access[4])
        unprotected = memo.get(asked)
        if unprotected is None:
            locks = access[4]
            unprotected = memo[asked] = [
                (epoch, b) for found in theirs.conflicting(access[2]) for epoch, b in found if not (locks & b[4])
            ]
        if unprotected:
            exposed.append((position, unprotected))
    return exposed
