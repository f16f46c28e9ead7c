"""Races of one run, and the plans that reverse them: the step of optimal DPOR that follows every run.

After a run, every *race* -- two conflicting steps of different actors, the second ordered after the first by
nothing but their conflict -- is reversed by planning, at the decision before the first, the sequence of steps
that leads to the second one first: the steps between them that do not happen after the first, then the second
(Abdulla, Aronis, Jonsson and Sagonas, "Optimal Dynamic Partial Order Reduction", POPL 2014). The plan goes into
that decision's wakeup tree (:mod:`lab.engine.search._tree`), unless an actor asleep there already covers it.

Races are found incrementally: an index of the latest access to each piece of state by each actor
(:class:`lab.engine.search._conflicts.History`) gives each step the last conflicting step of every other actor
without scanning the run, and from those the step's vector clock (the clocks
:class:`lab.engine.search._happens_before.HappensBefore` gives, read off the same index rather than kept in a
second one: one index per step of every explored run). Only the steps this run added are asked about; the
prefix it replayed keeps the clocks of the run before, unless a footprint there came out different.

A race between two critical sections of one lock cannot be reversed where it lies (the second actor cannot take
the lock while the first holds it): the order to reverse is the two acquisitions, so the plan is made at the step
where the holder took the lock (:meth:`Races.plan_reversal`).
"""

from __future__ import annotations

from lab.engine.core._footprint import Footprint
from lab.engine.core._run import RunResult
from lab.engine.search._conflicts import History, shared_things
from lab.engine.search._tree import NOTHING, Conflict, Event, Node, insert, weak_initial


def record_executed(nodes: list[Node], first_new: int, run: RunResult) -> None:
    """Take every step's footprint from this run (the prefix replayed the same steps; if a footprint differs
    after all, the happens-before clocks from there on are recomputed rather than trusted)."""
    stale = False
    for k in range(min(len(nodes), len(run.step_footprints))):
        footprint = run.step_footprints[k]
        node = nodes[k]
        if k < first_new and node.executed == footprint and not stale:
            continue
        stale = stale or k < first_new
        node.executed = footprint
        node.explored[node.chosen] = footprint
        if node.wakeup and node.wakeup[0].actor == node.chosen:
            node.wakeup[0].footprint = footprint  # what the branch being explored really touched
        if stale:
            node.clock = None


