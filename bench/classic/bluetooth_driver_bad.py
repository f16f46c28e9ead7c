"""bluetooth_driver_bad (SCTBench CS, from Qadeer and Wu's KISS paper): a simplified Windows Bluetooth driver.

The adder checks ``stopping_flag`` and then increments ``pending_io`` in two steps, so the stopper can set the flag,
drop the last reference and mark the driver stopped in between: the adder then does work on a stopped driver.
``stopping_event`` is a flag the stopper waits for (the original ``assume``s it), modelled with a Condition.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

BUGGY = True
THREADS = 2


class State:
    def __init__(self) -> None:
        self.m = threading.Lock()
        self.event = threading.Condition(threading.Lock())
        self.pending_io = 1
        self.stopping_flag = False
        self.stopping_event = False
        self.stopped = False


def setup(lab: object) -> State:
    return State()


def io_increment(s: State) -> int:
    if s.stopping_flag:
        return -1
    with s.m:
        s.pending_io = s.pending_io + 1
    return 0


def io_decrement(s: State) -> None:
    with s.m:
        s.pending_io = s.pending_io - 1
        pending = s.pending_io
    if pending == 0:
        with s.event:
            s.stopping_event = True
            s.event.notify_all()


def adder(s: State) -> None:
    status = io_increment(s)
    if status == 0 and s.stopped:
        raise AssertionError("the driver does work after it was stopped")
    io_decrement(s)


def stopper(s: State) -> None:
    s.stopping_flag = True
    io_decrement(s)
    with s.event:
        while not s.stopping_event:
            s.event.wait()
    s.stopped = True


ACTORS: dict[str, Callable[[State], object]] = {"t1": adder, "t2": stopper}


def check(s: State) -> dict[str, bool]:
    return {}
