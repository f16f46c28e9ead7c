"""Racy: b's acquire(timeout=0.01) gives up while a sleeps holding the lock, and b's bump is skipped.

The attempt runs while a holds the lock, and whether it times out depends on a's sleep, which the clock entries
of both tell the explorer.
"""

import threading
import time

from lab import Scenario, acceptable, actor, forbidden


class TimedAcquire(Scenario):
    source = "soundness suite: a timed acquisition against a sleeping holder"
    line_modules = (__name__,)
    outcomes = (
        acceptable("both bumps landed", count=2),
        forbidden("b timed out and skipped its bump", count=1),
    )

    def setup(self) -> None:
        self.lock = threading.Lock()
        self.count = 0

    @actor
    def a(self) -> None:
        with self.lock:
            time.sleep(1.0)
            self.count += 1

    @actor
    def b(self) -> None:
        if self.lock.acquire(timeout=0.01):
            try:
                self.count += 1
            finally:
                self.lock.release()

    def observe(self) -> dict[str, int]:
        return {"count": self.count}
