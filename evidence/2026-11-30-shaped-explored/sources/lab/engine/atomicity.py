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

**Cost.** Runs share most of their steps, so a step's accesses are merged into its epoch only the first time that
epoch is seen doing exactly them, and the windows of every step between two synchronisations of one actor, which
are equal, are worked out once per run.

Limits (it is a check on the steps that ran, not a proof): a step whose accesses depend on data another actor
writes may be judged by accesses it would not make in the interleaving found; epochs are matched by number, so two
paths through an actor that synchronise a different number of times are compared epoch by epoch; a query of a
primitive in the middle of a step (``is_set()``, ``locked()``, ``qsize()``) is taken as if it opened the step (the
run in which the query comes first is judged too).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import groupby
from operator import itemgetter

from lab.engine.footprint import ANY_KEY, Entry, Footprint, describe_entry
from lab.engine.run import Access, Decision, RunResult, RunStatus

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
_OPEN = 1 << 62
_NO_CLOCK: dict[str, int] = {}  # shared, never changed
_Memo = dict[tuple[Entry, frozenset[str]], list[tuple[int, Access]]]
"""For one other actor: an access (its entry and locks) -> that actor's accesses that conflict with it unprotected."""
_STEP = itemgetter(0)
_WHAT = itemgetter(slice(2, None))
_NONE: frozenset[Entry] = frozenset()


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


RunPart = tuple[tuple[str, int], tuple[_What, ...], tuple[Access, ...], tuple[tuple[str, _Window], ...]]
"""What one shared step of a run adds to the check: its actor and epoch, what it accessed, its accesses, and the
windows of the other actors' epochs that ran concurrently with it (empty unless it accessed shared state twice)."""


def run_parts(run: RunResult) -> list[RunPart]:
    """What ``run``'s shared steps add to an :class:`AtomicityCheck`: a function of the run alone, so that the
    process that ran it can work it out and the one that checks merges it."""
    if not run.accesses:
        return []
    actors = [decision.chosen for decision in run.decisions]
    footprints = run.step_footprints
    sync = [_sync_entries(footprints[i]) if i < len(footprints) else _NONE for i in range(len(actors))]
    shared, touched = _shared_accesses(run.accesses, len(actors))
    epochs, ends = _epochs(actors, run.decisions, sync, touched)
    windows_of = _Windows(actors, sync, epochs, ends, complete=run.status in _COMPLETE)
    parts: list[RunPart] = []
    for step, mine in shared.items():
        content: tuple[_What, ...] = tuple(map(_WHAT, mine))
        windows = windows_of.around(step) if len(mine) >= 2 else ()
        parts.append(((actors[step], epochs[step]), content, tuple(mine), windows))
    return parts


class AtomicityCheck:
    """Collects, over every run of an exploration, the steps that touch shared state more than once (each with the
    epochs of every other actor that ran concurrently with it) and what each actor touched in each of its epochs,
    then looks for a step another actor can split (see the module docstring).
    """

    def __init__(self) -> None:
        self._candidates: dict[_Key, tuple[tuple[Access, ...], dict[str, _Window]]] = {}
        self._profiles: dict[tuple[str, int], _Profile] = {}
        self._merged: set[tuple[tuple[str, int], tuple[_What, ...]]] = set()
        self._index: dict[str, _Parts] | None = None

    def add_run(self, run: RunResult) -> None:
        """Take in one run's accesses."""
        self.merge(run_parts(run))

    def merge(self, parts: Sequence[RunPart]) -> None:
        """Take in what one run's shared steps add (:func:`run_parts`, which a worker process may have worked out)."""
        if not parts:
            return
        self._index = None
        profiles, merged, candidates = self._profiles, self._merged, self._candidates
        for place, content, mine, windows in parts:
            if (place, content) not in merged:  # the same accesses in the same epoch, as in an earlier run
                merged.add((place, content))
                profile = profiles.setdefault(place, {})
                for what, access in zip(content, mine, strict=True):
                    profile.setdefault(what, access)
            if windows and (place[0], content, windows) not in candidates:
                candidates[(place[0], content, windows)] = (mine, dict(windows))

    def finding(self) -> SplitStep | None:
        """The first split-able step found, in a stable order, or ``None``."""
        index = self._by_part()
        found: list[tuple[str, str, SplitStep]] = []  # put in a stable order only when there is something to order
        memos: dict[str, _Memo] = {}  # candidates share most accesses: each is looked up once per actor and window
        for key, (mine, windows) in self._candidates.items():
            for other in sorted(windows):
                theirs = index.get(other)
                memo = memos.setdefault(other, {})
                split = _split(mine, theirs, windows[other], memo) if theirs is not None else None
                if split is not None:
                    found.append((_stable(key), other, split))
                    break
        return min(found, key=lambda item: item[:2])[2] if found else None

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


