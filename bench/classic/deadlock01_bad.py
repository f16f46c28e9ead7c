"""deadlock01_bad (SCTBench CS, from the Inspect benchmarks): two threads take two locks in opposite orders.

A schedule where each holds its first lock deadlocks.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

BUGGY = True
THREADS = 2


class State:
    def __init__(self) -> None:
        self.a = threading.Lock()
        self.b = threading.Lock()
        self.counter = 1


def setup(lab: object) -> State:
    return State()


def t1(s: State) -> None:
    with s.a, s.b:
        s.counter = s.counter + 1


def t2(s: State) -> None:
    with s.b, s.a:
        s.counter = s.counter - 1


ACTORS: dict[str, Callable[[State], object]] = {"t1": t1, "t2": t2}


def check(s: State) -> dict[str, bool]:
    return {"counter back to 1": s.counter == 1}
