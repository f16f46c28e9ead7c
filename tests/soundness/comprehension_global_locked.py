"""Correct twin of comprehension_global: the read runs after the update (the actors hand over through a latch)."""

from lab import Scenario, acceptable, actor, forbidden

COUNT = 0


class ComprehensionGlobalLocked(Scenario):
    source = "soundness suite: a global read inside a comprehension"
    line_modules = (__name__,)
    outcomes = (
        acceptable("read after the update", seen=[1]),
        forbidden("read before the update", seen=[0]),
    )

    def setup(self) -> None:
        global COUNT
        COUNT = 0
        self.seen: list[int] = []
        self.updated = self.lab.latch("updated")

    @actor
    def a(self) -> None:
        self.updated.wait()
        self.seen = [COUNT for _ in (0,)]

    @actor
    def b(self) -> None:
        global COUNT
        COUNT = 1
        self.updated.count_down()

    def observe(self) -> dict[str, list[int]]:
        return {"seen": self.seen}
