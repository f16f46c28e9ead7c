"""Correct twin of try_acquire_mid_section: b reads the phase only once its attempt got the lock."""

import threading

from lab import Scenario, acceptable, actor, forbidden


class TryAcquireUnderLock(Scenario):
    source = "soundness suite: a try-acquire inside another actor's critical section"
    line_modules = (__name__,)
    outcomes = (
        forbidden("b's attempt failed while a was half-way through (phase 1)", b="busy@1"),
        acceptable("b failed, or got the lock and saw a before or after its section"),
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
            try:
                return f"got@{self.phase}"
            finally:
                self.lock.release()
        return "busy"