class Races:
    """Finds the races of a run on the search's path and plans their reversals, with one explorer's memo of
    footprint conflicts. Clocks list the actors in ``actors``' order."""

    def __init__(self, actors: tuple[str, ...], conflict: Conflict) -> None:
        self._actors = actors
        self._slot = {name: i for i, name in enumerate(actors)}
        self._conflict = conflict
        # a worker's subtree ends at decision ``floor``: the races it reverses at or above it are planned by the
        # search that owns those decisions, so they are noted in ``outside`` (in order) instead of planned here
        self.floor = -1
        self.outside: list[tuple[int, list[Event]]] | None = None

    def add_races(self, nodes: list[Node], first_new: int) -> None:
        """Happens-before by vector clocks, and every race into each new step, found incrementally: an index of the
        latest access to each piece of state by each actor gives, per step, the last conflicting step of every other
        actor without scanning the run. Then the races of steps blocked actors never took. Both keep only what can
        order steps of different actors (:func:`shared_things`): the rest of a footprint races with nothing."""
        steps: list[Event] = []
        for node in nodes:
            if not node.chosen:
                break
            steps.append((node.chosen, node.step()))
        end = len(steps)
        untaken = end >= first_new and end > 0
        if untaken:
            last = nodes[end - 1]
            relevant = shared_things(
                steps + [(actor, fp) for actor, fp in last.pending.items() if actor != last.chosen]
            )
        else:
            relevant = shared_things(steps)
        history = History(relevant)
        slot_of = self._slot
        n = len(slot_of)
        own: list[list[int] | None] = [None] * n  # per actor: the clock of its latest step
        for k, (actor, taken) in enumerate(steps):
            node = nodes[k]
            slot = slot_of[actor]
            known = node.clock if k < first_new else None  # a replayed step keeps its clock, unless it was stale
            before = own[slot]
            latest = history.step(k, actor, taken, ask=known is None) if taken else None
            if known is None:
                # the step's vector clock (what HappensBefore gives, from the index the races need anyway): its
                # actor's previous step joined with the latest conflicting step of each other actor, which covers
                # every earlier conflicting step of that actor (program order), so nothing else is needed
                clock = before[:] if before is not None else [-1] * n
                if latest:
                    for j in latest.values():
                        other = nodes[j].clock
                        if other is not None and clock[slot_of[nodes[j].chosen]] < j:
                            for i in range(n):
                                if other[i] > clock[i]:
                                    clock[i] = other[i]
                clock[slot] = k
                node.clock = known = clock
            own[slot] = known
            if latest and k >= first_new:
                self._races_into(nodes, k, latest, before)
        if untaken:
            self._races_of_untaken(nodes, end, own, history)

    def _races_of_untaken(self, nodes: list[Node], end: int, own: list[list[int] | None], history: History) -> None:
        """An actor that never ran again (blocked at the end, a deadlock) still has a next step: what it announced.
        Race it against the steps taken, as if it came last -- those taken while it could run. A step taken while it
        was parked is no race: nothing woke it before the run's end, and what the reversal would put before that
        step (the steps after it that do not depend on it) would not wake it either, so the plan could never take
        the parked actor's step, and its run would end with every runnable actor asleep: a redundant execution
        (the fuzzer's: a reader of a Barrier's broken flag after another actor began waiting on it alone)."""
        final = nodes[end - 1]
        for actor, upcoming in final.pending.items():
            if actor == final.chosen or not upcoming:
                continue
            latest = history.latest_conflicting(upcoming, actor)
            self._races_into(nodes, end, latest, own[self._slot[actor]], untaken=(actor, upcoming))

    def _races_into(
        self,
        nodes: list[Node],
        k: int,
        latest: dict[str, int],
        before: list[int] | None,
        untaken: Event | None = None,
    ) -> None:
        """Reverse every race into step ``k``: for each other actor, its last step ``j`` that conflicts with ``k``,
        unless ``j`` already happens before ``k`` through another way -- the actor's own previous step (whose clock
        is ``before``), or the last conflicting step of a third actor. Looking at the latest conflicting step alone
        would miss ``invoice`` reading a price that ``price`` wrote from the rate ``rate`` wrote."""
        second: Event = untaken if untaken is not None else (nodes[k].chosen, nodes[k].step())
        slot = self._slot
        for who, j in latest.items():
            if untaken is not None and untaken[0] not in nodes[j].enabled:
                continue  # blocked already at j, and nothing since woke it: its step cannot come before j's
            mine = slot[who]
            reached = before[mine] if before is not None else -1
            for other, i in latest.items():
                if other != who:
                    clock = nodes[i].clock
                    if clock is not None and clock[mine] > reached:
                        reached = clock[mine]
            if reached >= j:
                continue  # ordered through a step in between: not a race of its own
            self.plan_reversal(nodes, j, second, k)

    def plan_reversal(self, nodes: list[Node], j: int, second: Event, at: int, depth: int = 0) -> None:
        """Plan, at node ``j``, the steps that reverse the race between step ``j`` and ``second`` (at ``at``): the
        steps after ``j`` that do not happen after it, then ``second`` -- unless a sleeping actor already covers
        that sequence, or the wakeup tree there already plans it.

        When that sequence would take a lock that is held at ``j`` (the race lies between two critical sections of
        one lock), it cannot run there: the order to reverse is the two acquisitions, so the plan is made at the
        step where the holder took the lock instead."""
        node = nodes[j]
        first = node.chosen
        slot = self._slot[first]
        indexed = []  # the steps after j that do not happen after it (inline: this runs for every race)
        sequence: list[Event] = []
        for i in range(j + 1, min(at, len(nodes))):
            step = nodes[i]
            chosen = step.chosen
            if chosen and (step.clock is None or step.clock[slot] < j):
                indexed.append(i)
                executed = step.executed
                sequence.append((chosen, executed if executed is not None else step.pending.get(chosen, NOTHING)))
        sequence.append(second)
        if node.held and depth < 8:
            for position, (actor, footprint) in enumerate(sequence):
                taken = _locks_taken(footprint) & node.held.keys()
                for lock in sorted(taken):
                    holder = node.held[lock]
                    if holder == actor:
                        continue
                    acquired = _acquisition(nodes, j, holder, lock)
                    if acquired is not None:
                        where = indexed[position] if position < len(indexed) else at
                        self.plan_reversal(nodes, acquired, (actor, footprint), where, depth + 1)
                    return
        asleep = node.asleep()  # most have nothing asleep
        if asleep is not None and any(weak_initial(sequence, q, fp, self._conflict) for q, fp in asleep.items()):
            return  # an equivalent order begins with a sleeping actor: explored already
        self.plan(nodes, j, sequence)

    def plan(self, nodes: list[Node], j: int, sequence: list[Event]) -> None:
        """Plan ``sequence`` in the wakeup tree of decision ``j``, or, above a worker's subtree, note it for the
        search that owns ``j``."""
        if j <= self.floor and self.outside is not None:
            self.outside.append((j, sequence))
        else:
            insert(nodes[j].wakeup, sequence, self._conflict)


def _acquisition(nodes: list[Node], j: int, holder: str, lock: str) -> int | None:
    """The step, at or before ``j``, where ``holder`` took ``lock``: the latest of its steps that writes the lock
    while the holder did not hold it yet. A step of the holder's that writes the lock while holding it (its
    release, a re-entrant acquisition) is not it: planning there would plan the other actor where the lock is
    still held, a plan it cannot take, and the reversal would be lost."""
    for i in range(j, -1, -1):
        node = nodes[i]
        if node.chosen == holder and node.held.get(lock) != holder and ("lock", lock, "w") in node.step():
            return i
    return None


def _locks_taken(footprint: Footprint) -> set[str]:
    """The locks a step takes, waiting while another actor holds them: a blocking acquisition (or one that waited).

    Not a query (``locked()``, a read) nor an attempt that may fail (``acquire(blocking=False)``, or with a timeout,
    marked ``lock-attempt``): those run while another actor holds the lock, and what they see there is an outcome of
    its own, so the race is reversed where it is, not at the holder's acquisition."""
    attempts = [key for kind, key, _mode in footprint if kind == "lock-attempt"]
    return {
        key
        for kind, key, mode in footprint
        if kind == "lock" and mode == "w" and not key.endswith(" (release)") and key not in attempts
    }
