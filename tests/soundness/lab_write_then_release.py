"""Correct twin of lab_release_then_write: b writes the data, then releases the lab lock."""

from lab import Scenario, acceptable, actor, forbidden


class LabWriteThenRelease(Scenario):
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
        self.data = 1
        self.guard.release()

    def observe(self) -> dict[str, int]:
        return {"seen": self.seen}
