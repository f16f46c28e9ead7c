"""Systematic exploration: run the same actors under every schedule that matters, one fresh run per schedule.

This is stateless model checking: nothing is snapshotted; each schedule is a fresh run from setup, steered by a
policy that follows a prefix of earlier choices and then picks defaults. After each run the explorer decides
which earlier choice to revisit, depth first, until no choice is left.

Two reductions keep the count small without losing an outcome (given honest footprints, see
:mod:`lab.engine.footprint`):

- **Optimal dynamic partial-order reduction** (Abdulla, Aronis, Jonsson and Sagonas, "Optimal Dynamic Partial Order
  Reduction", POPL 2014): after each run, every *race* -- two conflicting steps of different actors, the second
  ordered after the first by nothing but their conflict -- is reversed by planning, at the point before the first,
  the sequence of steps that leads to the second one first (the steps that do not depend on the first, then the
  second). Plans are kept in a *wakeup tree* per point, so that a sequence already planned, or already explored,
  is never run again: each run explores one new class of equivalent interleavings (Mazurkiewicz traces).
- **Sleep sets** (Godefroid): an actor whose next step was fully explored from a point, and which commutes with
  the step taken, is not tried again below it. With wakeup trees no run should end with every runnable actor
  asleep; a run that does (footprints are recorded, not known in advance) is cut short and counted as redundant.

An optional **preemption bound** (as in CHESS) skips schedules that switch away from a runnable actor more than K
times; a bound that skipped anything makes the result INCOMPLETE, never a pass. So does the schedule budget.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from lab.engine.footprint import ANY_KEY, Footprint, conflict
from lab.engine.schedule import schedule_string
from lab.engine.scheduler import DecisionPoint, RunResult
from lab.errors import UsageError

DEFAULT_MAX_SCHEDULES = 20_000


def resolve_jobs(jobs: int | None) -> int:
    """How many processes an exploration may use: ``None`` means one per core; fewer than one is a mistake."""
    if jobs is None:
        return max(os.cpu_count() or 1, 1)
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise UsageError(f"jobs must be a whole number of processes, at least 1 (got {jobs!r})")
    return jobs


class _Pruned(Exception):
    """Raised by the guiding policy to cut a run short: every runnable actor is asleep, or the bound is reached."""


class NondeterminismError(Exception):
    """Raised when re-running a prefix does not offer the same choices: the code under test is not deterministic."""


@dataclass
class _Branch:
    """One planned step in a wakeup tree: an actor, what its step touched when the plan was made, what follows."""

    actor: str
    footprint: Footprint
    children: list[_Branch] = field(default_factory=list)


Event = tuple[str, Footprint]  # a step: its actor and what it touched


@dataclass
class _Node:
    enabled: tuple[str, ...]
    current: str | None
    pending: dict[str, Footprint]
    chosen: str
    preemptions: int
    sleep: dict[str, Footprint]
    wakeup: list[_Branch] = field(default_factory=list)  # planned branches here, the one being explored first
    follow: list[_Branch] | None = None  # the plan handed to the next node (the chosen branch's children)
    held: dict[str, str] = field(default_factory=dict)  # lock -> holding actor, before the step taken here
    backtrack: set[str] = field(default_factory=set)
    explored: dict[str, Footprint] = field(default_factory=dict)  # choice -> what its step touched
    done: set[str] = field(default_factory=set)
    executed: Footprint | None = None  # what the step taken here was seen to touch (set after the run)
    clock: dict[str, int] | None = None  # vector clock of the step taken here (set by the race analysis)


@dataclass(frozen=True)
class Execution:
    """One explored run: its schedule string, the run itself, and what the caller made of it."""

    schedule: str
    preemptions: int
    run: RunResult
    key: str
    payload: object


@dataclass
class Exploration:
    """What an exploration found. ``executions`` holds one (the shortest) run per distinct outcome key."""

    schedules: int = 0
    pruned: int = 0
    bounded: bool = False
    budget_hit: bool = False
    naive_bound: int = 0
    counts: dict[str, int] = field(default_factory=dict)
    executions: dict[str, Execution] = field(default_factory=dict)

    @property
    def complete(self) -> bool:
        """True when every schedule that matters was run (no bound or budget cut the search)."""
        return not (self.bounded or self.budget_hit)


RunOnce = Callable[[object], tuple[RunResult, str, object]]


class Explorer:
    """Explores the schedules of a deterministic run.

    ``run_once(policy)`` must build a fresh world, run it under ``policy`` and return the run, an outcome key (a
    string: equal keys mean the same outcome) and any payload the caller wants kept with the shortest run per key.
    """

    def __init__(
        self,
        run_once: RunOnce,
        actors: Sequence[str],
        *,
        reduction: bool = True,
        preemption_bound: int | None = None,
        max_schedules: int = DEFAULT_MAX_SCHEDULES,
        progress: Callable[[Exploration], None] | None = None,
        jobs: int | None = 1,
    ) -> None:
        self._run_once = run_once
        self._jobs = resolve_jobs(jobs)
        self._actors = tuple(actors)
        self._order = {name: i for i, name in enumerate(actors)}
        self._reduction = reduction
        self._bound = preemption_bound
        self._max = max_schedules
        self._progress = progress
        self._conflict = lru_cache(maxsize=65_536)(conflict)

    def explore(self) -> Exploration:
        """Run every schedule that matters (or until the budget) and tally the outcomes."""
        found = Exploration()
        nodes: list[_Node] = []
        while True:
            policy = _Guide(self, nodes, found)
            run, key, payload = self._run_once(policy)
            if run.status == "DIVERGED" and not policy.pruned:
                raise NondeterminismError(run.problem)
            if policy.pruned:
                found.pruned += 1
            else:
                found.schedules += 1
                self._tally(found, run, key, payload, policy.preemptions)
            if self._reduction:
                self._record_executed(nodes, policy.first_new, run)
                self._add_races(nodes, policy.first_new)
            if self._progress is not None:
                self._progress(found)
            if found.schedules + found.pruned >= self._max:
                found.budget_hit = self._next_branch(nodes, found, dry_run=True)
                return found
            if not self._next_branch(nodes, found):
                return found

    # -- one run -------------------------------------------------------------------------------------------------

    def _tally(self, found: Exploration, run: RunResult, key: str, payload: object, preemptions: int) -> None:
        found.counts[key] = found.counts.get(key, 0) + 1
        if not found.naive_bound:
            found.naive_bound = _multinomial(run)
        schedule = schedule_string(run.decisions, self._actors)
        best = found.executions.get(key)
        if best is None or (preemptions, len(schedule)) < (best.preemptions, len(best.schedule)):
            found.executions[key] = Execution(schedule, preemptions, run, key, payload)

    def new_node(self, point: DecisionPoint, parent: _Node | None) -> _Node:
        """The node for a decision reached for the first time, with its sleep set."""
        pending = point.pending()
        sleep: dict[str, Footprint] = {}
        if self._reduction and parent is not None:
            taken = point.last_step()  # the parent's step, which just ran
            parent.executed = taken
            asleep = {**parent.sleep, **{q: fp for q, fp in parent.explored.items() if q != parent.chosen}}
            sleep = {q: fp for q, fp in asleep.items() if not self._conflict(fp, taken)}
        preemptions = 0
        if parent is not None:
            preemptions = parent.preemptions + self._is_preemption(parent, parent.chosen)
        wakeup = parent.follow if parent is not None and parent.follow is not None else []
        node = _Node(point.runnable, point.current, pending, "", preemptions, sleep, wakeup)
        if self._reduction:
            node.held = point.held()
        return node

    def default_choice(self, node: _Node, found: Exploration) -> str:
        """Follow the plan handed down from the parent (a wakeup sequence) while there is one; otherwise keep the
        current actor if it may run, else the first awake one. Raise _Pruned when none may."""
        if self._reduction:
            branch = self._next_planned(node, found)
            if branch is not None:
                node.chosen = branch.actor
                node.follow = branch.children
                return branch.actor
        awake = [a for a in node.enabled if a not in node.sleep]
        if not awake:
            raise _Pruned("every runnable actor is asleep")
        choice = node.current if node.current in awake else awake[0]
        if self._bound is not None and node.preemptions + self._is_preemption(node, choice) > self._bound:
            raise _Pruned("preemption bound")
        node.chosen = choice
        node.done.add(choice)
        if self._reduction:
            node.wakeup = [_Branch(choice, frozenset())]
            node.follow = node.wakeup[0].children
        else:
            node.backtrack = set(node.enabled)
        return choice

    def _next_planned(self, node: _Node, found: Exploration) -> _Branch | None:
        """The first planned branch at ``node`` that can be taken: enabled, awake, within the preemption bound.
        A plan whose actor cannot run there (the plan was made from footprints of another run) is dropped."""
        while node.wakeup:
            branch = node.wakeup[0]
            if branch.actor not in node.enabled or branch.actor in node.sleep or branch.actor in node.explored:
                node.wakeup.pop(0)
                continue
            if self._bound is not None and node.preemptions + self._is_preemption(node, branch.actor) > self._bound:
                node.wakeup.pop(0)
                found.bounded = True
                continue
            return branch
        return None

    def _is_preemption(self, node: _Node, choice: str) -> int:
        return int(node.current is not None and node.current in node.enabled and choice != node.current)

    # -- choosing what to revisit --------------------------------------------------------------------------------

    def _next_branch(self, nodes: list[_Node], found: Exploration, *, dry_run: bool = False) -> bool:
        if self._reduction:
            return self._next_planned_branch(nodes, found, dry_run=dry_run)
        for depth in range(len(nodes) - 1, -1, -1):
            node = nodes[depth]
            options = sorted(node.backtrack - node.done - node.sleep.keys(), key=self._order.__getitem__)
            for option in options:
                if self._bound is not None and node.preemptions + self._is_preemption(node, option) > self._bound:
                    node.done.add(option)
                    found.bounded = True
                    continue
                if dry_run:
                    return True
                node.chosen = option
                node.done.add(option)
                node.clock = None
                del nodes[depth + 1 :]
                return True
        return False

    def _next_planned_branch(self, nodes: list[_Node], found: Exploration, *, dry_run: bool) -> bool:
        """Depth first: the deepest point whose wakeup tree still plans a branch after the one just explored."""
        for depth in range(len(nodes) - 1, -1, -1):
            node = nodes[depth]
            if dry_run:  # only asking whether anything is left (the budget ran out): change nothing
                if any(branch.actor != node.chosen for branch in node.wakeup):
                    return True
                continue
            if node.wakeup and node.wakeup[0].actor == node.chosen:
                node.wakeup.pop(0)  # its whole subtree is explored: it sleeps for the branches after it
            branch = self._next_planned(node, found)
            if branch is None:
                continue
            node.chosen = branch.actor
            node.follow = branch.children
            node.clock = None
            node.executed = None
            del nodes[depth + 1 :]
            return True
        return False

    def _record_executed(self, nodes: list[_Node], first_new: int, run: RunResult) -> None:
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

    def _step(self, node: _Node) -> Footprint:
        if node.executed is not None:
            return node.executed
        return node.pending.get(node.chosen, frozenset())

    def _add_races(self, nodes: list[_Node], first_new: int) -> None:
        """Happens-before by vector clocks, and every race into each new step, found incrementally: an index of the
        latest access to each piece of state by each actor gives, per step, the last conflicting step of every other
        actor without scanning the run. Then the races of steps blocked actors never took."""
        last_clock: dict[str, dict[str, int]] = {}
        history = _History()
        end = 0
        for k, node in enumerate(nodes):
            if not node.chosen:
                break
            end = k + 1
            taken = self._step(node)
            actor = node.chosen
            if taken and (node.clock is None or k >= first_new):
                latest = history.latest_conflicting(taken, actor)
                clock = dict(last_clock.get(actor, {}))
                for j in latest.values():
                    earlier = nodes[j].clock or {}
                    for who, tick in earlier.items():
                        if clock.get(who, -1) < tick:
                            clock[who] = tick
                clock[actor] = k
                node.clock = clock
                if k >= first_new:
                    self._races_into(nodes, k, latest, last_clock.get(actor, {}))
            elif node.clock is None:
                clock = dict(last_clock.get(actor, {}))
                clock[actor] = k
                node.clock = clock
            last_clock[actor] = node.clock
            if taken:
                history.add(k, actor, taken)
        if end and end >= first_new:
            self._races_of_untaken(nodes, end, last_clock, history)

    def _races_of_untaken(
        self, nodes: list[_Node], end: int, last_clock: dict[str, dict[str, int]], history: _History
    ) -> None:
        """An actor that never ran again (blocked at the end, a deadlock) still has a next step: what it announced.
        Race it against the steps taken, as if it came last."""
        last = nodes[end - 1]
        for actor, upcoming in last.pending.items():
            if actor == last.chosen or not upcoming:
                continue
            latest = history.latest_conflicting(upcoming, actor)
            self._races_into(nodes, end, latest, last_clock.get(actor, {}), untaken=(actor, upcoming))

    def _races_into(
        self, nodes: list[_Node], k: int, latest: dict[str, int], before: dict[str, int], untaken: Event | None = None
    ) -> None:
        """Reverse every race into step ``k``: for each other actor, its last step ``j`` that conflicts with ``k``,
        unless ``j`` already happens before ``k`` through another way -- the actor's own previous step, or the
        last conflicting step of a third actor. Looking at the latest conflicting step alone would miss ``invoice``
        reading a price that ``price`` wrote from the rate ``rate`` wrote."""
        second: Event = untaken if untaken is not None else (nodes[k].chosen, self._step(nodes[k]))
        for who, j in latest.items():
            reached = before.get(who, -1)
            for other, i in latest.items():
                if other != who:
                    reached = max(reached, (nodes[i].clock or {}).get(who, -1))
            if reached >= j:
                continue  # ordered through a step in between: not a race of its own
            self._plan_reversal(nodes, j, second, k)

    def _plan_reversal(self, nodes: list[_Node], j: int, second: Event, at: int, depth: int = 0) -> None:
        """Plan, at node ``j``, the steps that reverse the race between step ``j`` and ``second`` (at ``at``): the
        steps after ``j`` that do not happen after it, then ``second`` -- unless a sleeping actor already covers
        that sequence, or the wakeup tree there already plans it.

        When that sequence would take a lock that is held at ``j`` (the race lies between two critical sections of
        one lock), it cannot run there: the order to reverse is the two acquisitions, so the plan is made at the
        step where the holder took the lock instead."""
        node = nodes[j]
        indexed = [
            i for i in range(j + 1, min(at, len(nodes))) if nodes[i].chosen and not self._happens_before(nodes, j, i)
        ]
        sequence: list[Event] = [(nodes[i].chosen, self._step(nodes[i])) for i in indexed]
        sequence.append(second)
        if node.held and depth < 8:
            for position, (actor, footprint) in enumerate(sequence):
                taken = _locks_taken(footprint) & node.held.keys()
                for lock in sorted(taken):
                    holder = node.held[lock]
                    if holder == actor:
                        continue
                    acquired = self._acquisition(nodes, j, holder, lock)
                    if acquired is not None:
                        where = indexed[position] if position < len(indexed) else at
                        self._plan_reversal(nodes, acquired, (actor, footprint), where, depth + 1)
                    return
        asleep = {**node.sleep, **{q: fp for q, fp in node.explored.items() if q != node.chosen}}
        if any(self._weak_initial(sequence, q, fp) for q, fp in asleep.items()):
            return  # an equivalent order begins with a sleeping actor: explored already
        self._insert(node.wakeup, sequence)

    def _acquisition(self, nodes: list[_Node], j: int, holder: str, lock: str) -> int | None:
        """The step, at or before ``j``, where ``holder`` took ``lock``."""
        for i in range(j, -1, -1):
            if nodes[i].chosen == holder and ("lock", lock, "w") in self._step(nodes[i]):
                return i
        return None

    def _weak_initial(self, sequence: list[Event], actor: str, footprint: Footprint) -> bool:
        """True when ``sequence`` can be reordered to start with a step of ``actor``: its first step there depends on
        nothing before it, or (not in it at all) its next step, ``footprint``, commutes with all of it."""
        for position, (who, touched) in enumerate(sequence):
            if who == actor:
                return not any(other == actor or self._conflict(fp, touched) for other, fp in sequence[:position])
        return not any(self._conflict(fp, footprint) for _who, fp in sequence)

    def _insert(self, tree: list[_Branch], sequence: list[Event]) -> None:
        """Add ``sequence`` to a wakeup tree unless a planned path already covers it (it is that path up to
        reordering independent steps, or that path is a prefix of it)."""
        children = tree
        rest = list(sequence)
        while rest:
            for branch in children:
                if self._weak_initial(rest, branch.actor, branch.footprint):
                    for position, (who, _fp) in enumerate(rest):
                        if who == branch.actor:
                            del rest[position]
                            break
                    if not branch.children:
                        return  # a planned path ends here, and the rest can follow it: covered
                    children = branch.children
                    break
            else:
                head = chain = _Branch(*rest[0])
                for event in rest[1:]:
                    link = _Branch(*event)
                    chain.children.append(link)
                    chain = link
                children.append(head)
                return

    @staticmethod
    def _happens_before(nodes: list[_Node], m: int, i: int) -> bool:
        """True when step ``m`` happens before step ``i`` (same actor earlier, or a chain of conflicts)."""
        clock = nodes[i].clock
        return m < i and clock is not None and clock.get(nodes[m].chosen, -1) >= m


class _Guide:
    """The exploring policy for one run: follow the prefix, then default choices, recording new nodes."""

    def __init__(self, explorer: Explorer, nodes: list[_Node], found: Exploration) -> None:
        self._explorer = explorer
        self._nodes = nodes
        self._found = found
        self.first_new = max(len(nodes) - 1, 0)  # the last node of the prefix took a new branch
        self.pruned = False
        self.preemptions = 0

    def choose(self, point: DecisionPoint) -> str:
        k = point.index
        if k < len(self._nodes):
            node = self._nodes[k]
            if node.enabled != point.runnable:
                before, now = ", ".join(node.enabled), ", ".join(point.runnable)
                raise NondeterminismError(f"decision {k}: earlier {{{before}}} could run, now {{{now}}}")
            chosen = node.chosen
        else:
            parent = self._nodes[k - 1] if k else None
            node = self._explorer.new_node(point, parent)
            try:
                chosen = self._explorer.default_choice(node, self._found)
            except _Pruned:
                self.pruned = True
                raise
            self._nodes.append(node)
        self.preemptions = node.preemptions + int(
            node.current is not None and node.current in node.enabled and chosen != node.current
        )
        return chosen


class _History:
    """The latest access of each piece of state by each actor, for finding conflicts without scanning the run."""

    def __init__(self) -> None:
        # thing -> actor -> [latest write per key, latest read per key, latest write of all, latest read of all,
        #                    latest write of any key, latest read of any key]
        self._by_thing: dict[str, dict[str, list[Any]]] = {}
        self._any_step: dict[str, int] = {}  # actor -> its latest step that touched anything
        self._anything: dict[str, int] = {}  # actor -> its latest step that may have touched everything

    def add(self, index: int, actor: str, footprint: Footprint) -> None:
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


def _locks_taken(footprint: Footprint) -> set[str]:
    """The locks a step operated on (an acquisition, or an attempt that waited)."""
    return {key for kind, key, _mode in footprint if kind == "lock" and not key.endswith(" (release)")}


def _multinomial(run: RunResult) -> int:
    """How many orders a naive enumeration would try: all interleavings of each actor's steps in this run."""
    per_actor: dict[str, int] = {}
    for decision in run.decisions:
        per_actor[decision.chosen] = per_actor.get(decision.chosen, 0) + 1
    total = math.factorial(sum(per_actor.values()))
    for steps in per_actor.values():
        total //= math.factorial(steps)
    return total
