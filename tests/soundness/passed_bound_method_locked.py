"""Correct twin of passed_bound_method: the check and the append run under one lab lock."""

from lab import Scenario, acceptable, actor, forbidden


class PassedBoundMethodLocked(Scenario):
    source = "soundness suite: a bound method passed as an argument"
    line_modules = (__name__,)
    outcomes = (
        acceptable("exactly one item was appended", size=1),
        forbidden("both saw an empty list and appended", size=2),
    )

    def setup(self) -> None:
        self.items: list[str] = []
        self.guard = self.lab.lock("guard")

    @actor
    def a(self) -> None:
        with self.guard:
            if not self.items:
                list(map(self.items.append, ["a"]))

    @actor
    def b(self) -> None:
        with self.guard:
            if not self.items:
                self.items.append("b")

    def observe(self) -> dict[str, int]:
        return {"size": len(self.items)}
