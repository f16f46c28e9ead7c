"""Happens-before, computed one way: its clocks against the definition, and the class names built on them.

:class:`HappensBefore` joins only a few earlier steps per step (the latest write of a key, each actor's latest
read), on the claim that they cover every conflicting step. These tests check the clocks against the definition
itself, worked out by brute force with :func:`lab.engine.core._footprint.conflict` (program order plus every
conflicting pair, closed transitively), over small drawn runs with keyed and whole-object entries, a step that may
touch everything, probes and empty steps.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lab.engine.core import Footprint, conflict
from lab.engine.search._happens_before import HappensBefore, class_of
from lab.engine.search._races import Races
from lab.engine.search._tree import Node

ACTORS = ("a", "b", "c")
_ENTRY = st.one_of(
    st.tuples(st.sampled_from(["obj:x", "obj:y", "lock"]), st.sampled_from(["k1", "k2", "*"]), st.sampled_from("rw")),
    st.just(("probe", "p", "w")),
    st.just(("*", "*", "w")),
)
_STEP = st.tuples(st.sampled_from(ACTORS), st.frozensets(_ENTRY, max_size=3))
_RUN = st.lists(_STEP, max_size=12)


def _definition(run: list[tuple[str, Footprint]]) -> list[dict[str, int]]:
    """Each step's clock by brute force: its actor's latest step at or before it in the transitive closure of
    program order and conflicts."""
    below: list[set[int]] = []
    for k, (actor, footprint) in enumerate(run):
        direct = {j for j in range(k) if run[j][0] == actor or conflict(run[j][1], footprint)}
        below.append({k}.union(*(below[j] for j in direct)))
    return [{who: max((j for j in mine if run[j][0] == who), default=-1) for who in ACTORS} for mine in below]


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(_RUN)
def test_clocks_are_the_definition(run: list[tuple[str, Footprint]]) -> None:
    order = HappensBefore(ACTORS)
    clocks = [order.step(k, actor, footprint) for k, (actor, footprint) in enumerate(run)]
    expected = _definition(run)
    assert [dict(zip(ACTORS, clock, strict=True)) for clock in clocks] == expected


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(_RUN)
def test_a_known_clock_is_kept_and_the_rest_follow_from_it(run: list[tuple[str, Footprint]]) -> None:
    """The explorer hands back the clocks of a replayed prefix: what follows comes out as if they were worked out."""
    fresh = HappensBefore(ACTORS)
    clocks = [fresh.step(k, actor, footprint) for k, (actor, footprint) in enumerate(run)]
    half = len(run) // 2
    replayed = HappensBefore(ACTORS)
    again = [replayed.step(k, a, fp, clocks[k] if k < half else None) for k, (a, fp) in enumerate(run)]
    assert again == clocks


def _nodes(run: list[tuple[str, Footprint]]) -> list[Node]:
    nodes = []
    for actor, footprint in run:
        node = Node(ACTORS, None, {}, actor, 0, {})
        node.executed = footprint
        nodes.append(node)
    return nodes


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(_RUN)
def test_the_race_analysis_gives_each_step_the_same_clock(run: list[tuple[str, Footprint]]) -> None:
    """The race analysis reads each step's clock off its conflict index, not off a HappensBefore of its own: the
    clocks are still the definition, worked out afresh and after a replayed half whose clocks are kept."""
    expected = _definition(run)
    nodes = _nodes(run)
    Races(ACTORS, conflict).add_races(nodes, 0)
    assert [dict(zip(ACTORS, node.clock or (), strict=True)) for node in nodes] == expected
    again = _nodes(run)
    half = len(run) // 2
    for k in range(half):
        again[k].clock = nodes[k].clock
    Races(ACTORS, conflict).add_races(again, half)
    assert [node.clock for node in again] == [node.clock for node in nodes]


def _name(run: list[tuple[str, frozenset[tuple[str, str, str]]]]) -> bytes:
    return class_of([actor for actor, _ in run], [footprint for _, footprint in run])


def test_the_class_name_ignores_the_order_of_commuting_steps_and_sees_a_swapped_conflict() -> None:
    x_write = frozenset({("obj:x", "k1", "w")})
    y_write = frozenset({("obj:y", "k1", "w")})
    x_read = frozenset({("obj:x", "k1", "r")})
    base = [("a", x_write), ("b", y_write), ("b", x_read)]
    commuted = [("b", y_write), ("a", x_write), ("b", x_read)]  # a's write and b's first step commute
    swapped = [("b", y_write), ("b", x_read), ("a", x_write)]  # b's read now comes before a's write
    assert _name(base) == _name(commuted)
    assert _name(base) != _name(swapped)
