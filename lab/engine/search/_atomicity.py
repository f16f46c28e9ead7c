# size: one analysis (epochs, sync order, access windows) that yields one verdict, the split step
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
it there. This is found within one run (:func:`_split_after_signal`), since both accesses are in the run that
ordered them so; a pair ordered by a race the explorer does reverse (two acquisitions of one semaphore) is reported
too.

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

from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import KeysView, Sequence
from dataclasses import dataclass
from itertools import accumulate, chain, compress, groupby
from operator import attrgetter, itemgetter
from typing import cast

from lab.engine.core._footprint import ANY_KEY, Entry, Footprint, describe_entry, entries_conflict
from lab.engine.core._run import Access, Decision, RunResult, RunStatus

_SYNC_KINDS = frozenset({"latch", "event", "barrier", "lock", "condition", "semaphore", "queue"})
FINER = {"probe": "line", "line": "instruction"}

_COMPLETE = frozenset({RunStatus.FINISHED, RunStatus.DEADLOCK})
"""Runs whose end is the program's: every actor finished, or none could go on. Others were cut short."""

_What = tuple[Entry, tuple[str, int], frozenset[str]]
"""An access without its step and actor: what it touched, where, under which locks."""
_Profile = dict[_What, Access]
_Window = tuple[int, int]
"""A range of another actor's epochs, ``(first, end)``, ``end`` exclusive (``_OPEN``: to its last)."""
_Key = tuple[str, tuple[_What, ...], tuple[tuple[str, _Window], ...]]
"""A step that may be split: its actor, its accesses, and the windows of the others."""
_Merged = tuple[tuple[_What, ...], set[tuple[str, int]], set[tuple[str, tuple[tuple[str, _Window], ...]]]]
"""For one step's accesses: the first tuple of them seen, the places (actor, epoch) and the windows (actor, windows)
they were merged with."""
_OPEN = 1 << 62
_NO_CLOCK: dict[str, int] = {}  # shared, never changed
_Memo = dict[tuple[Entry, frozenset[str]], list[tuple[int, Access]]]
"""For one other actor: an access (its entry and locks) -> that actor's accesses that conflict with it unprotected."""
_STEP = itemgetter(0)
_CHOSEN = attrgetter("chosen")
_WHAT = itemgetter(slice(2, None))
_THING = itemgetter(0)
_NONE: frozenset[Entry] = frozenset()


@dataclass(frozen=True)
class SplitStep:
    """A step that must not be treated as atomic: ``first`` and ``second`` of one actor, ``other`` in between; or,
    with ``signal``, the operation that opened the step (``first`` is ``second``, the access after it)."""

    first: Access
    second: Access
    other: Access
    signal: str = ""

    def describe(self, granularity: str) -> str:
        """One line: what was touched, where, and what to do."""
        finer = FINER.get(granularity, "instruction")
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


RunPart = tuple[tuple[str, int], tuple[_What, ...], tuple[Access, ...], tuple[tuple[str, _Window], ...]]
"""What one shared step of a run adds to the check: its actor and epoch, what it accessed, its accesses, and the
windows of the other actors' epochs that ran concurrently with it (empty unless it accessed shared state twice)."""


def run_parts(run: RunResult) -> list[RunPart | SplitStep]:
    """What ``run``'s shared steps add to an :class:`AtomicityCheck`: a function of the run alone, so that the
    process that ran it can work it out and the one that checks merges it. Last, when the run shows one, a step
    split after the operation that opened it (:func:`_split_after_signal`)."""
    accesses = run.accesses
    if not accesses:
        return []
    decisions = run.decisions
    actors = list(map(_CHOSEN, decisions))
    shared, touched = _shared_accesses(accesses, len(actors))
    sync = _sync_of(run.step_footprints, len(actors))
    shape = _Shape(actors, decisions, sync, touched, run.status in _COMPLETE)
    opens, around = shape.opens, shape.around
    parts: list[RunPart | SplitStep] = []
    for step, (content, mine) in shared.items():
        actor = actors[step]
        windows = around(step, actor) if len(mine) >= 2 else ()
        parts.append(((actor, bisect_right(opens[actor], step)), content, mine, windows))
    signalled = _split_after_signal(actors, sync, run.step_footprints, shared)
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
        self._candidates: list[tuple[_Key, tuple[Access, ...], dict[str, _Window]]] = []
        self._profiles: dict[tuple[str, int], _Profile] = {}
        self._seen: dict[tuple[_What, ...], _Merged] = {}
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
                split = _split(mine, hits, windows[other])
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


_RELEASED = "lock-release"
"""What a lab lock's release writes (``lock-release``, ``<lock>@<actor>``): no synchronisation for the epochs (a
release there orders nothing), but for :func:`_split_after_signal` a write of the lock, which lets a waiter in."""


