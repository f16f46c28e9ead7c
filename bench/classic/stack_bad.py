"""stack_bad (SCTBench CS, from ESBMC): a pusher and a popper on a bounded stack of SIZE 5.

The pusher pushes ``SIZE`` values, each under the mutex, and raises ``flag``; the popper loops ``SIZE`` times and
pops whenever ``flag`` is up, which it stays once raised: a pop can come before its push and underflow.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

BUGGY = True
THREADS = 2
SIZE = 5
OVERFLOW = -1
UNDERFLOW = -2


class State:
    def __init__(self) -> None:
        self.m = threading.Lock()
        self.arr = [0] * SIZE
        self.top = 0
        self.flag = False


def setup(lab: object) -> State:
    return State()


def push(s: State, x: int) -> int:
    if s.top == SIZE:
        return OVERFLOW
    s.arr[s.top] = x
    s.top = s.top + 1
    return 0


def pop(s: State) -> int:
    if s.top == 0:
        return UNDERFLOW
    s.top = s.top - 1
    return s.arr[s.top]


def pusher(s: State) -> None:
    for i in range(SIZE):
        with s.m:
            if push(s, i) == OVERFLOW:
                raise AssertionError("stack overflow")
            s.flag = True


def popper(s: State) -> None:
    for _ in range(SIZE):
        with s.m:
            if s.flag and pop(s) == UNDERFLOW:
                raise AssertionError("stack underflow")


ACTORS: dict[str, Callable[[State], object]] = {"t1": pusher, "t2": popper}


def check(s: State) -> dict[str, bool]:
    return {}
