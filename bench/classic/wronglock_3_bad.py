"""wronglock_3_bad (SCTBench CS, from the Inspect benchmarks): 1 checker and 3 incrementers on different locks.

The checker reads ``data_value`` and increments it under ``lock1``, asserting nobody moved it in
between; the incrementers use ``lock2``, which protects nothing the checker holds.
Uncertain: the thread split (here 1 + 3).
"""

from __future__ import annotations

import threading
from collections.abc import Callable

BUGGY = True
THREADS = 4
INCREMENTERS = 3


class State:
    def __init__(self) -> None:
        self.lock1 = threading.Lock()
        self.lock2 = threading.Lock()
        self.data_value = 0


def setup(lab: object) -> State:
    return State()


def func_a(s: State) -> None:
    with s.lock1:
        x = s.data_value
        s.data_value = s.data_value + 1
        if s.data_value != x + 1:
            raise AssertionError(f"data_value {s.data_value} != {x} + 1")


def func_b(s: State) -> None:
    with s.lock2:
        value = s.data_value
        s.data_value = value + 1


ACTORS: dict[str, Callable[[State], object]] = {
    "t1": func_a,
    **{f"t{i + 2}": func_b for i in range(INCREMENTERS)},
}


def check(s: State) -> dict[str, bool]:
    return {"every increment counted": s.data_value == INCREMENTERS + 1}
