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
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from lab.engine.footprint import Footprint, conflict
from lab.engine.schedule import schedule_string
from lab.engine.scheduler import DecisionPoint, RunResult

DEFAULT_MAX_SCHEDULES = 20_000


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
    dropped_plans: int = 0
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
    ) -> None:
        self._run_once = run_once
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
                found.dropped_plans += 1
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
                del nodes[depth + 1:]
                return True
        return False

    def _next_planned_branch(self, nodes: list[_Node], found: Exploration, *, dry_run: bool) -> bool:
        """Depth first: the deepest point whose wakeup tree still plans a branch after the one just explored."""
        for depth in range(len(nodes) - 1, -1, -1):
            node = nodes[depth]
            if not dry_run and node.wakeup and node.wakeup[0].actor == node.chosen:
                node.wakeup.pop(0)  # its whole subtree is explored: it sleeps for the branches after it
            planned = [b for b in node.wakeup if b.actor != node.chosen] if dry_run else None
            if dry_run:
                if planned:
                    return True
                continue
            branch = self._next_planned(node, found)
            if branch is None:
                continue
            node.chosen = branch.actor
            node.follow = branch.children
            node.clock = None
            node.executed = None
            del nodes[depth + 1:]
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
        """DPOR: reverse every race into each new step, then races with the steps blocked actors never took."""
        last_clock: dict[str, dict[str, int]] = {}
        touching: list[int] = []  # the steps with a non-empty footprint, in order: the only ones that can conflict
        end = 0
        for k, node in enumerate(nodes):
            if not node.chosen:
                break
            end = k + 1
            taken = self._step(node)
            if node.clock is None:
                clock = dict(last_clock.get(node.chosen, {}))
                if taken:
                    for j in touching:
                        earlier = nodes[j]
                        if earlier.clock is not None and self._conflict(self._step(earlier), taken):
                            for actor, tick in earlier.clock.items():
                                if clock.get(actor, -1) < tick:
                                    clock[actor] = tick
                clock[node.chosen] = k
                node.clock = clock
            if k >= first_new and taken:
                self._races_into(nodes, k, last_clock.get(node.chosen, {}), touching)
            last_clock[node.chosen] = node.clock
            if taken:
                touching.append(k)
        if end and end >= first_new:
            self._races_of_untaken(nodes, end, last_clock, touching)

    def _races_of_untaken(self, nodes: list[_Node], end: int, last_clock: dict[str, dict[str, int]],
                          touching: list[int]) -> None:
        """An actor that never ran again (blocked at the end, a deadlock) still has a next step: what it announced.
        Race it against the steps taken, as if it came last."""
        last = nodes[end - 1]
        for actor, upcoming in last.pending.items():
            if actor == last.chosen or not upcoming:
                continue
            known = last_clock.get(actor, {})
            for j in reversed(touching):
                earlier = nodes[j]
                if earlier.chosen == actor or not self._conflict(self._step(earlier), upcoming):
                    continue
                if known.get(earlier.chosen, -1) >= j:
                    break  # already ordered before this actor's next step: no race
                self._plan_reversal(nodes, j, (actor, upcoming), end)
                break

    def _races_into(self, nodes: list[_Node], k: int, known: dict[str, int], touching: list[int]) -> None:
        """Source-set DPOR: every race into executed step ``k``, not only the last conflicting step before it.

        For each other actor, its last step ``j`` before ``k`` that conflicts with ``k`` races with ``k`` when no
        step in between is ordered after ``j`` and before ``k``; each such race is reversed at ``j``. Looking at the
        last conflicting step alone misses ``invoice`` reading a price that ``price`` wrote from the rate ``rate``
        wrote: reversing it needs ``rate`` scheduled before ``invoice``'s read.
        """
        node = nodes[k]
        taken = self._step(node)
        seen: set[str] = set()
        for position in range(len(touching) - 1, -1, -1):
            j = touching[position]
            earlier = nodes[j]
            if earlier.chosen == node.chosen or earlier.chosen in seen:
                continue
            if not self._conflict(self._step(earlier), taken):
                continue
            seen.add(earlier.chosen)
            between = touching[position + 1:]  # a step with an empty footprint orders nothing
            if any(self._happens_before(nodes, j, i) and self._happens_before(nodes, i, k) for i in between):
                continue  # ordered through a step in between: not a race of its own
            self._plan_reversal(nodes, j, (node.chosen, taken), k)

    def _plan_reversal(self, nodes: list[_Node], j: int, second: Event, at: int, depth: int = 0) -> None:
        """Plan, at node ``j``, the steps that reverse the race between step ``j`` and ``second`` (at ``at``): the
        steps after ``j`` that do not happen after it, then ``second`` -- unless a sleeping actor already covers
        that sequence, or the wakeup tree there already plans it.

        When that sequence would take a lock that is held at ``j`` (the race lies between two critical sections of
        one lock), it cannot run there: the order to reverse is the two acquisitions, so the plan is made at the
        step where the holder took the lock instead."""
        node = nodes[j]
        indexed = [i for i in range(j + 1, min(at, len(nodes)))
                   if nodes[i].chosen and not self._happens_before(nodes, j, i)]
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
