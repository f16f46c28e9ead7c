"""Correct twin of sleep_vs_timed_wait: b waits longer than a sleeps, so it sees the event whichever begins first."""

import threading
import time

from lab import Scenario, acceptable, actor, forbidden


class SleepWithinTimedWait(Scenario):
    source = "soundness suite: a timed wait against a sleep"
    line_modules = (__name__,)
    outcomes = (
        acceptable("b saw the event", b="True"),
        forbidden("b timed out while a slept", b="False"),
    )

    def setup(self) -> None:
        self.ready = threading.Event()

    @actor
    def a(self) -> None:
        time.sleep(1.0)
        self.ready.set()

    @actor
    def b(self) -> str:
        return str(self.ready.wait(timeout=5.0))
