# size: one search (optimal DPOR: wakeup trees, sleep sets, races) keeps its state in one class
"""Systematic exploration: run the same actors under every schedule that matters, one fresh run per schedule.

This is stateless model checking: nothing is snapshotted; each schedule is a fresh run from setup, steered by a
policy that follows a prefix of earlier choices and then picks defaults. After each run the explorer decides
which earlier choice to revisit, depth first, until no choice is left.

Two reductions keep the count small without losing an outcome (given honest footprints, see
:mod:`lab.engine.core._footprint`):

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

Over 300 lines: one algorithm over one private tree of nodes (the search, its wakeup trees, sleep sets and race
reversal, and the policy that steers each run down it), clearer read in one place.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterator, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lab.engine.search._parallel import Speculation

from lab.engine.core._footprint import Footprint, conflict
from lab.engine.core._policies import DecisionPoint
from lab.engine.core._policies import Policy as DecisionPolicy
from lab.engine.core._run import Decision, RunResult, RunStatus
from lab.engine.core._schedule import parse_schedule, schedule_length, schedule_string
from lab.engine.search._happens_before import History, class_of, shared_things
from lab.engine.search._subtrees import Branch, Subtree
from lab.errors import ScheduleError, UsageError

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

    def __init__(self, why: str, *, asleep: bool = False) -> None:
        super().__init__(why)
        self.asleep = asleep


class NondeterminismError(ScheduleError):
    """Raised when re-running a prefix does not offer the same choices: the code under test is not deterministic."""


Event = tuple[str, Footprint]  # a step: its actor and what it touched

_NO_CLOCK: dict[str, int] = {}  # the clock before an actor's first step (read, never written)
_NOTHING: Footprint = frozenset()
_NO_LOCKS: dict[str, str] = {}  # a node's locks held until it is told (read, never written)
_NO_ACTORS: frozenset[str] = frozenset()


class _Node:
    """One decision of the search. A plain class with slots: one is made at every decision point of every run."""

    __slots__ = (
        "backtrack",
        "chosen",
        "clock",
        "current",
        "done",
        "enabled",
        "executed",
        "explored",
        "follow",
        "held",
        "pending",
        "preemptions",
        "sleep",
        "wakeup",
    )

    def __init__(
        self,
        enabled: tuple[str, ...],
        current: str | None,
        pending: dict[str, Footprint],
        chosen: str,
        preemptions: int,
        sleep: dict[str, Footprint],
        wakeup: list[Branch] | None = None,
    ) -> None:
        self.enabled = enabled
        self.current = current
        self.pending = pending
        self.chosen = chosen
        self.preemptions = preemptions
        self.sleep = sleep
        self.wakeup: list[Branch] = wakeup if wakeup is not None else []  # planned here, the explored one first
        self.follow: list[Branch] | None = None  # the plan handed to the next node (the chosen branch's children)
        self.held: dict[str, str] = _NO_LOCKS  # lock -> holding actor, before the step taken here (replaced)
        self.backtrack: AbstractSet[str] = _NO_ACTORS  # without reduction: what to try here (replaced)
        self.explored: dict[str, Footprint] = {}  # choice -> what its step touched
        self.done: set[str] = set()
        self.executed: Footprint | None = None  # what the step taken here was seen to touch (set after the run)
        self.clock: dict[str, int] | None = None  # vector clock of the step taken here (set by the race analysis)


@dataclass(frozen=True)
class Execution:
    """One explored run: its schedule string, the run itself, and what the caller made of it."""

    schedule: str
    preemptions: int
    run: RunResult
    key: str
    payload: object

    @property
    def rank(self) -> tuple[int, int, str]:
        """The order examples are chosen in, whatever order a search found them: fewest preemptions, then the
        shortest schedule, then the smallest."""
        return _canonical(self.preemptions, self.schedule)


@dataclass
class Exploration:
    """What an exploration found. ``executions`` holds one run per distinct outcome key: the one with the fewest
    preemptions, then the shortest schedule string, then the smallest (so it never depends on the order of search).

    ``schedules`` counts the executions that ran to their end, ``pruned`` those cut short (``blocked`` of them as
    redundant, every runnable actor asleep; the others by the preemption bound), and ``classes`` the distinct
    classes of equivalent interleavings the finished ones belong to, named independently of the search
    (:func:`class_of`): an optimal search has ``schedules == classes`` and ``blocked == 0``.
    """

    schedules: int = 0
    pruned: int = 0
    blocked: int = 0
    bounded: bool = False
    budget_hit: bool = False
    naive_bound: int = 0
    counts: dict[str, int] = field(default_factory=dict)
    executions: dict[str, Execution] = field(default_factory=dict)
    class_names: set[bytes] = field(default_factory=set, repr=False)
    reused: int = 0  # runs taken from worker processes: how the time was spent, never part of a result
    last_key: str | None = None
    """The outcome the latest execution reached (``None``: it was cut short); what a stepping caller judges."""

    @property
    def complete(self) -> bool:
        """True when every schedule that matters was run (no bound or budget cut the search)."""
        return not (self.bounded or self.budget_hit)

    @property
    def classes(self) -> int:
        """How many distinct classes of equivalent interleavings the finished executions belong to."""
        return len(self.class_names)

    @property
    def executions_run(self) -> int:
        """Every execution started: the finished ones and the redundant ones cut short."""
        return self.schedules + self.pruned


RunOnce = Callable[[object], tuple[RunResult, str, object]]
Emit = Callable[["Recording", RunResult, str, object], None]
"""What a worker does with each run of its subtree (the recording policy, the run, its key and payload)."""


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
        digest: Callable[[RunResult], list[Any]] | None = None,
        adopt: Callable[[list[Any]], None] | None = None,
    ) -> None:
        self._run_once = run_once
        self._jobs = resolve_jobs(jobs)
        # every run the search takes is digested where it ran and adopted here, in the search's order
        self._digest = digest
        self._adopt = adopt
        self._actors = tuple(actors)
        self._order = {name: i for i, name in enumerate(actors)}
        self._reduction = reduction
        self._bound = preemption_bound
        self._max = max_schedules
        self._progress = progress
        self._conflict = lru_cache(maxsize=65_536)(conflict)
        self._path: list[_Node] = []  # the search's current path (what estimated_classes reads)

    @property
    def actors(self) -> tuple[str, ...]:
        """The actors, in declaration order (the order schedule strings number them in)."""
        return self._actors

    @property
    def jobs(self) -> int:
        """How many processes this exploration runs schedules in."""
        return self._jobs

    def explore(self, done: Sequence[bytes] = ()) -> Exploration:
        """Run every schedule that matters (or until the budget) and tally the outcomes.

        With ``jobs`` above one, worker processes run parts of the tree ahead of time and this process takes their
        runs wherever its own search would have made the same choices (:mod:`lab.engine.search._parallel`): the search,
        hence everything it reports, is the one-process search, whatever the number of processes. ``done`` are
        runs other machines made (:func:`lab.engine.search._parallel.explore_work`), taken the same way.
        """
        if self._jobs > 1 or done:
            from lab.engine.search._parallel import FORKS, Speculation  # here: parallel imports this module

            with Speculation(self, self._jobs - 1 if FORKS else 0, done) as speculation:
                return self._search(speculation=speculation)
        return self._search()

    @property
    def run_once(self) -> RunOnce:
        """The caller's ``run_once``: another search strategy runs its executions through the same one."""
        return self._run_once

    def observe(self, run: RunResult) -> None:
        """Hand a run another strategy made to the caller's digest and adopt, as this search does with its own."""
        if self._adopt is not None and self._digest is not None:
            self._adopt(self._digest(run))

    def estimated_classes(self) -> float:
        """Knuth's estimate of how many classes the whole search tree holds, from its current path: the product of
        the branches known at each decision on it (explored and planned). Rough (branches are discovered as races
        are seen, so it tends to be low early), but it says whether a cut search was near its end or far from it."""
        total = 1.0
        for node in self._path:
            if self._reduction:
                branches = len(node.explored.keys() | {branch.actor for branch in node.wakeup})
            else:
                branches = len(node.backtrack)
            total *= max(branches, 1)
        return total

    def digest(self, run: RunResult) -> list[Any]:
        """What the caller's ``digest`` makes of ``run`` (nothing without one): a worker sends it with the run."""
        return self._digest(run) if self._digest is not None else []

    def quiet_for_worker(self) -> None:
        """In a worker process: report nothing to the caller's callbacks (the coordinator does, for every run)."""
        self._progress = None
        self._adopt = None  # its digests travel with its runs instead
        self._jobs = 1

    def explore_subtree(self, subtree: Subtree, emit: Emit) -> None:
        """Run the schedules below ``subtree`` in the order the whole search would, handing each run to ``emit``
        (a worker's part of a parallel exploration; what it plans above the subtree is left to the coordinator)."""
        self._search(seed=subtree, emit=emit)

    def split(self, at_least: int) -> list[Subtree]:
        """Search here until at least ``at_least`` planned branches are not begun, or for ``at_least`` runs if that
        comes first, and return the branches not begun as subtrees (none when the search ended first)."""
        pending: list[Subtree] = []
        runs = 0

        def enough(nodes: list[_Node]) -> bool:
            nonlocal runs
            runs += 1
            pending.extend(self.pending_subtrees(nodes))
            if len(pending) >= at_least or (runs >= at_least and pending):
                return True
            pending.clear()
            return False

        self._search(stop=enough)
        return pending

    def steps(self) -> Iterator[Exploration]:
        """The one-process search, one execution at a time: after each run it yields the exploration so far (with
        ``last_key`` the outcome that run reached, ``None`` when it was cut short), and it ends when the search does.
        A caller that stops early (a failure found, its share of a portfolio spent) simply stops asking."""
        return self._steps()

    def _search(
        self,
        *,
        speculation: Speculation | None = None,
        seed: Subtree | None = None,
        emit: Emit | None = None,
        stop: Callable[[list[_Node]], bool] | None = None,
    ) -> Exploration:
        found = Exploration()
        for found in self._steps(speculation=speculation, seed=seed, emit=emit, stop=stop):  # noqa: B007 (the last)
            pass
        return found

    def _steps(
        self,
        *,
        speculation: Speculation | None = None,
        seed: Subtree | None = None,
        emit: Emit | None = None,
        stop: Callable[[list[_Node]], bool] | None = None,
    ) -> Iterator[Exploration]:
        found = Exploration()
        nodes: list[_Node] = []
        self._path = nodes
        floor = seed.depth if seed is not None else -1
        while True:
            policy = _Guide(self, nodes, found, seed)
            seed = None
            reused = speculation.reuse(policy, nodes) if speculation is not None else None
            name: bytes | None = None
            if reused is not None:
                run, key, payload, name, digested = reused
                found.reused += 1
            else:
                if speculation is not None:  # a partly followed run that was not there is run for real, afresh
                    del nodes[policy.start :]
                    policy = _Guide(self, nodes, found, policy.seed)
                if emit is None:
                    run, key, payload = self._run_once(policy)
                else:
                    recording = Recording(policy)
                    run, key, payload = self._run_once(recording)
                    if not policy.pruned:
                        emit(recording, run, key, payload)
            if self._adopt is not None and self._digest is not None:
                self._adopt(digested if reused is not None else self._digest(run))
            if run.status == RunStatus.DIVERGED and not policy.pruned:
                raise NondeterminismError(run.problem)
            if policy.pruned:
                found.pruned += 1
                found.blocked += policy.asleep
                found.last_key = None
            else:
                found.schedules += 1
                found.last_key = key
                if emit is None:  # a subtree's runs are tallied by the search that takes them
                    tally(found, run, key, payload, policy.preemptions, self._actors, name)
            if self._reduction:
                self._record_executed(nodes, policy.first_new, run)
                self._add_races(nodes, policy.first_new)
            if self._progress is not None:
                self._progress(found)
            if found.schedules + found.pruned >= self._max:
                found.budget_hit = self._next_branch(nodes, found, floor, dry_run=True)
                yield found
                return
            more = self._next_branch(nodes, found, floor)
            found.budget_hit = more  # until the search ends: a caller that stops here stopped it short
            yield found
            found.budget_hit = False
            if not more or (stop is not None and stop(nodes)):
                return

    def pending_subtrees(self, nodes: Sequence[_Node]) -> Iterator[Subtree]:
        """The branches the search has planned but not begun, shallowest first (the ones it will reach last), each
        as a subtree a worker can explore ahead of time, with the sleep sets the search will have there by then.
        Lazily: a caller that needs one pays for one (the prefix is written only for a branch it is asked for)."""
        decisions: list[Decision] = []
        sleep: dict[int, dict[str, Footprint]] = {}  # the decisions above with actors asleep (most have none)
        for depth, node in enumerate(nodes):
            if not node.chosen:
                return
            planned: list[tuple[Branch, dict[str, Footprint]]] = []
            if self._reduction:
                below = {**node.sleep, **node.explored}  # asleep at this decision, and then each earlier branch
                for branch in node.wakeup[1:]:
                    if branch.actor in node.enabled and branch.actor not in below:
                        planned.append((branch, {q: fp for q, fp in below.items() if q != branch.actor}))
                    below.setdefault(branch.actor, branch.footprint)
            else:
                options = sorted(node.backtrack - node.done - node.sleep.keys(), key=self._order.__getitem__)
                planned = [(Branch(option, frozenset()), {}) for option in options]
            if planned:
                prefix = schedule_string(decisions, self._actors)
                for branch, asleep in reversed(planned):
                    yield Subtree(prefix, depth, branch, {**sleep, depth: asleep} if asleep else dict(sleep))
            here = {q: fp for q, fp in {**node.sleep, **node.explored}.items() if q != node.chosen}
            if here:
                sleep[depth] = here
            decisions.append(Decision(node.enabled, node.chosen))

    # -- one run -------------------------------------------------------------------------------------------------

    def new_node(self, point: DecisionPoint, parent: _Node | None) -> _Node:
        """The node for a decision reached for the first time, with its sleep set."""
        pending = point.pending()
        sleep: dict[str, Footprint] = {}
        if self._reduction and parent is not None:
            taken = point.last_step()  # the parent's step, which just ran
            parent.executed = taken
            explored = parent.explored
            # most decisions have nothing asleep above them and no earlier branch: nothing to carry down
            if parent.sleep or len(explored) > 1 or (explored and parent.chosen not in explored):
                asleep = {**parent.sleep, **{q: fp for q, fp in explored.items() if q != parent.chosen}}
                sleep = {q: fp for q, fp in asleep.items() if not self._conflict(fp, taken)}
        if parent is None:
            node = _Node(point.runnable, point.current, pending, "", 0, sleep, None)
        else:
            current = parent.current
            switched = current is not None and parent.chosen != current and current in parent.enabled
            node = _Node(
                point.runnable, point.current, pending, "", parent.preemptions + switched, sleep, parent.follow
            )
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
        sleep = node.sleep
        awake = [a for a in node.enabled if a not in sleep] if sleep else node.enabled
        if not awake:
            raise _Pruned("every runnable actor is asleep", asleep=True)
        current = node.current
        choice = current if current is not None and current in awake else awake[0]
        if self._bound is not None and node.preemptions + self._is_preemption(node, choice) > self._bound:
            raise _Pruned("preemption bound")
        node.chosen = choice
        node.done.add(choice)
        if self._reduction:
            node.wakeup = [Branch(choice, frozenset())]
            node.follow = node.wakeup[0].children
        else:
            node.backtrack = set(node.enabled)
        return choice

    def _next_planned(self, node: _Node, found: Exploration) -> Branch | None:
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

    def _next_branch(self, nodes: list[_Node], found: Exploration, floor: int, *, dry_run: bool = False) -> bool:
        """Move to the next branch, depth first, never at or above ``floor`` (a worker's subtree ends there)."""
        if self._reduction:
            return self._next_planned_branch(nodes, found, floor, dry_run=dry_run)
        for depth in range(len(nodes) - 1, floor, -1):
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

    def _next_planned_branch(self, nodes: list[_Node], found: Exploration, floor: int, *, dry_run: bool) -> bool:
        """Depth first: the deepest point whose wakeup tree still plans a branch after the one just explored."""
        for depth in range(len(nodes) - 1, floor, -1):
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
        actor without scanning the run. Then the races of steps blocked actors never took. The index keeps only
        what can order steps of different actors (:func:`shared_things`): the rest of a footprint races with nothing."""
        steps: list[tuple[str, Footprint]] = []
        for node in nodes:
            if not node.chosen:
                break
            steps.append((node.chosen, self._step(node)))
        end = len(steps)
        untaken = end >= first_new and end > 0
        if untaken:
            last = nodes[end - 1]
            relevant = shared_things(
                steps + [(actor, fp) for actor, fp in last.pending.items() if actor != last.chosen]
            )
        else:
            relevant = shared_things(steps)
        last_clock: dict[str, dict[str, int]] = {}
        history = History(relevant)
        for k, (actor, taken) in enumerate(steps):
            node = nodes[k]
            clock = node.clock
            if not taken:
                if clock is None:
                    clock = dict(last_clock.get(actor, _NO_CLOCK))
                    clock[actor] = k
                    node.clock = clock
                last_clock[actor] = clock
                continue
            ask = clock is None or k >= first_new
            latest = history.step(k, actor, taken, ask=ask)
            if latest is not None:
                before = last_clock.get(actor, _NO_CLOCK)
                clock = dict(before)
                for j in latest.values():
                    earlier = nodes[j].clock or _NO_CLOCK
                    for who, tick in earlier.items():
                        if clock.get(who, -1) < tick:
                            clock[who] = tick
                clock[actor] = k
                node.clock = clock
                if latest and k >= first_new:
                    self._races_into(nodes, k, latest, before)
            last_clock[actor] = clock if clock is not None else _NO_CLOCK  # (never None here: asked when it was)
        if untaken:
            self._races_of_untaken(nodes, end, last_clock, history)

    def _races_of_untaken(
        self, nodes: list[_Node], end: int, last_clock: dict[str, dict[str, int]], history: History
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
        first = node.chosen
        indexed = []  # the steps after j that do not happen after it (inline: this runs for every race)
        sequence: list[Event] = []
        for i in range(j + 1, min(at, len(nodes))):
            step = nodes[i]
            chosen = step.chosen
            if chosen and (step.clock is None or step.clock.get(first, -1) < j):
                indexed.append(i)
                executed = step.executed
                sequence.append((chosen, executed if executed is not None else step.pending.get(chosen, _NOTHING)))
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
        explored = node.explored
        if node.sleep or len(explored) > 1 or (explored and first not in explored):  # most have nothing asleep
            asleep = {**node.sleep, **{q: fp for q, fp in explored.items() if q != first}}
            if any(self._weak_initial(sequence, q, fp) for q, fp in asleep.items()):
                return  # an equivalent order begins with a sleeping actor: explored already
        self._insert(node.wakeup, sequence)

    def _acquisition(self, nodes: list[_Node], j: int, holder: str, lock: str) -> int | None:
        """The step, at or before ``j``, where ``holder`` took ``lock``: the latest of its steps that writes the lock
        while the holder did not hold it yet. A step of the holder's that writes the lock while holding it (its
        release, a re-entrant acquisition) is not it: planning there would plan the other actor where the lock is
        still held, a plan it cannot take, and the reversal would be lost."""
        for i in range(j, -1, -1):
            node = nodes[i]
            if node.chosen == holder and node.held.get(lock) != holder and ("lock", lock, "w") in self._step(node):
                return i
        return None

    def _weak_initial(self, sequence: list[Event], actor: str, footprint: Footprint) -> bool:
        """True when ``sequence`` can be reordered to start with a step of ``actor``: its first step there depends on
        nothing before it, or (not in it at all) its next step, ``footprint``, commutes with all of it."""
        for position, (who, touched) in enumerate(sequence):
            if who == actor:
                return not any(other == actor or self._conflict(fp, touched) for other, fp in sequence[:position])
        return not any(self._conflict(fp, footprint) for _who, fp in sequence)

    def _insert(self, tree: list[Branch], sequence: list[Event]) -> None:
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
                head = chain = Branch(*rest[0])
                for event in rest[1:]:
                    link = Branch(*event)
                    chain.children.append(link)
                    chain = link
                children.append(head)
                return


class _Guide:
    """The exploring policy for one run: follow the prefix, then default choices, recording new nodes.

    With a ``seed`` (a worker's first run) the decisions up to the seed's depth are not chosen but followed: the
    seed's prefix, then its branch, with the sleep sets the whole search has there."""

    def __init__(self, explorer: Explorer, nodes: list[_Node], found: Exploration, seed: Subtree | None = None) -> None:
        self._explorer = explorer
        self._nodes = nodes
        self._found = found
        self.seed = seed
        self._steps = parse_schedule(seed.prefix, explorer.actors) if seed is not None else []
        self.start = len(nodes)
        self.first_new = max(len(nodes) - 1, 0)  # the last node of the prefix took a new branch
        self.pruned = False
        self.asleep = False  # the run was cut because every runnable actor was asleep: it was redundant
        self.preemptions = 0

    def _seeded(self, point: DecisionPoint, seed: Subtree) -> str:
        k = point.index
        node = self._explorer.new_node(point, self._nodes[k - 1] if k else None)
        if k < seed.depth:
            chosen = point.runnable[0]
            if len(point.runnable) > 1:
                chosen, runnable = self._steps.pop(0) if self._steps else ("", ())
                if runnable != point.runnable:
                    raise NondeterminismError(f"decision {k}: the subtree's prefix does not lead here")
            plan = Branch(chosen, frozenset())
        else:
            plan = seed.branch
            chosen = plan.actor
            if chosen not in point.runnable:
                raise NondeterminismError(f"decision {k}: the subtree's branch {chosen} cannot run here")
        node.chosen = chosen
        node.done.add(chosen)
        node.sleep = dict(seed.sleep.get(k, {}))
        node.wakeup = [plan]
        node.follow = plan.children
        self._nodes.append(node)
        return chosen

    def choose(self, point: DecisionPoint) -> str:
        k = point.index
        if self.seed is not None and k <= self.seed.depth and k >= len(self._nodes):
            chosen = self._seeded(point, self.seed)
            node = self._nodes[k]
        elif k < len(self._nodes):
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
            except _Pruned as cut:
                self.pruned = True
                self.asleep = cut.asleep
                raise
            self._nodes.append(node)
        self.preemptions = node.preemptions + int(
            node.current is not None and node.current in node.enabled and chosen != node.current
        )
        return chosen


class Recording:
    """A policy that notes, at each decision, everything the explorer may ask of it, then lets ``guide`` choose: a
    worker's run, as the coordinator's search can follow it again without running it."""

    def __init__(self, guide: DecisionPolicy) -> None:
        self._guide = guide
        self.points: list[tuple[int, tuple[str, ...], str | None, dict[str, Footprint], dict[str, str], Footprint]] = []
        self.chosen: list[str] = []

    def choose(self, point: DecisionPoint) -> str:
        """Note what ``point`` shows, then let the guide choose from the noted copy (asked once, not twice)."""
        pending, held, last = point.pending(), point.held(), point.last_step()
        self.points.append((point.index, point.runnable, point.current, pending, held, last))
        chosen = self._guide.choose(
            DecisionPoint(point.index, point.runnable, point.current, Shown(pending, held, last))
        )
        self.chosen.append(chosen)
        return chosen


class Shown:
    """What a decision point showed, served again (a ``RunView``): to a guide, from a recording."""

    __slots__ = ("_held", "_last", "_pending")

    def __init__(self, pending: dict[str, Footprint], held: dict[str, str], last: Footprint) -> None:
        self._pending, self._held, self._last = pending, held, last

    def pending_footprints(self) -> dict[str, Footprint]:
        """The pending footprint of every unfinished actor, as shown."""
        return self._pending

    def locks_held(self) -> dict[str, str]:
        """Which actor held each lock, as shown."""
        return self._held

    def last_step(self) -> Footprint:
        """What the step before the decision touched, as shown."""
        return self._last


def tally(
    found: Exploration,
    run: RunResult,
    key: str,
    payload: object,
    preemptions: int,
    actors: Sequence[str],
    name: bytes | None = None,
) -> None:
    """Count one finished run into ``found``: its outcome, its class, and (if it is the best yet for its outcome:
    fewest preemptions, then the shortest schedule) its example. Every search strategy tallies through here, so
    their explorations read the same way."""
    found.counts[key] = found.counts.get(key, 0) + 1
    if not found.naive_bound:
        found.naive_bound = _multinomial(run)
    found.class_names.add(name if name is not None else run_class(run))
    best = found.executions.get(key)
    if best is not None:  # most runs repeat an outcome: write the schedule only if it may be the better example
        if preemptions > best.preemptions:
            return
        if preemptions == best.preemptions and schedule_length(run.decisions, actors) > len(best.schedule):
            return
    schedule = schedule_string(run.decisions, actors)
    if best is None or _canonical(preemptions, schedule) < _canonical(best.preemptions, best.schedule):
        found.executions[key] = Execution(schedule, preemptions, run, key, payload)


def run_class(run: RunResult) -> bytes:
    """The name of the class of equivalent interleavings ``run`` belongs to (see :func:`class_of`)."""
    return class_of([decision.chosen for decision in run.decisions], run.step_footprints)


def _canonical(preemptions: int, schedule: str) -> tuple[int, int, str]:
    """The order in which an outcome's example is picked: fewest preemptions, shortest, smallest."""
    return (preemptions, len(schedule), schedule)


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


def _multinomial(run: RunResult) -> int:
    """How many orders a naive enumeration would try: all interleavings of each actor's steps in this run."""
    per_actor: dict[str, int] = {}
    for decision in run.decisions:
        per_actor[decision.chosen] = per_actor.get(decision.chosen, 0) + 1
    total = math.factorial(sum(per_actor.values()))
    for steps in per_actor.values():
        total //= math.factorial(steps)
    return total
