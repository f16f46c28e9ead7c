"""lazy01_bad (SCTBench CS, from the ESBMC/Inspect benchmarks): three threads on one mutex-protected datum.

Two threads add 1 and 2; the third asserts the datum is still below 3, which fails when it runs after both.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

BUGGY = True
THREADS = 3


class State:
    def __init__(self) -> None:
        self.m = threading.Lock()
        self.data = 0


def setup(lab: object) -> State:
    return State()


def t1(s: State) -> None:
    with s.m:
        s.data = s.data + 1


def t2(s: State) -> None:
    with s.m:
        s.data = s.data + 2


def t3(s: State) -> None:
    with s.m:
        if s.data >= 3:
            raise AssertionError(f"data reached {s.data}")


ACTORS: dict[str, Callable[[State], object]] = {"t1": t1, "t2": t2, "t3": t3}


def check(s: State) -> dict[str, bool]:
    return {}
