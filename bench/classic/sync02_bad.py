"""sync02_bad (SCTBench CS, from the Inspect benchmarks): ``if`` where ``while`` belongs around a wait.

Uncertain port, faithful in spirit: one producer makes two items, each with ``notify_all``; two consumers each wait
with ``if num == 0`` instead of a loop. A consumer woken by the first notification after the other consumer took
the item takes one that is not there, and the count goes negative.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

BUGGY = True
THREADS = 3


class State:
    def __init__(self) -> None:
        self.m = threading.Lock()
        self.full = threading.Condition(self.m)
        self.num = 0


def setup(lab: object) -> State:
    return State()


def producer(s: State) -> None:
    for _ in range(2):
        with s.m:
            s.num = s.num + 1
            s.full.notify_all()


def consumer(s: State) -> None:
    with s.m:
        if s.num == 0:
            s.full.wait()
        s.num = s.num - 1
        if s.num < 0:
            raise AssertionError(f"num went to {s.num}")


ACTORS: dict[str, Callable[[State], object]] = {"t1": producer, "t2": consumer, "t3": consumer}


def check(s: State) -> dict[str, bool]:
    return {"both items consumed": s.num == 0}
