"""stack (fixed; SCTBench CS stack_bad made correct): the popper pops only what was pushed.

The popper waits on a condition variable until the stack holds an element, so every one of its ``SIZE`` pops
follows a push; written for this benchmark (the original fixed version counts pushes instead).
"""

from __future__ import annotations

import threading
from collections.abc import Callable

BUGGY = False
THREADS = 2
SIZE = 5
OVERFLOW = -1
UNDERFLOW = -2


class State:
    def __init__(self) -> None:
        self.m = threading.Lock()
        self.nonempty = threading.Condition(self.m)
        self.arr = [0] * SIZE
        self.top = 0
        self.popped: list[int] = []


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
            s.nonempty.notify()


def popper(s: State) -> None:
    for _ in range(SIZE):
        with s.m:
            while s.top == 0:
                s.nonempty.wait()
            got = pop(s)
            if got == UNDERFLOW:
                raise AssertionError("stack underflow")
            s.popped.append(got)


ACTORS: dict[str, Callable[[State], object]] = {"t1": pusher, "t2": popper}


def check(s: State) -> dict[str, bool]:
    return {"every value popped once": sorted(s.popped) == list(range(SIZE))}
