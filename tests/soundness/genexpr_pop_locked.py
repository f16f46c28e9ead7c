"""Correct twin of genexpr_pop: taking both items and the pop run under one lab lock."""

from lab import Scenario, acceptable, actor, forbidden


class GenexprPopLocked(Scenario):
    source = "soundness suite: a generator expression over a shared list"
    line_modules = (__name__,)
    outcomes = (
        acceptable("b popped first", got="20,30"),
        acceptable("a took both first", got="10,20"),
        forbidden("b popped between: the second item skipped", got="10,30"),
    )

    def setup(self) -> None:
        self.items = [1, 2, 3]
        self.got = ""
        self.guard = self.lab.lock("guard")

    @actor
    def a(self) -> None:
        with self.guard:
            tens = (x * 10 for x in self.items)
            first = next(tens)
            second = next(tens)
        self.got = f"{first},{second}"

    @actor
    def b(self) -> None:
        with self.guard:
            self.items.pop(0)

    def observe(self) -> dict[str, str]:
        return {"got": self.got}
