"""Racy: whether b's timed wait times out depends on whether b is already waiting when a begins to sleep.

A timed wait fires when nobody else can go on and no earlier deadline is pending, which depends on a sleeper that
no data footprint names: sleeps and timed waits both write the virtual clock, so the explorer orders them.
"""

import threading
import time

from lab import Scenario, acceptable, actor, forbidden


class SleepVsTimedWait(Scenario):
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
        return str(self.ready.wait(timeout=0.01))
