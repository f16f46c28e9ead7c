"""Work items in flight: a subtree's key and exact inputs, its runs as they travel, and applying its result.

A process that owns some decisions of the search (a worker's subtree, or the whole tree) may hand a branch it has
planned but not begun to another process. When its own search reaches that branch, the other process's result stands
for the subtree only if the subtree's *inputs* are the ones the owner has now: the plan below the branch (a wakeup
tree, which the owner's later runs may have grown) and the sleep sets on the way (what earlier siblings really
touched). Both are written in :meth:`Subtree.to_text`, so the inputs are compared as text (:func:`inputs_here`,
:func:`planned`). With equal inputs the subtree's exploration is, run for run, the one the owner would have made, and
what the owner needs from it to go on is small (:class:`Result`): the races it reversed above its branch, to plan in
the owner's tree in the order they were found, and what its first step touched.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from lab.engine.core._footprint import Footprint
from lab.engine.core._run import Decision, RunResult
from lab.engine.core._schedule import schedule_length, schedule_string
from lab.engine.search._exploration import Exploration, run_class, tally
from lab.engine.search._exploration import _canonical as canonical
from lab.engine.search._exploration import _multinomial as multinomial
from lab.engine.search._explorer import Explorer
from lab.engine.search._subtrees import Branch, Subtree
from lab.engine.search._tree import Event

if TYPE_CHECKING:
    from lab.engine.search._choices import Guide
    from lab.engine.search._tree import Node

Key = tuple[str, int, str]
"""A branch of the search: the schedule that leads to its decision, the decision's index, the actor it runs."""


@dataclass(frozen=True)
class Ran:
    """One run of a subtree, as the search that tallies it needs it: cut short (``asleep``: as redundant) or
    finished, with its outcome, class, digest and the orders a naive search would try; the run itself and its payload
    (``best``) only if it may be its outcome's example (better than every earlier run of its item with that outcome:
    the example is the best of all, whatever the order, and a run no better than an earlier one of its item, which is
    tallied first, cannot be it). Most runs repeat an outcome, so most travel without the run. ``naive`` is counted
    for the item's first finished run only (0 for the others): the tally keeps the first one in the search's order."""

    cut: bool
    asleep: bool
    key: str
    name: bytes
    parts: list[Any]
    preemptions: int
    naive: int
    bounded: bool
    best: tuple[RunResult, object] | None = None


@dataclass
class Result:
    """What the owner of the decisions above a subtree needs once the subtree is explored: the races it reversed
    at or above its decision (each planned in the owner's tree, in order), what its first step touched, whether a
    bound skipped anything; and, for a subtree explored on another machine, its runs."""

    text: str
    outside: list[tuple[int, list[Event]]]
    first: Footprint
    bounded: bool
    runs: list[Ran] = field(default_factory=list)


def normal(subtree: Subtree) -> str:
    """The inputs of ``subtree`` as text: its branch's own footprint is left out (the subtree's first run records what
    that step really touches; nothing reads the planned one)."""
    branch = subtree.branch
    return replace(subtree, branch=Branch(branch.actor, frozenset(), branch.children)).to_text()


def planned(explorer: Explorer, nodes: Sequence[Node], floor: int) -> Iterator[tuple[Key, Subtree]]:
    """The branches planned below decision ``floor`` and not begun, shallowest first (the search reaches them last),
    each as it would be begun now (:func:`normal` writes its inputs)."""
    for subtree in explorer.pending_subtrees(nodes):
        if subtree.depth > floor:
            yield (subtree.prefix, subtree.depth, subtree.branch.actor), subtree


def key_here(explorer: Explorer, nodes: Sequence[Node]) -> Key:
    """The branch the search has just begun, at its last node."""
    decisions = [Decision(node.enabled, node.chosen) for node in nodes[:-1]]
    return schedule_string(decisions, explorer.actors), len(nodes) - 1, nodes[-1].chosen


