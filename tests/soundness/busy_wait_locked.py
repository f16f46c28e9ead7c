"""Correct twin of busy_wait: the read, the busy-wait and the write run under one threading.Lock."""

import threading
import time

from lab import Scenario, acceptable, actor, forbidden


def _spin(seconds: float) -> None:
    begun = time.monotonic()
    while time.monotonic() - begun < seconds:
        pass


class BusyWaitLocked(Scenario):
    source = "soundness suite: a busy-wait on the clock"
    line_modules = (__name__,)
    outcomes = (
        acceptable("both updates landed", total=2),
        forbidden("an update was lost across the wait", total=1),
    )

    def setup(self) -> None:
        self.total = 0
        self.guard = threading.Lock()

    @actor
    def a(self) -> None:
        with self.guard:
            n = self.total
            _spin(0.001)
            self.total = n + 1

    @actor
    def b(self) -> None:
        with self.guard:
            n = self.total
            _spin(0.001)
            self.total = n + 1

    def observe(self) -> dict[str, int]:
        return {"total": self.total}
