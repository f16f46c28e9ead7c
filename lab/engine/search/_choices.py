"""The choices of the search: at each decision of a run, which actor goes next; after a run, which decision next.

A run is steered by a :class:`Guide`, the policy the explorer hands the scheduler for one run: it follows the
prefix the search is on (checking that the code under test offers the same choices again), then, at each decision
reached for the first time, makes a node (:class:`lab.engine.search._tree.Node`) with its sleep set and takes the
plan handed down from the decision before, or by default keeps the current actor (else the first awake one). A run
whose runnable actors are all asleep, or which the preemption bound forbids, is cut short (``_Pruned``).

After the run, :meth:`Choices.next_branch` moves the search to the next branch, depth first: the deepest decision
whose wakeup tree still plans a branch after the one just explored (or, without reduction, any runnable actor not
tried there yet).
"""

from __future__ import annotations

from collections.abc import Sequence

from lab.engine.core._footprint import Footprint
from lab.engine.core._policies import DecisionPoint
from lab.engine.core._schedule import parse_schedule
from lab.engine.search._exploration import Exploration, NondeterminismError
from lab.engine.search._subtrees import Branch, Subtree
from lab.engine.search._tree import Conflict, Node, sleep_after


class _Pruned(Exception):
    """Raised by the guiding policy to cut a run short: every runnable actor is asleep, or the bound is reached."""

    def __init__(self, why: str, *, asleep: bool = False) -> None:
        super().__init__(why)
        self.asleep = asleep


class Choices:
    """The choices of one explorer's search, with its settings: the actors (in declaration order), whether to
    reduce, the preemption bound, and its memo of footprint conflicts."""

    def __init__(self, actors: Sequence[str], reduction: bool, bound: int | None, conflict: Conflict) -> None:
        self.actors = tuple(actors)
        self._order = {name: i for i, name in enumerate(actors)}
        self._reduction = reduction
        self._bound = bound
        self._conflict = conflict

    def new_node(self, point: DecisionPoint, parent: Node | None) -> Node:
        """The node for a decision reached for the first time, with its sleep set."""
        pending = point.pending()
        sleep: dict[str, Footprint] = {}
        if self._reduction and parent is not None:
            taken = point.last_step()  # the parent's step, which just ran
            parent.executed = taken
            sleep = sleep_after(parent, taken, self._conflict)
        if parent is None:
            node = Node(point.runnable, point.current, pending, "", 0, sleep, None)
        else:
            current = parent.current
            switched = current is not None and parent.chosen != current and current in parent.enabled
            node = Node(point.runnable, point.current, pending, "", parent.preemptions + switched, sleep, parent.follow)
        if self._reduction:
            node.held = point.held()
        return node

    def default_choice(self, node: Node, found: Exploration) -> str:
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

    def _next_planned(self, node: Node, found: Exploration) -> Branch | None:
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

    def _is_preemption(self, node: Node, choice: str) -> int:
        return int(node.current is not None and node.current in node.enabled and choice != node.current)

    def next_branch(self, nodes: list[Node], found: Exploration, floor: int, *, dry_run: bool = False) -> bool:
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

    def _next_planned_branch(self, nodes: list[Node], found: Exploration, floor: int, *, dry_run: bool) -> bool:
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


class Guide:
    """The exploring policy for one run: follow the prefix, then default choices, recording new nodes.

    With a ``seed`` (a worker's first run) the decisions up to the seed's depth are not chosen but followed: the
    seed's prefix, then its branch, with the sleep sets the whole search has there."""

    def __init__(self, choices: Choices, nodes: list[Node], found: Exploration, seed: Subtree | None = None) -> None:
        self._choices = choices
        self._nodes = nodes
        self._found = found
        self.seed = seed
        self._steps = parse_schedule(seed.prefix, choices.actors) if seed is not None else []
        self.start = len(nodes)
        # the last node of the prefix took a new branch (a seed's, at its depth: the races into the steps above it
        # were reversed by the search that owns them, when those steps were new)
        self.first_new = seed.depth if seed is not None else max(len(nodes) - 1, 0)
        self.pruned = False
        self.asleep = False  # the run was cut because every runnable actor was asleep: it was redundant
        self.preemptions = 0

    def _seeded(self, point: DecisionPoint, seed: Subtree) -> str:
        k = point.index
        node = self._choices.new_node(point, self._nodes[k - 1] if k else None)
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
            node = self._choices.new_node(point, parent)
            try:
                chosen = self._choices.default_choice(node, self._found)
            except _Pruned as cut:
                self.pruned = True
                self.asleep = cut.asleep
                raise
            self._nodes.append(node)
        self.preemptions = node.preemptions + int(
            node.current is not None and node.current in node.enabled and chosen != node.current
        )
        return chosen
