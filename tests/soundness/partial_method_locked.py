"""Correct twin of partial_method: each check and its pop run under one lab lock."""

import functools

from lab import Scenario, acceptable, actor, forbidden


class PartialMethodLocked(Scenario):
    source = "soundness suite: a partial of a bound method"
    line_modules = (__name__,)
    outcomes = (
        acceptable("one of them popped the item", a="DONE", b="DONE"),
        forbidden("b popped an empty list", b="ERROR"),
        forbidden("a popped an empty list", a="ERROR"),
    )

    def setup(self) -> None:
        self.items = [1]
        self.take = functools.partial(self.items.pop, 0)
        self.guard = self.lab.lock("guard")

    @actor
    def a(self) -> None:
        with self.guard:
            if self.items:
                self.take()

    @actor
    def b(self) -> None:
        with self.guard:
            if self.items:
                self.items.pop()

    def observe(self) -> dict[str, int]:
        return {"left": len(self.items)}
