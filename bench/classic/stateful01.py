"""stateful01 (fixed): stateful01_bad with thread 1 holding ``ma`` across both of its updates.

Uncertain port, as stateful01_bad is; correct: data2 always ends 20.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

BUGGY = False
THREADS = 2


class State:
    def __init__(self) -> None:
        self.ma = threading.Lock()
        self.mb = threading.Lock()
        self.changed = threading.Condition(self.ma)
        self.data1 = 10
        self.data2 = 10


def setup(lab: object) -> State:
    return State()


def t1(s: State) -> None:
    with s.ma:
        s.data1 = s.data1 + 1
        while s.data1 != 16:
            s.changed.wait()
        with s.mb:
            s.data2 = s.data2 + s.data1


def t2(s: State) -> None:
    with s.ma:
        s.data1 = s.data1 + 5
        s.changed.notify_all()
    with s.mb:
        s.data2 = s.data2 - 6


ACTORS: dict[str, Callable[[State], object]] = {"t1": t1, "t2": t2}


def check(s: State) -> dict[str, bool]:
    return {"data1 is 16": s.data1 == 16, "data2 is 20": s.data2 == 20}
