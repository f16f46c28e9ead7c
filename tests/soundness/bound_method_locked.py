"""Correct twin of bound_method: the check and the push through bound methods run under one lab lock."""

from lab import Scenario, acceptable, actor, forbidden


class BoundMethodLocked(Scenario):
    source = "soundness suite: bound methods of a shared list"
    line_modules = (__name__,)
    outcomes = (
        acceptable("exactly one item was pushed", size=1),
        forbidden("both saw an empty list and pushed", size=2),
    )

    def setup(self) -> None:
        items: list[str] = []
        self.push = items.append
        self.size = items.__len__
        self.guard = self.lab.lock("guard")

    @actor
    def a(self) -> None:
        with self.guard:
            if self.size() == 0:
                self.push("a")

    @actor
    def b(self) -> None:
        with self.guard:
            if self.size() == 0:
                self.push("b")

    def observe(self) -> dict[str, int]:
        return {"size": self.size()}
