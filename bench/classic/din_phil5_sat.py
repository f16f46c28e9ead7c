"""din_phil5_sat (SCTBench CS, from the ESBMC benchmarks): 5 dining philosophers, each left fork first.

Uncertain port, faithful in spirit: each philosopher takes its left fork, then its right one, eats once
(bumping a shared meal count under both forks) and puts them down. A schedule in which every philosopher
holds its left fork deadlocks; the original's exact assertion is not recalled.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

BUGGY = True
THREADS = 5
N = 5


class State:
    def __init__(self) -> None:
        self.forks = [threading.Lock() for _ in range(N)]
        self.meals = 0


def setup(lab: object) -> State:
    return State()


def philosopher(s: State, i: int) -> None:
    left = s.forks[i]
    right = s.forks[(i + 1) % N]
    first, second = left, right
    with first, second:
        s.meals = s.meals + 1


def _actor(i: int) -> Callable[[State], object]:
    return lambda s: philosopher(s, i)


ACTORS: dict[str, Callable[[State], object]] = {f"t{i + 1}": _actor(i) for i in range(N)}


def check(s: State) -> dict[str, bool]:
    return {"every philosopher ate": s.meals == N}