def _sync_entries(footprint: Footprint) -> frozenset[Entry]:
    found = {entry for entry in footprint if entry[0] in _SYNC_KINDS}
    return frozenset(found) if found else _NONE


def _shared_accesses(accesses: Sequence[Access], steps: int) -> tuple[dict[int, list[Access]], set[int]]:
    """Each step's accesses that another actor could reach, and the steps that touched any data at all.

    An object labelled as made by the accessing actor (``list#fast.3``) is private in the step that first touched
    it: nobody else can have a reference to it yet.
    """
    by_step: dict[int, list[Access]] = {}
    for step, group in groupby(accesses, _STEP):
        if step < steps:
            by_step.setdefault(step, []).extend(group)
    touched = set(by_step)
    first_seen: dict[str, int] = {}
    for step in sorted(by_step):
        mine = by_step[step]
        private: set[str] = set()
        for access in [a for a in mine if "#" in a[2][0]]:
            thing = access[2][0]
            if first_seen.setdefault(thing, step) == step and f"#{access[1]}." in thing:
                private.add(thing)
        if private:
            mine = [a for a in mine if a[2][0] not in private]
            if mine:
                by_step[step] = mine
            else:
                del by_step[step]
    return by_step, touched


def _epochs(
    actors: Sequence[str], decisions: Sequence[Decision], sync: Sequence[frozenset[Entry]], touched: set[int]
) -> tuple[list[int], list[int]]:
    """Each step's sync epoch within its actor (see the module docstring), and the first epoch none of whose data
    the step precedes: its own, or the next one when data of its epoch ran before it.

    The second is where a window ends that the step is the first to be ordered after. A step that does not open an
    epoch may be the first of its actor ordered after something, and data of its epoch may have run before it (the
    actor touched data, then was held at a probe, which synchronises nothing until it parks): that data is not
    ordered by what the step waited for.
    """
    current: dict[str, int] = {}
    previous: dict[str, int] = {}
    dirty: dict[str, bool] = {}  # the actor's current epoch has touched data
    epochs: list[int] = []
    ends: list[int] = []
    for i, actor in enumerate(actors):
        epoch = current.get(actor, 0)
        if sync[i]:
            before = previous.get(actor)
            if before is None or not _same_operation(before, i, actor, decisions, sync, touched):
                epoch = current[actor] = epoch + 1
                dirty[actor] = False
        epochs.append(epoch)
        ends.append(epoch + 1 if dirty.get(actor, False) else epoch)
        if i in touched:
            dirty[actor] = True
        previous[actor] = i
    return epochs, ends


_HOLDS = frozenset({"latch", "event"})
"""What a probe hold waits for, and what the step that resumes the held actor carries."""


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
    :func:`_epochs`). A hold parks a probe step that carries nothing and touches no data, and the actor cannot run
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


def _sync_order(actors: Sequence[str], sync: Sequence[frozenset[Entry]]) -> list[dict[str, int]]:
    """Vector clocks of the operations that open each step, over program order and synchronisation only.

    ``clocks[i][X]`` is the last step of actor X whose opening operation happens-before the one opening step ``i``,
    for every actor X other than step ``i``'s own (a step that synchronises nothing shares its actor's last clock,
    uncopied, and nothing reads a clock's entry for its own actor).
    Every synchronisation entry of the lab's primitives is joined with the last earlier write of the same object
    (and a write with the reads since), which by transitivity covers every earlier conflicting step.
    """
    clocks: list[dict[str, int]] = []
    last: dict[str, int] = {}
    writer: dict[tuple[str, str], int] = {}
    readers: dict[tuple[str, str], list[int]] = {}
    keys: dict[str, set[str]] = {}
    for i, actor in enumerate(actors):
        before = last.get(actor)
        entries = sync[i]
        if not entries:  # ordered by nothing new: share the actor's clock (only another actor's entry is ever read)
            clocks.append(clocks[before] if before is not None else _NO_CLOCK)
            last[actor] = i
            continue
        clock = dict(clocks[before]) if before is not None else {}
        if entries:
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
        clocks.append(clock)
        last[actor] = i
    return clocks


