"""Racy: b's try-acquire fails while a is inside its critical section, and b then reads what a is half-way through.

``acquire(blocking=False)`` never waits: it can run while a holds the lock (and fail there), so the explorer must
reverse its race with a's section where it lies, not at a's acquisition (where b would simply get the lock).
"""

import threading

from lab import Scenario, acceptable, actor, forbidden


class TryAcquireMidSection(Scenario):
    source = "soundness suite: a try-acquire inside another actor's critical section"
    line_modules = (__name__,)
    outcomes = (
        forbidden("b's attempt failed while a was half-way through (phase 1)", b="busy@1"),
        acceptable("b got the lock, or failed and saw a before or after its section"),
    )

    def setup(self) -> None:
        self.lock = threading.Lock()
        self.half_way = threading.Event()
        self.phase = 0

    @actor
    def a(self) -> None:
        with self.lock:
            self.phase = 1
            self.half_way.set()
            self.phase = 2

    @actor
    def b(self) -> str:
        if self.lock.acquire(blocking=False):
            self.lock.release()
            return "got"
        return f"busy@{self.phase}"
