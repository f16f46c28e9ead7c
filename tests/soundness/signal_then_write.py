"""Racy: b sets the event and only then writes the data that a reads once the event is set.

At probe granularity the set and the write are one step, and a cannot run before the set: the explorer never puts
a's read between them, which threads do. The atomicity check must call it INCOMPLETE, never PASS.
"""

import threading

from lab import Scenario, acceptable, actor, forbidden


class SignalThenWrite(Scenario):
    source = "soundness suite: a signal, then the write it should have published"
    line_modules = (__name__,)
    outcomes = (acceptable("a saw the data", seen=1), forbidden("a went on before b wrote the data", seen=0))

    def setup(self) -> None:
        self.published = threading.Event()
        self.data = 0
        self.seen = -1

    @actor
    def a(self) -> None:
        self.published.wait()
        self.seen = self.data

    @actor
    def b(self) -> None:
        self.published.set()
        self.data = 1

    def observe(self) -> dict[str, int]:
        return {"seen": self.seen}
