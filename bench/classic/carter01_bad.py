"""carter01_bad (SCTBench CS, from the Inspect benchmarks): two locks used like a readers' gate.

Uncertain port, faithful in spirit: each thread takes ``m``, bumps its own counter and, when it is the first in,
takes ``l`` while still holding ``m``; it later re-takes ``m`` to leave and releases ``l``. A thread that blocks on
``l`` while holding ``m`` deadlocks against the thread that holds ``l`` and needs ``m`` to leave.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

BUGGY = True
THREADS = 2


class State:
    def __init__(self) -> None:
        self.m = threading.Lock()
        self.l = threading.Lock()
        self.a = 0
        self.b = 0


def setup(lab: object) -> State:
    return State()


def t1(s: State) -> None:
    s.m.acquire()
    s.a = s.a + 1
    if s.a == 1:
        s.l.acquire()
    s.m.release()
    s.m.acquire()
    s.a = s.a - 1
    if s.a == 0:
        s.l.release()
    s.m.release()


def t2(s: State) -> None:
    s.m.acquire()
    s.b = s.b + 1
    if s.b == 1:
        s.l.acquire()
    s.m.release()
    s.m.acquire()
    s.b = s.b - 1
    if s.b == 0:
        s.l.release()
    s.m.release()


ACTORS: dict[str, Callable[[State], object]] = {"t1": t1, "t2": t2}


def check(s: State) -> dict[str, bool]:
    return {}
