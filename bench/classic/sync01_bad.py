"""sync01_bad (SCTBench CS, from the Inspect benchmarks): a producer and a consumer on a condition variable.

Uncertain port, faithful in spirit: the consumer tests ``num == 0`` before taking the mutex and then
waits unconditionally; a producer that fills and signals in between is a lost wakeup, and the consumer
waits forever (a deadlock).
"""

from __future__ import annotations

import threading
from collections.abc import Callable

BUGGY = True
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
    empty = s.num == 0
    with s.m:
        if empty:
            s.full.wait()
        s.num = s.num - 1


ACTORS: dict[str, Callable[[State], object]] = {"t1": producer, "t2": consumer}


def check(s: State) -> dict[str, bool]:
    return {"the item was consumed": s.num == 0}
