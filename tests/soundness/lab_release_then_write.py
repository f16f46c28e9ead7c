"""Racy: b releases the lab lock a waits for and only then writes the data that a reads once it holds the lock.

A lab lock's release commutes with acquisitions for the explorer; for the atomicity check it is the write of the
lock it is, which lets the waiter in.
"""

from lab import Scenario, acceptable, actor, forbidden


class LabReleaseThenWrite(Scenario):
    source = "soundness suite: a lab lock release, then the write it should have published"
    line_modules = (__name__,)
    outcomes = (acceptable("a saw the data", seen=1), forbidden("a went on before b wrote the data", seen=0))

    def setup(self) -> None:
        self.guard = self.lab.lock("guard")
        self.holding = self.lab.event("b-holds-the-lock")
        self.data = 0
        self.seen = -1

    @actor
    def a(self) -> None:
        self.holding.wait()
        with self.guard:
            self.seen = self.data

    @actor
    def b(self) -> None:
        self.guard.acquire()
        self.holding.set()
        self.guard.release()
        self.data = 1

    def observe(self) -> dict[str, int]:
        return {"seen": self.seen}
