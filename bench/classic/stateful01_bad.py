"""stateful01_bad (SCTBench CS, from the Inspect benchmarks): two threads update two data under two locks.

Uncertain port, faithful in spirit: thread 1 bumps ``data1`` under ``ma``, then adds ``data1`` to
``data2`` under ``mb``; thread 2 adds 5 to ``data1`` and subtracts 6 from ``data2``. The final check
expects thread 2's update to ``data1`` to be seen by thread 1 (data2 == 20), which a schedule running
thread 1 through first breaks (data2 == 15).
"""

from __future__ import annotations

import threading
from collections.abc import Callable

BUGGY = True
THREADS = 2


class State:
    def __init__(self) -> None:
        self.ma = threading.Lock()
        self.mb = threading.Lock()
        self.data1 = 10
        self.data2 = 10


def setup(lab: object) -> State:
    return State()


def t1(s: State) -> None:
    with s.ma:
        s.data1 = s.data1 + 1
    with s.mb:
        s.data2 = s.data2 + s.data1


def t2(s: State) -> None:
    with s.ma:
        s.data1 = s.data1 + 5
    with s.mb:
        s.data2 = s.data2 - 6


ACTORS: dict[str, Callable[[State], object]] = {"t1": t1, "t2": t2}


def check(s: State) -> dict[str, bool]:
    return {"data1 is 16": s.data1 == 16, "data2 is 20": s.data2 == 20}
