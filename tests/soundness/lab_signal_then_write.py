"""Racy: b sets a lab event and only then writes the data that a reads once the event is set."""

from lab import Scenario, acceptable, actor, forbidden


class LabSignalThenWrite(Scenario):
    source = "soundness suite: a lab signal, then the write it should have published"
    line_modules = (__name__,)
    outcomes = (acceptable("a saw the data", seen=1), forbidden("a went on before b wrote the data", seen=0))

    def setup(self) -> None:
        self.published = self.lab.event("published")
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
