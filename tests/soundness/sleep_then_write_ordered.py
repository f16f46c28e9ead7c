"""Correct twin of sleep_then_write: a sleeps, then waits for b's read to be done before it writes."""

import threading
import time

from lab import Scenario, acceptable, actor, forbidden


class SleepThenWriteOrdered(Scenario):
    source = "soundness suite: a sleep before the raced step"
    line_modules = (__name__,)
    outcomes = (
        acceptable("b read before a wrote", seen=0),
        forbidden("a woke and wrote before b read", seen=1),
    )

    def setup(self) -> None:
        self.x = 0
        self.seen = -1
        self.read = threading.Event()

    @actor
    def a(self) -> None:
        time.sleep(0.01)
        self.read.wait()
        self.x = 1

    @actor
    def b(self) -> None:
        self.seen = self.x
        self.read.set()

    def observe(self) -> dict[str, int]:
        return {"seen": self.seen}
