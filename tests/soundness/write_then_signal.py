"""Correct twin of signal_then_write: b writes the data, then sets the event."""

import threading

from lab import Scenario, acceptable, actor, forbidden


class WriteThenSignal(Scenario):
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
        self.data = 1
        self.published.set()

    def observe(self) -> dict[str, int]:
        return {"seen": self.seen}
