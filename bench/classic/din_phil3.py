"""din_phil3 (fixed): 3 dining philosophers where the last one takes its forks in the other order.

Written for this benchmark as the correct twin of din_phil{n}_sat: the global fork order rules out the deadlock.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

BUGGY = False
THREADS = 3
N = 3


class State:
    def __init__(self) -> None:
        self.forks = [threading.Lock() for _ in range(N)]
        self.meals = 0


def setup(lab: object) -> State:
    return State()


def philosopher(s: State, i: int) -> None:
    left = s.forks[i]
    right = s.forks[(i + 1) % N]
    first, second = (right, left) if i == N - 1 else (left, right)
    with first, second:
        s.meals = s.meals + 1


def _actor(i: int) -> Callable[[State], object]:
    return lambda s: philosopher(s, i)


ACTORS: dict[str, Callable[[State], object]] = {f"t{i + 1}": _actor(i) for i in range(N)}


def check(s: State) -> dict[str, bool]:
    return {"every philosopher ate": s.meals == N}
