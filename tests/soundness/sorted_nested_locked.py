"""Correct twin of sorted_nested: the sort waits for the append (the actors hand over through a latch)."""

from lab import Scenario, acceptable, actor, forbidden


class SortedNestedLocked(Scenario):
    source = "soundness suite: a built-in that compares elements"
    line_modules = (__name__,)
    outcomes = (
        acceptable("sorted after the append", first=0),
        forbidden("sorted before the append", first=1),
    )

    def setup(self) -> None:
        self.rows: list[list[int]] = [[1, 5], [1]]
        self.first = -1
        self.appended = self.lab.latch("appended")

    @actor
    def a(self) -> None:
        self.rows[1].append(9)
        self.appended.count_down()

    @actor
    def b(self) -> None:
        self.appended.wait()
        ordered = sorted(self.rows)
        self.first = 0 if ordered[0] is self.rows[0] else 1

    def observe(self) -> dict[str, object]:
        return {"first": self.first}