def _split_after_signal(
    actors: list[str],
    sync: list[frozenset[Entry]],
    footprints: Sequence[Footprint],
    shared: dict[int, tuple[tuple[_What, ...], tuple[Access, ...]]],
) -> SplitStep | None:
    """A step of this run that begins with an operation that lets another actor go on (a release, a set, a put, a
    count-down: a write of a synchronisation object) and then accesses shared state, and an access of another actor
    ordered after that operation but not after the actor's next one, which conflicts with it with no lock in
    common. The explorer cannot put that access between the operation and the step's own access, which threads
    can: the step must be split (a race between probes). A pair whose operations this run orders by a race the
    explorer reverses (two acquisitions of a semaphore) is reported too: a little more than it must.

    Happens-before is the one :meth:`_Shape._sync_order` works out, over the operations only, with a lab lock's
    release taken as the write of its lock it is. Steps with shared accesses and such an operation are few: most
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
    clocks: dict[int, dict[str, int]] = {}
    last: dict[str, int] = {}
    writer: dict[tuple[str, str], int] = {}
    readers: dict[tuple[str, str], list[int]] = {}
    synced: dict[str, list[int]] = {}
    for i in sorted(entries):
        actor = actors[i]
        before = last.get(actor)
        clock = dict(clocks[before]) if before is not None else {}
        joined: set[int] = set()
        for thing, key, mode in entries[i]:
            if (thing, key) in writer:
                joined.add(writer[(thing, key)])
            if mode == "w":
                joined.update(readers.get((thing, key), ()))
        for m in joined:
            for who, tick in clocks[m].items():
                if clock.get(who, -1) < tick:
                    clock[who] = tick
        for thing, key, mode in entries[i]:
            if mode == "w":
                writer[(thing, key)] = i
                readers.pop((thing, key), None)
            else:
                readers.setdefault((thing, key), []).append(i)
        clock[actor] = i
        clocks[i] = clock
        last[actor] = i
        synced.setdefault(actor, []).append(i)
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
                known = knowing[(other, actor)] = [clocks[k].get(actor, -1) for k in theirs]
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


def _sync_entries(footprint: Footprint) -> frozenset[Entry]:
    found = {entry for entry in footprint if entry[0] in _SYNC_KINDS}
    return frozenset(found) if found else _NONE


def _sync_of(footprints: Sequence[Footprint], steps: int) -> list[frozenset[Entry]]:
    """Each step's synchronisation entries. Most steps carry none, and most of a footprint is data: looking for a
    kind among its things without a Python loop finds that out, and only the few others are picked apart."""
    sync = [_NONE] * steps
    for i, footprint in enumerate(footprints[:steps]):
        if not _SYNC_KINDS.isdisjoint(map(_THING, footprint)):
            sync[i] = _sync_entries(footprint)
    return sync


def _shared_accesses(
    accesses: Sequence[Access], steps: int
) -> tuple[dict[int, tuple[tuple[_What, ...], tuple[Access, ...]]], set[int]]:
    """Each step's accesses that another actor could reach (what they touched, and the accesses), and the steps
    that touched any data at all.

    An object labelled as made by the accessing actor (``list#fast.3``) is private in the step that first touched
    it: nobody else can have a reference to it yet.
    """
    shared: dict[int, tuple[tuple[_What, ...], tuple[Access, ...]]] = {}
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
    shared: dict[int, tuple[tuple[_What, ...], tuple[Access, ...]]], labelled: list[tuple[int, _Done]]
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
    tuple[_What, ...],
    tuple[tuple[str, tuple[int, ...]], ...],
    dict[tuple[int, ...], tuple[tuple[_What, ...], tuple[bool, ...]]],
    KeysView[str],
]
"""What a step did, worked out once: the first equal tuple of its accesses (looking that up again, here or where it
is merged, compares by identity), each labelled object it touched and where, what it keeps without some, and the
labelled objects alone."""
_DONE: dict[tuple[_What, ...], _Done] = {}


def _done(content: tuple[_What, ...]) -> _Done:
    """Remember ``content`` as the tuple to hand out for equal ones, with the labelled objects it touched."""
    where: dict[str, list[int]] = {}
    for k, ((thing, _, _), _, _) in enumerate(content):
        if "#" in thing:
            where.setdefault(thing, []).append(k)
    if len(_DONE) >= _REMEMBERED:
        _DONE.clear()
    done = _DONE[content] = (content, tuple((thing, tuple(ks)) for thing, ks in where.items()), {}, where.keys())
    return done


def _canonical(content: tuple[_What, ...]) -> tuple[_What, ...]:
    """The remembered tuple equal to ``content``."""
    done = _DONE.get(content)
    return (done if done is not None else _done(content))[0]


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
    :class:`_Shape`). A hold parks a probe step that carries nothing and touches no data, and the actor cannot run
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


_Windows = dict[tuple[str, int], tuple[tuple[str, _Window], ...]]
"""An actor and how many of its synchronising steps led up to a step -> the step's windows."""
_REMEMBERED = 4096
_SKELETONS: dict[tuple[bool, tuple[str, ...], tuple[tuple[str, frozenset[Entry], int, bool], ...]], _Windows] = {}
"""The windows of runs that synchronised alike, by how they synchronised (see :class:`_Shape`). Forgets everything
past a bound, so that a long-lived process does not grow without end."""


class _Shape:
    """One run's epochs and windows, worked out from its synchronising steps alone.

    Only a synchronising step changes anything these depend on: a step's epoch is how many steps of its actor up to
    it opened one (see the module docstring), and every step between two synchronising steps of an actor has the same
    clock (its actor's last synchronising step's) and the same windows, so both are looked up, not walked to.

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
        self._clocks: dict[int, dict[str, int]] | None = None
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
            if len(_SKELETONS) >= _REMEMBERED:
                _SKELETONS.clear()
            windows = _SKELETONS[skeleton] = {}
        self._windows = windows

    def around(self, step: int, actor: str) -> tuple[tuple[str, _Window], ...]:
        """``(other actor, window)`` for every other actor whose window this run can tell, in name order."""
        stretch = bisect_right(self._synced[actor], step)  # how many synchronising steps of the actor led to it
        got = self._windows.get((actor, stretch))
        if got is None:
            got = self._windows[(actor, stretch)] = self._work_out(actor, stretch)
        return got

    def _work_out(self, actor: str, stretch: int) -> tuple[tuple[str, _Window], ...]:
        opens = self.opens
        clocks = self._clocks if self._clocks is not None else self._sync_order()
        synced = self._synced[actor]
        clock = clocks[synced[stretch - 1]] if stretch else _NO_CLOCK
        ahead = synced[stretch] if stretch < len(synced) else None
        found: list[tuple[str, _Window]] = []
        for other in self._names:
            if other == actor:
                continue
            before = clock.get(other, -1)
            first = bisect_right(opens[other], before) if before >= 0 else 0
            end = _OPEN
            if ahead is not None:  # the other's steps are ordered after ``ahead`` from the first whose clock knows it
                theirs = self._synced[other]
                position = bisect_left(self._known(other, actor), ahead)
                if position < len(theirs):
                    end = self._ends[theirs[position]]
            if end == _OPEN and not self._complete:
                continue
            found.append((other, (first, end)))
        found.sort()
        return tuple(found)

    def _known(self, other: str, actor: str) -> list[int]:
        """For each synchronising step of ``other``, the last step of ``actor`` it knows of (non-decreasing)."""
        known = self._seen.get((other, actor))
        if known is None:
            clocks = self._clocks if self._clocks is not None else self._sync_order()
            known = self._seen[(other, actor)] = [clocks[j].get(actor, -1) for j in self._synced[other]]
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

    def _sync_order(self) -> dict[int, dict[str, int]]:
        """Vector clocks of the operations that open the synchronising steps, over program order and
        synchronisation only.

        ``clocks[i][X]`` is the last step of actor X whose opening operation happens-before the one opening step
        ``i``. Every synchronisation entry of the lab's primitives is joined with the last earlier write of the same
        object (and a write with the reads since), which by transitivity covers every earlier conflicting step.
        """
        actors, sync = self._actors, self._sync
        clocks: dict[int, dict[str, int]] = {}
        self._clocks = clocks
        last: dict[str, int] = {}
        writer: dict[tuple[str, str], int] = {}
        readers: dict[tuple[str, str], list[int]] = {}
        keys: dict[str, set[str]] = {}
        for i in self._order:
            actor = actors[i]
            entries = sync[i]
            before = last.get(actor)
            clock = dict(clocks[before]) if before is not None else {}
            joined: set[int] = set()
            for thing, key, mode in entries:
                for part in _parts(keys, thing, key):
                    if part in writer:
                        joined.add(writer[part])
                    if mode == "w":
                        joined.update(readers.get(part, ()))
            for m in joined:
                for who, tick in clocks[m].items():
                    if clock.get(who, -1) < tick:
                        clock[who] = tick
            for thing, key, mode in entries:
                keys.setdefault(thing, set()).add(key)
                if mode == "w":
                    for part in _parts(keys, thing, key):
                        writer[part] = i
                        readers.pop(part, None)
                else:
                    readers.setdefault((thing, key), []).append(i)
            clock[actor] = i
            clocks[i] = clock
            last[actor] = i
        return clocks


def _parts(keys: dict[str, set[str]], thing: str, key: str) -> list[tuple[str, str]]:
    """The (thing, key) pairs an entry overlaps: itself, or every key of the thing seen so far for ``*``."""
    known = keys.get(thing, set())
    if key == ANY_KEY:
        return [(thing, other) for other in sorted(known)] + [(thing, key)]
    return [(thing, key), (thing, ANY_KEY)] if ANY_KEY in known else [(thing, key)]


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


def _split(
    mine: Sequence[Access], exposed: list[tuple[int, list[tuple[int, Access]]]], window: _Window
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
        else:
            return SplitStep(hit_first[0], mine[position], other)
    return None


def _short(where: tuple[str, int]) -> str:
    path, line = where
    return f"{path.rsplit('/', 1)[-1]}:{line}"
