"""Racy: a sums a shared list in a for loop while b pops its head: mid-loop the pop makes the loop skip an item.

A loop reads its list at every iteration, not once when it starts: the pop can fall between two iterations.
"""

from lab import Scenario, acceptable, actor, forbidden


class LoopPop(Scenario):
    source = "soundness suite: a for loop over a shared list"
    line_modules = (__name__,)
    outcomes = (
        acceptable("b popped first", total=5),
        acceptable("a summed first", total=6),
        forbidden("b popped mid-loop: an item skipped", total=1),
        forbidden("b popped mid-loop: the second item skipped", total=4),
    )

    def setup(self) -> None:
        self.items = [1, 2, 3]
        self.total = -1

    @actor
    def a(self) -> None:
        total = 0
        for x in self.items:
            total += x
        self.total = total

    @actor
    def b(self) -> None:
        self.items.pop(0)

    def observe(self) -> dict[str, int]:
        return {"total": self.total}
