"""deadlock01 (fixed: SCTBench CS deadlock01_bad with both threads taking the locks in one order).

Correct: no deadlock, the counter ends where it started.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

BUGGY = False
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
    with s.a, s.b:
        s.counter = s.counter - 1


ACTORS: dict[str, Callable[[State], object]] = {"t1": t1, "t2": t2}


def check(s: State) -> dict[str, bool]:
    return {"counter back to 1": s.counter == 1}
