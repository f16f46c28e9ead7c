"""The explorer keeps its happens-before index from run to run: taking steps back must leave the index as if they
had never been added, and a superset of the shared things must give the same answers."""

from __future__ import annotations

import random

from lab.engine.footprint import Footprint
from lab.engine.interleavings import History, SharedSoFar, shared_things

_THINGS = ("a", "b", "c")


def _random_steps(rng: random.Random, count: int) -> list[tuple[str, Footprint]]:
    steps = []
    for _ in range(count):
        entries = {
            (rng.choice(_THINGS), rng.choice(("k1", "k2", "*")), rng.choice("rw")) for _ in range(rng.randint(0, 3))
        }
        if rng.random() < 0.05:
            entries.add(("*", "*", "w"))
        steps.append((rng.choice(("p", "q", "r")), frozenset(entries)))
    return steps


def _answers(history: History, steps: list[tuple[str, Footprint]], start: int) -> list[object]:
    out: list[object] = []
    for k in range(start, len(steps)):
        actor, footprint = steps[k]
        if footprint:
            found = history.step(k, actor, footprint, ask=True)
            out.append(list((found or {}).items()))
    return out


def test_rollback_then_new_steps_answers_as_a_fresh_index() -> None:
    rng = random.Random(7)
    for _ in range(300):
        first = _random_steps(rng, rng.randint(1, 20))
        branch = rng.randint(0, len(first))
        second = first[:branch] + _random_steps(rng, rng.randint(0, 20))
        shared = SharedSoFar()
        shared.add(first + second)
        kept = History(shared.things)
        _answers(kept, first, 0)
        kept.rollback(branch)
        fresh = History(shared_things(second))
        _answers(fresh, second[:branch], 0)
        assert _answers(kept, second, branch) == _answers(fresh, second, branch)


def test_shared_so_far_covers_each_run() -> None:
    rng = random.Random(11)
    shared = SharedSoFar()
    for _ in range(200):
        steps = _random_steps(rng, rng.randint(0, 15))
        shared.add(steps)
        assert shared_things(steps) <= shared.things
