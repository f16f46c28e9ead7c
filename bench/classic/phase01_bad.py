"""phase01_bad (SCTBench CS, from the Inspect benchmarks): two-phase locking gone wrong.

Uncertain port, faithful in spirit: each thread takes its own lock, then (phase two) the other thread's lock before
releasing its own; the original's exact shape is not recalled. Schedules where both finish phase one deadlock.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

BUGGY = True
THREADS = 2


class State:
    def __init__(self) -> None:
        self.x = threading.Lock()
        self.y = threading.Lock()
        self.phase = [0, 0]


def setup(lab: object) -> State:
    return State()


def t1(s: State) -> None:
    s.x.acquire()
    s.phase[0] = 1
    s.y.acquire()
    s.phase[0] = 2
    s.x.release()
    s.y.release()


def t2(s: State) -> None:
    s.y.acquire()
    s.phase[1] = 1
    s.x.acquire()
    s.phase[1] = 2
    s.y.release()
    s.x.release()


ACTORS: dict[str, Callable[[State], object]] = {"t1": t1, "t2": t2}


def check(s: State) -> dict[str, bool]:
    return {"both reached phase two": s.phase == [2, 2]}
