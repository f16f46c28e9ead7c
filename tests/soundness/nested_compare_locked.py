"""Correct twin of nested_compare: the comparison runs after the append (the actors hand over through a latch)."""

from lab import Scenario, acceptable, actor, forbidden


class NestedCompareLocked(Scenario):
    source = "soundness suite: a compare of nested lists"
    line_modules = (__name__,)
    outcomes = (
        acceptable("compared after the append", same=False),
        forbidden("compared before the append", same=True),
    )

    def setup(self) -> None:
        self.grid: list[list[int]] = [[]]
        self.same: bool | None = None
        self.appended = self.lab.latch("appended")

    @actor
    def a(self) -> None:
        self.grid[0].append(1)
        self.appended.count_down()

    @actor
    def b(self) -> None:
        self.appended.wait()
        self.same = self.grid == [[]]

    def observe(self) -> dict[str, object]:
        return {"same": self.same}
