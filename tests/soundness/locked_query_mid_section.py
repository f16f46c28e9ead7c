"""Racy: b asks ``lock.locked()`` (which never waits) and then reads what a, holding the lock, is half-way through.

A query can run while a holds the lock, so the explorer must reverse its race with a's section where it lies, not
at a's acquisition.
"""

import threading

from lab import Scenario, acceptable, actor, forbidden


class LockedQueryMidSection(Scenario):
    source = "soundness suite: a lock query inside another actor's critical section"
    line_modules = (__name__,)
    outcomes = (
        forbidden("b saw the lock held with a half-way through (phase 1)", b="True@1"),
        acceptable("b saw a before or after its section"),
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
        return f"{self.lock.locked()}@{self.phase}"
