"""Two consumers that wait with ``if`` (not ``while``) for a producer's ``notify_all``: a woken consumer may find
the item already taken by the other. The bug needs both consumers parked, one notification, and both woken
consumers to take the lock back before the producer's next acquisition: a race between a lock's release and the
next acquisition, which the explorer reverses at the holder's acquisition."""

from __future__ import annotations

import threading


class Items:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.full = threading.Condition(self.lock)
        self.count = 0

    def produce_two(self) -> None:
        for _ in range(2):
            with self.lock:
                self.count += 1
                self.full.notify_all()

    def consume(self) -> None:
        with self.lock:
            if self.count == 0:
                self.full.wait()
            self.count -= 1
            if self.count < 0:
                raise AssertionError(f"took an item that was not there: count {self.count}")
