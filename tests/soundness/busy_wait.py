"""Racy: each actor reads a shared total, busy-waits a millisecond on time.monotonic(), then writes it back.

The wait is a loop on the clock, no sleep and no lock: the other thread's read fits in it, and an update is lost.
"""

import time

from lab import Scenario, acceptable, actor, forbidden


def _spin(seconds: float) -> None:
    begun = time.monotonic()
    while time.monotonic() - begun < seconds:
        pass


class BusyWait(Scenario):
    source = "soundness suite: a busy-wait on the clock"
    line_modules = (__name__,)
    outcomes = (
        acceptable("both updates landed", total=2),
        forbidden("an update was lost across the wait", total=1),
    )

    def setup(self) -> None:
        self.total = 0

    @actor
    def a(self) -> None:
        n = self.total
        _spin(0.001)
        self.total = n + 1

    @actor
    def b(self) -> None:
        n = self.total
        _spin(0.001)
        self.total = n + 1

    def observe(self) -> dict[str, int]:
        return {"total": self.total}
