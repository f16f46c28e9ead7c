"""Racy: b releases the lock a waits for and only then writes the data that a reads once it holds the lock."""

import threading

from lab import Scenario, acceptable, actor, forbidden


class ReleaseThenWrite(Scenario):
    source = "soundness suite: a release, then the write it should have published"
    line_modules = (__name__,)
    outcomes = (acceptable("a saw the data", seen=1), forbidden("a went on before b wrote the data", seen=0))

    def setup(self) -> None:
        self.gate = threading.Lock()
        self.gate.acquire()
        self.data = 0
        self.seen = -1

    @actor
    def a(self) -> None:
        self.gate.acquire()
        self.seen = self.data

    @actor
    def b(self) -> None:
        self.gate.release()
        self.data = 1

    def observe(self) -> dict[str, int]:
        return {"seen": self.seen}
