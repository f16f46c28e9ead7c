"""Correct twin of locked_query_mid_section: b asks and reads while holding the lock itself."""

import threading

from lab import Scenario, acceptable, actor, forbidden


class LockedQueryUnderLock(Scenario):
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
        with self.lock:
            return f"{self.lock.locked()}@{self.phase}"
