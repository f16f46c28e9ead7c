"""sync01 (fixed): the consumer tests the condition under the mutex, in a loop, before it waits.

Uncertain port, as sync01_bad is; correct: no wakeup is lost.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

BUGGY = False
THREADS = 2


class State:
    def __init__(self) -> None:
        self.m = threading.Lock()
        self.full = threading.Condition(self.m)
        self.num = 0


def setup(lab: object) -> State:
    return State()


def producer(s: State) -> None:
    with s.m:
        s.num = s.num + 1
        s.full.notify()


def consumer(s: State) -> None:
    with s.m:
        while s.num == 0:
            s.full.wait()
        s.num = s.num - 1


ACTORS: dict[str, Callable[[State], object]] = {"t1": producer, "t2": consumer}


def check(s: State) -> dict[str, bool]:
    return {"the item was consumed": s.num == 0}