def inputs_here(explorer: Explorer, nodes: Sequence[Node]) -> str:
    """The inputs of the branch the search has just begun (at its last node), as :func:`normal` writes them for a
    branch not begun."""
    decisions: list[Decision] = []
    sleep: dict[int, dict[str, Footprint]] = {}
    for depth, node in enumerate(nodes):
        here = {q: fp for q, fp in {**node.sleep, **node.explored}.items() if q != node.chosen}
        if here:
            sleep[depth] = here
        if depth < len(nodes) - 1:
            decisions.append(Decision(node.enabled, node.chosen))
    depth = len(nodes) - 1
    node = nodes[depth]
    children = node.wakeup[0].children if node.wakeup and node.wakeup[0].actor == node.chosen else []
    prefix = schedule_string(decisions, explorer.actors)
    return Subtree(prefix, depth, Branch(node.chosen, frozenset(), children), sleep).to_text()


def apply(explorer: Explorer, nodes: list[Node], found: Exploration, result: Result) -> None:
    """Go on as if the subtree begun at the last node had been explored here: plan the races it reversed above its
    decision (those above this search's own subtree are noted for the search that owns them, as it would note its
    own), and record what its first step touched."""
    depth = len(nodes) - 1
    for j, sequence in result.outside:
        explorer.plan_found_below(nodes, j, sequence)
    node = nodes[depth]
    if result.first:
        node.explored[node.chosen] = result.first
        node.executed = result.first
        if node.wakeup and node.wakeup[0].actor == node.chosen:
            node.wakeup[0].footprint = result.first
    found.bounded = found.bounded or result.bounded


def ran(
    explorer: Explorer,
    run: RunResult,
    key: str,
    payload: object,
    policy: Guide,
    found: Exploration,
    best: dict[str, tuple[int, int, str]],
) -> Ran:
    """A run of a worker's search as it travels, digested and named where it ran; ``best`` is the best rank of each
    outcome in its item so far (updated). An example travels slimmed: the trace and accesses stay where the run was
    made (a failing run is replayed for its explanation)."""
    parts = explorer.digest(run)
    if policy.pruned:
        return Ran(True, policy.asleep, "", b"", parts, 0, 0, found.bounded)
    name = run_class(run)
    first = not best  # the item's first finished run
    preemptions = policy.preemptions
    example = None
    before = best.get(key)
    # the schedule is written only for a run that may be the better example (as tally does): fewer preemptions,
    # or as many and no longer; most runs repeat an outcome with a better example already
    if (
        before is None
        or preemptions < before[0]
        or (preemptions == before[0] and schedule_length(run.decisions, explorer.actors) <= before[1])
    ):
        rank = canonical(preemptions, schedule_string(run.decisions, explorer.actors))
        if before is None or rank < before:
            best[key] = rank
            example = (replace(run, trace=(), accesses=()), payload)
    # the tally keeps the naive count of the first finished run in the search's order, which is the first finished
    # run of its item (what comes before it in the item is cut runs, or children with no finished run): the item's
    # later runs need not count theirs (0 stands for "not counted", as no run has 0 orders)
    naive = multinomial(run) if first else 0
    return Ran(False, False, key, name, parts, preemptions, naive, found.bounded, example)


def take(explorer: Explorer, found: Exploration, one: Ran) -> None:
    """Count one run into ``found`` as the one-process search counts its own, then hand its digest to the caller and
    report progress (in the search's order, so the caller sees what the one-process search shows it)."""
    if one.cut:
        found.pruned += 1
        found.blocked += one.asleep
        found.last_key = None
    else:
        found.schedules += 1
        found.last_key = one.key
        if one.best is not None:
            tally(found, one.best[0], one.key, one.best[1], one.preemptions, explorer.actors, one.name)
        else:  # what tally does with a run that is not its outcome's best
            found.counts[one.key] = found.counts.get(one.key, 0) + 1
            found.naive_bound = found.naive_bound or one.naive
            found.class_names.add(one.name)
    found.bounded = found.bounded or one.bounded
    explorer.adopt_parts(one.parts, found)