def _parts(keys: dict[str, set[str]], thing: str, key: str) -> list[tuple[str, str]]:
    """The (thing, key) pairs an entry overlaps: itself, or every key of the thing seen so far for ``*``."""
    known = keys.get(thing, set())
    if key == ANY_KEY:
        return [(thing, other) for other in sorted(known)] + [(thing, key)]
    return [(thing, key), (thing, ANY_KEY)] if ANY_KEY in known else [(thing, key)]


class _Windows:
    """The epochs of each other actor whose data may run concurrently with a step's data, in one run.

    They begin with the epoch of the last step of the other actor whose opening operation happens-before the step's
    (its own data, after that operation, is not ordered), and end before the first step of the other actor that the
    operation opening the actor's next synchronising step happens-before (the step's data comes before that
    operation, not after the step's own). A run cut short cannot tell where a window ends that reaches past the cut.

    Every step between two synchronising steps of an actor has the same windows (its clock is the earlier one's,
    its end the later one's), so they are worked out once per such stretch.
    """

    def __init__(
        self,
        actors: Sequence[str],
        sync: Sequence[frozenset[Entry]],
        epochs: list[int],
        ends: list[int],
        *,
        complete: bool,
    ) -> None:
        self._actors = actors
        self._epochs = epochs
        self._ends = ends
        self._complete = complete
        self._clocks = _sync_order(actors, sync)
        self._steps_of: dict[str, list[int]] = {}
        self._stretch: list[int] = []  # step -> its actor's last synchronising step so far (< 0: none yet)
        self._next_sync: dict[int, int] = {}  # a stretch -> the synchronising step that ends it
        last_sync: dict[str, int] = {}
        for i, actor in enumerate(actors):
            if actor not in self._steps_of:
                self._steps_of[actor] = []
                last_sync[actor] = -len(self._steps_of)
            self._steps_of[actor].append(i)
            if sync[i]:
                self._next_sync[last_sync[actor]] = i
                last_sync[actor] = i
            self._stretch.append(last_sync[actor])
        self._cache: dict[int, tuple[tuple[str, _Window], ...]] = {}
        self._seen: dict[tuple[str, str], list[int]] = {}

    def around(self, step: int) -> tuple[tuple[str, _Window], ...]:
        """``(other actor, window)`` for every other actor whose window this run can tell, in name order."""
        stretch = self._stretch[step]
        got = self._cache.get(stretch)
        if got is None:
            got = self._cache[stretch] = self._work_out(step, stretch)
        return got

    def _work_out(self, step: int, stretch: int) -> tuple[tuple[str, _Window], ...]:
        actor = self._actors[step]
        clock = self._clocks[step]
        epochs = self._epochs
        ahead = self._next_sync.get(stretch)
        found: list[tuple[str, _Window]] = []
        for other, steps in self._steps_of.items():
            if other == actor:
                continue
            before = clock.get(other, -1)
            first = epochs[before] if before >= 0 else 0
            end = _OPEN
            if ahead is not None:  # the other's steps are ordered after ``ahead`` from the first whose clock knows it
                position = bisect_left(self._known(other, actor), ahead)
                if position < len(steps):
                    end = self._ends[steps[position]]
            if end == _OPEN and not self._complete:
                continue
            found.append((other, (first, end)))
        found.sort()
        return tuple(found)

    def _known(self, other: str, actor: str) -> list[int]:
        """For each step of ``other``, the last step of ``actor`` it knows of (non-decreasing: clocks only grow)."""
        known = self._seen.get((other, actor))
        if known is None:
            clocks = self._clocks
            known = self._seen[(other, actor)] = [clocks[j].get(actor, -1) for j in self._steps_of[other]]
        return known


def _split(mine: Sequence[Access], theirs: _Parts, window: _Window, memo: _Memo) -> SplitStep | None:
    """Two of ``mine`` that accesses of the other actor, in epochs inside ``window``, conflict with unprotected."""
    first, end = window
    hit_first: tuple[Access, Access] | None = None
    for access in mine:
        asked = (access.entry, access.locks)
        unprotected = memo.get(asked)
        if unprotected is None:  # the other's conflicting accesses with no lock in common, in a stable order
            locks = access.locks
            unprotected = memo[asked] = [
                (epoch, b) for found in theirs.conflicting(access.entry) for epoch, b in found if not (locks & b.locks)
            ]
        other = next((b for epoch, b in unprotected if first <= epoch < end), None)
        if other is None:
            continue
        if hit_first is None:
            hit_first = (access, other)
        else:
            return SplitStep(hit_first[0], access, other)
    return None


def _short(where: tuple[str, int]) -> str:
    path, line = where
    return f"{path.rsplit('/', 1)[-1]}:{line}"
