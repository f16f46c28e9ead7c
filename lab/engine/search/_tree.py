"""The search tree of optimal DPOR: one node per decision, what is planned there and what need not be tried there.

A :class:`Node` is one decision point of the run the search is on. It keeps what the decision showed (who could
run, who ran before, what each actor's next step announced), what was chosen and what that step really touched,
and the two structures the reduction works with:

- a **wakeup tree** (Abdulla, Aronis, Jonsson and Sagonas, POPL 2014): the sequences of steps planned from this
  point, each reversing a race seen in some run, kept as a tree of :class:`Branch` so that a sequence already
  planned -- or equivalent, up to reordering independent steps, to one already planned -- is never added twice
  (:func:`insert`);
- a **sleep set** (Godefroid): the actors whose next step was explored from an earlier point and commutes with
  every step taken since, so that trying it here would repeat a class already run (:func:`sleep_after`).

These are data and small pure functions over them; the explorer (:mod:`lab.engine.search._explorer`) walks the
tree and the race analysis (:mod:`lab.engine.search._races`) plans into it. Conflict between footprints is passed
in (each explorer keeps its own memo of :func:`lab.engine.core._footprint.conflict`).
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Set as AbstractSet

from lab.engine.core._footprint import Footprint
from lab.engine.search._subtrees import Branch

Event = tuple[str, Footprint]
"""A step: its actor and what it touched."""
Conflict = Callable[[Footprint, Footprint], bool]
"""Whether two footprints conflict (the explorer's memo of :func:`lab.engine.core._footprint.conflict`)."""

NOTHING: Footprint = frozenset()
_NO_LOCKS: dict[str, str] = {}  # a node's locks held until it is told (read, never written)
_NO_ACTORS: frozenset[str] = frozenset()


class Node:
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
        self.clock: list[int] | None = None  # vector clock of the step taken here (set by the race analysis)

    def step(self) -> Footprint:
        """What the step taken here touched: as seen after the run, else as announced before it."""
        if self.executed is not None:
            return self.executed
        return self.pending.get(self.chosen, NOTHING)

    def asleep(self) -> dict[str, Footprint] | None:
        """The actors that need not be tried as the first step of what follows this decision: those asleep here and
        the branches explored here before the one taken, each with its step (``None``: none, as at most nodes)."""
        explored = self.explored
        if self.sleep or len(explored) > 1 or (explored and self.chosen not in explored):
            return {**self.sleep, **{q: fp for q, fp in explored.items() if q != self.chosen}}
        return None


def sleep_after(parent: Node, taken: Footprint, conflict: Conflict) -> dict[str, Footprint]:
    """The sleep set of the decision after ``parent``, whose step touched ``taken``: what slept there or was explored
    there before, and commutes with that step (a step it conflicts with wakes it)."""
    asleep = parent.asleep()
    if asleep is None:
        return {}
    return {q: fp for q, fp in asleep.items() if not conflict(fp, taken)}


def weak_initial(sequence: list[Event], actor: str, footprint: Footprint, conflict: Conflict) -> bool:
    """True when ``sequence`` can be reordered to start with a step of ``actor``: its first step there depends on
    nothing before it, or (not in it at all) its next step, ``footprint``, commutes with all of it."""
    for position, (who, touched) in enumerate(sequence):
        if who == actor:
            return not any(other == actor or conflict(fp, touched) for other, fp in sequence[:position])
    return not any(conflict(fp, footprint) for _who, fp in sequence)


def insert(tree: list[Branch], sequence: list[Event], conflict: Conflict) -> None:
    """Add ``sequence`` to a wakeup tree unless a planned path already covers it (it is that path up to
    reordering independent steps, or that path is a prefix of it)."""
    children = tree
    rest = list(sequence)
    while rest:
        for branch in children:
            if weak_initial(rest, branch.actor, branch.footprint, conflict):
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
