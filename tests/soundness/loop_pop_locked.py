"""Correct twin of loop_pop: the loop and the pop run under one lab lock."""

from lab import Scenario, acceptable, actor, forbidden


class LoopPopLocked(Scenario):
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
        self.guard = self.lab.lock("guard")

    @actor
    def a(self) -> None:
        total = 0
        with self.guard:
            for x in self.items:
                total += x
        self.total = total

    @actor
    def b(self) -> None:
        with self.guard:
            self.items.pop(0)

    def observe(self) -> dict[str, int]:
        return {"total": self.total}
