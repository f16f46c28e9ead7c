"""queue_bad (SCTBench CS, from ESBMC): a producer and a consumer share a bounded FIFO queue of SIZE 20.

The producer enqueues one element unconditionally, then loops ``SIZE - 1`` times enqueueing when ``enqueue_flag``
is up; the consumer loops ``SIZE`` times and, when ``dequeue_flag`` is up, checks the dequeued value against
``stored_elements[i]`` for its loop index ``i``, which drifts from the queue's head as soon as either thread spins
an iteration. The original's nondeterministic values are distinct values here (``100 + k``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable

BUGGY = True
THREADS = 2
SIZE = 20


class Queue:
    def __init__(self) -> None:
        self.element = [0] * SIZE
        self.head = 0
        self.tail = 0
        self.amount = 0

    def enqueue(self, x: int) -> bool:
        if self.amount == SIZE:
            return True
        self.element[self.tail] = x
        self.amount = self.amount + 1
        self.tail = (self.tail + 1) % SIZE
        return False

    def dequeue(self) -> int:
        x = self.element[self.head]
        self.amount = self.amount - 1
        self.head = (self.head + 1) % SIZE
        return x


class State:
    def __init__(self) -> None:
        self.m = threading.Lock()
        self.queue = Queue()
        self.stored_elements = [0] * SIZE
        self.enqueue_flag = True
        self.dequeue_flag = False


def setup(lab: object) -> State:
    return State()


def producer(s: State) -> None:
    with s.m:
        value = 100
        if s.queue.enqueue(value):
            raise AssertionError("queue full on the first enqueue")
        s.stored_elements[0] = value
    for i in range(SIZE - 1):
        with s.m:
            if s.enqueue_flag:
                value = 101 + i
                s.queue.enqueue(value)
                s.stored_elements[i + 1] = value
                s.enqueue_flag = False
                s.dequeue_flag = True


def consumer(s: State) -> None:
    for i in range(SIZE):
        with s.m:
            if s.dequeue_flag:
                got = s.queue.dequeue()
                if got != s.stored_elements[i]:
                    raise AssertionError(f"dequeued {got}, expected stored_elements[{i}] = {s.stored_elements[i]}")
                s.dequeue_flag = False
                s.enqueue_flag = True


ACTORS: dict[str, Callable[[State], object]] = {"t1": producer, "t2": consumer}


def check(s: State) -> dict[str, bool]:
    return {}
