"""Systematic exploration: run the same actors under every schedule that matters, one fresh run per schedule.

This is stateless model checking: nothing is snapshotted; each schedule is a fresh run from setup, steered by a
policy that follows a prefix of earlier choices and then picks defaults. After each run the explorer decides
which earlier choice to revisit, depth first, until no choice is left.

Two reductions keep the count small without losing an outcome (given honest footprints, see
:mod:`lab.engine.core._footprint`):

- **Optimal dynamic partial-order reduction** (Abdulla, Aronis, Jonsson and Sagonas, "Optimal Dynamic Partial Order
  Reduction", POPL 2014): after each run, every *race* is reversed by a plan in the wakeup tree of the decision
  before it (:mod:`lab.engine.search._races`), so that each run explores one new class of equivalent interleavings
  (Mazurkiewicz traces).
- **Sleep sets** (Godefroid): an actor whose next step was fully explored from a point, and which commutes with
  the step taken, is not tried again below it (:mod:`lab.engine.search._tree`). With wakeup trees no run should end
  with every runnable actor asleep; a run that does (footprints are recorded, not known in advance) is cut short
  and counted as redundant.

An optional **preemption bound** (as in CHESS) skips schedules that switch away from a runnable actor more than K
times; a bound that skipped anything makes the result INCOMPLETE, never a pass. So does the schedule budget.

This module is the search's loop: one run after another down the path of decisions it is on, each steered by a
:class:`lab.engine.search._choices.Guide`, its races reversed after it, then the next branch taken
(:mod:`lab.engine.search._choices`). What it found is tallied in :mod:`lab.engine.search._exploration`.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator, Sequence
from functools import lru_cache

from lab.engine.core._footprint import Footprint, conflict
from lab.engine.core._policies import Policy
from lab.engine.core._run import Decision, RunResult, RunStatus
from lab.engine.core._schedule import schedule_string
from lab.engine.search._choices import Choices, Guide
from lab.engine.search._exploration import DEFAULT_MAX_SCHEDULES, Exploration, NondeterminismError, resolve_jobs, tally
from lab.engine.search._program import Program
from lab.engine.search._races import Races, record_executed
from lab.engine.search._subtrees import Branch, Subtree
from lab.engine.search._tree import Event, Node
from lab.errors import UsageError

Emit = Callable[[RunResult, str, object, Guide, Exploration], None]  # a worker's every run, tallied elsewhere
Skip = Callable[[list[Node], Exploration], bool]  # at each branch begun: was its subtree explored elsewhere, and taken?
Outside = list[tuple[int, list[Event]]]  # races a subtree reversed at or above its decision, in the order found


class Explorer:
    """Explores the schedules of a deterministic :class:`~lab.engine.search._program.Program`: its ``run`` must
    build a fresh world each time, so that the same choices give the same run.

    The rest are the search's settings: whether to reduce (optimal DPOR, else every order of the same scheduling
    points), a preemption bound, the schedule budget, a ``progress`` callback after each execution, and how many
    processes run schedules.
    """

    def __init__(
        self,
        program: Program,
        *,
        reduction: bool = True,
        preemption_bound: int | None = None,
        max_schedules: int = DEFAULT_MAX_SCHEDULES,
        progress: Callable[[Exploration], None] | None = None,
        jobs: int | None = 1,
    ) -> None:
        if not isinstance(program, Program):
            raise UsageError(f"an explorer explores a Program (got {type(program).__name__})")
        self._program = program
        self._jobs = resolve_jobs(jobs)
        # every run the search takes is digested where it ran and adopted here, in the search's order
        self._digest = program.digest
        # parts as a list, as worker processes send them (lab.engine.search._work_items)
        self._adopt: Callable[[list[Hashable]], None] | None = program.adopt
        self._actors = program.actors
        self._order = {name: i for i, name in enumerate(self._actors)}
        self._reduction = reduction
        self._max = max_schedules
        self._progress = progress
        conflicts = lru_cache(maxsize=65_536)(conflict)
        self._choices = Choices(self._actors, reduction, preemption_bound, conflicts)
        self._races = Races(self._actors, conflicts)
        self._path: list[Node] = []  # the search's current path (what estimated_classes reads)

    @property
    def actors(self) -> tuple[str, ...]:
        """The actors, in declaration order (the order schedule strings number them in)."""
        return self._actors

    @property
    def max_schedules(self) -> int:
        """The schedule budget: the search stops after this many executions."""
        return self._max

    @property
    def jobs(self) -> int:
        """How many processes this exploration runs schedules in."""
        return self._jobs

    def explore(self, done: Sequence[bytes] = ()) -> Exploration:
        """Run every schedule that matters (or until the budget) and tally the outcomes. With ``jobs`` above one,
        workers explore whole subtrees and this process tallies their runs in the one-process order
        (:mod:`lab.engine.search._parallel`): the same report for any number of processes. ``done`` are subtrees
        other machines explored (``explore_work``), taken where the search reaches them."""
        if self._jobs > 1 or done:
            from lab.engine.search._parallel import explore_parallel  # here: parallel imports this module

            return explore_parallel(self, done)
        return self._search()

    @property
    def program(self) -> Program:
        """What is explored: another search strategy runs its executions through the same ``run``."""
        return self._program

    def observe(self, run: RunResult) -> None:
        """Hand a run another strategy made to the caller's digest and adopt, as this search does with its own."""
        if self._adopt is not None and self._digest is not None:
            self._adopt(self.digest(run))

    def _run_once(self, policy: Policy) -> tuple[RunResult, str, object]:
        ran = self._program.run(policy)
        return ran.run, ran.key, ran.payload

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

    def adopt_parts(self, parts: list[Hashable], found: Exploration) -> None:
        """Hand a worker's run's digest to the caller's adopt and report progress, as after a run of this search."""
        if self._adopt is not None and self._digest is not None:
            self._adopt(parts)
        if self._progress is not None:
            self._progress(found)

    def plan_found_below(self, nodes: list[Node], j: int, sequence: list[Event]) -> None:
        """Plan a race reversal a subtree below found at decision ``j`` (:func:`Races.plan`)."""
        self._races.plan(nodes, j, sequence)

    def digest(self, run: RunResult) -> list[Hashable]:
        """What the caller's ``digest`` makes of ``run`` (nothing without one), as a list: a worker sends it with the
        run."""
        if self._digest is None:
            return []
        parts = self._digest(run)
        return parts if isinstance(parts, list) else list(parts)

    def quiet_for_worker(self) -> None:
        """In a worker process: report nothing to the caller's callbacks (the coordinator does, for every run)."""
        self._progress = None
        self._adopt = None  # its digests travel with its runs instead
        self._jobs = 1
        self._max = 1 << 62  # the budget counts runs in the whole search's order: the coordinator applies it

    def explore_subtree(
        self, subtree: Subtree | None, emit: Emit, skip: Skip | None = None
    ) -> tuple[Outside, Footprint, bool]:
        """Run the schedules below ``subtree`` (``None``: all) as the whole search would, handing each run to ``emit``;
        return what the search owning the decisions above needs: the races reversed above, what the first step
        touched, whether a bound skipped anything."""
        races = self._races
        saved = races.floor, races.outside, self._path
        races.floor = subtree.depth if subtree is not None else -1
        outside: Outside = []
        races.outside = outside
        try:
            found = self._search(seed=subtree, emit=emit, skip=skip)
            first: Footprint = frozenset()
            if subtree is not None and len(self._path) > subtree.depth:
                node = self._path[subtree.depth]
                first = node.explored.get(node.chosen, node.executed or frozenset())
            return outside, first, found.bounded
        finally:
            races.floor, races.outside, self._path = saved

    def split(self, at_least: int) -> list[Subtree]:
        """Search here until at least ``at_least`` planned branches are not begun, or for ``at_least`` runs if that
        comes first, and return the branches not begun as subtrees (none when the search ended first)."""
        pending: list[Subtree] = []
        runs = 0

        def enough(nodes: list[Node]) -> bool:
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
        seed: Subtree | None = None,
        emit: Emit | None = None,
        stop: Callable[[list[Node]], bool] | None = None,
        skip: Skip | None = None,
    ) -> Exploration:
        found = Exploration()
        for found in self._steps(seed=seed, emit=emit, stop=stop, skip=skip):  # noqa: B007 (the last)
            pass
        return found

    def _steps(
        self,
        *,
        seed: Subtree | None = None,
        emit: Emit | None = None,
        stop: Callable[[list[Node]], bool] | None = None,
        skip: Skip | None = None,
    ) -> Iterator[Exploration]:
        found = Exploration()
        nodes: list[Node] = []
        self._path = nodes
        floor = seed.depth if seed is not None else -1
        while True:
            policy = Guide(self._choices, nodes, found, seed)
            seed = None
            run, key, payload = self._run_once(policy)
            if self._adopt is not None and self._digest is not None:
                self._adopt(self.digest(run))
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
                    tally(found, run, key, payload, policy.preemptions, self._actors)
            if self._reduction:
                record_executed(nodes, policy.first_new, run)
                self._races.add_races(nodes, policy.first_new)
            if emit is not None:
                emit(run, key, payload, policy, found)
            if self._progress is not None:
                self._progress(found)
            if found.schedules + found.pruned >= self._max:
                found.budget_hit = self._choices.next_branch(nodes, found, floor, dry_run=True)
                yield found
                return
            more = self._choices.next_branch(nodes, found, floor)
            while more and skip is not None and skip(nodes, found):  # explored elsewhere: move past it
                more = self._choices.next_branch(nodes, found, floor)
            found.budget_hit = more  # until the search ends: a caller that stops here stopped it short
            yield found
            found.budget_hit = False
            if not more or (stop is not None and stop(nodes)):
                return

    def pending_subtrees(self, nodes: Sequence[Node]) -> Iterator[Subtree]:
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
