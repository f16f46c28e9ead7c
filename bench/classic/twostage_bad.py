"""twostage_bad (SCTBench CS, from the Inspect benchmarks): a two-stage update under two locks, 2 threads.

Writers set ``data1 = 1`` under ``m1``, then ``data2 = data1 + 1`` under ``m2``; a reader reads
``data1`` under ``m1`` and ``data2`` under ``m2`` and asserts ``data2 == data1 + 1`` once it saw
``data1 == 1``, which fails when it reads between a writer's two stages.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

BUGGY = True
THREADS = 2
WRITERS = 1
READERS = 1


class State:
    def __init__(self) -> None:
        self.m1 = threading.Lock()
        self.m2 = threading.Lock()
        self.data1 = 0
        self.data2 = 0


def setup(lab: object) -> State:
    return State()


def writer(s: State) -> None:
    with s.m1:
        s.data1 = 1
    with s.m2:
        s.data2 = s.data1 + 1


def reader(s: State) -> None:
    with s.m1:
        t1 = s.data1
    with s.m2:
        t2 = s.data2
    if t1 != 0 and t2 != t1 + 1:
        raise AssertionError(f"read data1={t1}, data2={t2}")


ACTORS: dict[str, Callable[[State], object]] = {
    **{f"t{i + 1}": writer for i in range(WRITERS)},
    **{f"t{WRITERS + i + 1}": reader for i in range(READERS)},
}


def check(s: State) -> dict[str, bool]:
    return {}
