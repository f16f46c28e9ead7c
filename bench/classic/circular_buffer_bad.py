"""circular_buffer_bad (SCTBench CS, from ESBMC): a sender and a receiver hand values through a ring buffer.

Each thread loops ``N = 7`` times taking the mutex and acts only when its flag (``send``/``receive``) is up. The
receiver asserts that the value it removes equals its loop index, which is wrong as soon as it spins an iteration
while nothing was sent.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

BUGGY = True
THREADS = 2

BUFFER_MAX = 10
N = 7
ERROR = -1


class State:
    def __init__(self) -> None:
        self.m = threading.Lock()
        self.buffer = [0] * BUFFER_MAX
        self.first = 0
        self.next = 0
        self.buffer_size = BUFFER_MAX
        self.send = True
        self.receive = False


def setup(lab: object) -> State:
    return State()


def remove_log_element(s: State) -> int:
    if s.next > 0 and s.first < s.buffer_size:
        s.first = s.first + 1
        return s.buffer[s.first - 1]
    return ERROR


def insert_log_element(s: State, b: int) -> int:
    if s.next < s.buffer_size and s.buffer_size > 0:
        s.buffer[s.next] = b
        s.next = (s.next + 1) % s.buffer_size
        return b
    return ERROR


def sender(s: State) -> None:
    for i in range(N):
        with s.m:
            if s.send:
                insert_log_element(s, i)
                s.send = False
                s.receive = True


def receiver(s: State) -> None:
    for i in range(N):
        with s.m:
            if s.receive:
                got = remove_log_element(s)
                if got != i:
                    raise AssertionError(f"received {got} in iteration {i}")
                s.receive = False
                s.send = True


ACTORS: dict[str, Callable[[State], object]] = {"t1": sender, "t2": receiver}


def check(s: State) -> dict[str, bool]:
    return {}
